/**
 * The merchant's console: an owner signs in by proving presence, and holds a console session tied
 * to one merchant and environment (docs/decisions.md, D-620 and D-621).
 *
 * The sign-in rides on a hosted `login` session of the merchant and environment the owner chose,
 * as the MCP owner sign-in does (D-242): the screen identifies the face among that merchant's
 * persons, and the pseudonym it answers must be an owner's there. The sign-in is bound to the
 * browser that started it and signs in once. The session acts as the owner: every management
 * operation it calls names the owner's subject_ref as the actor, with every management scope.
 */
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { randomBase64Url, sha256Hex, toBase64Url } from "../lib/crypto";
import { newSessionRecord, screenUrl } from "../sessions/create";
import { sessionUuid } from "../sessions/tokens";
import { keyScopes, type ManagementCaller } from "./caller";
import type { OwnerSessionView } from "./rpc";

/** The capture screen has five minutes, as a hosted session by default. */
export const OWNER_SIGN_IN_SCREEN_TTL_SECONDS = 300;
/** A console session ends after fifteen minutes without a request (D-621)… */
export const OWNER_SESSION_IDLE_SECONDS = 900;
/** …and eight hours after the sign-in, whatever the activity (D-621). */
export const OWNER_SESSION_TTL_SECONDS = 8 * 3600;

const OWNER_SESSION_TOKEN = /^ost_[A-Za-z0-9_-]{43}$/;

/** An owner's console session as an operation takes it. */
export interface OwnerSession extends Tenant {
  sessionId: string;
  merchantName: string;
  identityId: string;
  subjectRef: string;
  expiresAt: string;
  idleExpiresAt: string;
  csrfHash: string;
}

/**
 * The session's CSRF token, derived from its token (D-621): the server writes it into every form it
 * renders without keeping it, and stores only its SHA-256 to compare with. Whoever can read it could
 * already read the cookie's token, which no script and no other site can.
 */
export async function csrfTokenOf(sessionToken: string): Promise<string> {
  return toBase64Url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`console-csrf:${sessionToken}`)));
}

/**
 * Opens the hosted login session of the merchant and environment chosen, bound to this browser: the
 * screen's URL and the sign-in's id. `404 not_found` for a merchant with no owner in that
 * environment, as for one that does not exist (nothing is opened, nothing is said of which).
 */
export async function startOwnerSignIn(deps: Deps, tenant: Tenant, browserSecret: string, serviceBaseUrl: string) {
  const { sessionToken, record } = await newSessionRecord(
    tenant,
    { action: "login", metadata: { purpose: "console_sign_in" }, ttl_seconds: OWNER_SIGN_IN_SCREEN_TTL_SECONDS },
    deps.now,
  );
  const started = await rpc(deps.sql, "owner_sign_in_begin", { session: record, browser_hash: await sha256Hex(browserSecret) });
  if (!started.started) throw new ApiError("not_found");
  return { session_id: started.session.session_id, url: screenUrl(serviceBaseUrl, sessionToken), expires_at: started.session.expires_at };
}

/**
 * The owner the hosted session identified, for the browser that started it, once: a console
 * session (its token for the cookie) or why not: `409 SIGN_IN_PENDING` while the screen is not done,
 * `401 SIGN_IN_FAILED` otherwise, with the reason (refused, used, stale, unknown, not_owner).
 */
export async function finishOwnerSignIn(deps: Deps, sessionId: string, browserSecret: string, ip: string | null) {
  const id = sessionUuid(sessionId);
  if (!id) throw new ApiError("SIGN_IN_FAILED", { reason: "unknown" });
  const token = `ost_${randomBase64Url(32)}`;
  const result = await rpc(deps.sql, "owner_sign_in_finish", {
    session_id: id,
    browser_hash: await sha256Hex(browserSecret),
    now: deps.now.toISOString(),
    ip,
    owner_session: {
      id: crypto.randomUUID(),
      token_hash: await sha256Hex(token),
      csrf_hash: await sha256Hex(await csrfTokenOf(token)),
      idle_seconds: OWNER_SESSION_IDLE_SECONDS,
      ttl_seconds: OWNER_SESSION_TTL_SECONDS,
    },
  });
  if (!result.signed_in) throw new ApiError(result.reason === "pending" ? "SIGN_IN_PENDING" : "SIGN_IN_FAILED", { reason: result.reason });
  return { token, session: sessionOf(result.session) };
}

/**
 * The console session the cookie's token names, its idle timeout moved on; `401
 * OWNER_SESSION_REQUIRED` without a live one (none, unknown, signed out, no longer an owner), `401
 * OWNER_SESSION_EXPIRED` past its idle or absolute end.
 */
export async function authenticateOwnerSession(deps: Deps, token: string | undefined): Promise<OwnerSession> {
  if (!token || !OWNER_SESSION_TOKEN.test(token)) throw new ApiError("OWNER_SESSION_REQUIRED");
  const found = await rpc(deps.sql, "owner_session_touch", { token_hash: await sha256Hex(token), now: deps.now.toISOString() });
  if ("reason" in found) throw new ApiError(found.reason === "expired" ? "OWNER_SESSION_EXPIRED" : "OWNER_SESSION_REQUIRED");
  return sessionOf(found.session);
}

const sessionOf = (view: OwnerSessionView): OwnerSession => ({
  sessionId: view.session_id,
  merchantId: view.merchant_id,
  merchantName: view.merchant_name,
  environment: view.environment,
  identityId: view.identity_id,
  subjectRef: view.subject_ref,
  expiresAt: view.expires_at,
  idleExpiresAt: view.idle_expires_at,
  csrfHash: view.csrf_hash,
});

/** Signs this session out, or every console session of its owner: their cookies authenticate nothing after. */
export async function endOwnerSession(deps: Deps, session: OwnerSession, everywhere: boolean, ip: string | null) {
  return rpc(deps.sql, "owner_session_end", { session_id: session.sessionId, now: deps.now.toISOString(), everywhere, ip });
}

/** Every merchant the owner owns, for the switcher (each switch is a sign-in of its own: D-622). */
export async function ownerMerchants(deps: Deps, session: OwnerSession) {
  return (await rpc(deps.sql, "owner_merchants", { identity_id: session.identityId })).data;
}

/** The session as a caller of the management operations: its merchant, the owner as the actor, every scope. */
export function ownerCaller(session: OwnerSession, ip: string | null): ManagementCaller {
  return {
    merchantId: session.merchantId,
    environment: session.environment,
    scopes: keyScopes,
    actor: { kind: "owner", id: session.subjectRef, ip },
  };
}
