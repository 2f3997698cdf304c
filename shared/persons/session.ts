/**
 * A person signs in to their own page by proving presence, and holds a short session of their own
 * that belongs to no merchant (docs/decisions.md, D-465 and D-466).
 *
 * Until a passkey names the person (issue 27's device binding: a discoverable credential whose user
 * handle is the identity), the sign-in rides on a hosted `login` session of the merchant whose link
 * the person followed: the screen identifies the face among the persons who consented with that
 * merchant (face-identify's search, no search across merchants), and the pseudonym it answers leads
 * to the identity, which is the same at every merchant of the environment. The sign-in is bound to
 * the browser that started it and signs in once. A passkey sign-in will open the same session
 * (`proof: "passkey"`) from the identity its user handle names.
 */
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Environment, Tenant } from "../kernel/principal";
import { randomBase64Url, sha256Hex } from "../lib/crypto";
import { newSessionRecord, screenUrl } from "../sessions/create";
import { sessionUuid } from "../sessions/tokens";
import type { PersonSessionView } from "./rpc";

/** The capture screen has five minutes, as a hosted session by default. */
export const SIGN_IN_SCREEN_TTL_SECONDS = 300;
/** A person's session ends after ten minutes without a request (D-466). */
export const PERSON_SESSION_IDLE_SECONDS = 600;
/** …and thirty minutes after the sign-in, whatever the activity (D-466). */
export const PERSON_SESSION_TTL_SECONDS = 1800;

const PERSON_SESSION_TOKEN = /^pst_[A-Za-z0-9_-]{43}$/;

/** A person's session as an operation takes it: who, in which environment, until when. */
export interface PersonSession {
  sessionId: string;
  identityId: string;
  environment: Environment;
  expiresAt: string;
  idleExpiresAt: string;
  csrfHash: string;
}

/**
 * Opens the hosted login session of the merchant the person came from, bound to this browser: the
 * screen's URL and the session id. `404 not_found` for a merchant that does not exist.
 */
export async function startPersonSignIn(deps: Deps, tenant: Tenant, browserSecret: string, serviceBaseUrl: string) {
  const { sessionToken, record } = await newSessionRecord(
    tenant,
    { action: "login", metadata: { purpose: "person_sign_in" }, ttl_seconds: SIGN_IN_SCREEN_TTL_SECONDS },
    deps.now,
  );
  const started = await rpc(deps.sql, "person_sign_in_begin", { session: record, browser_hash: await sha256Hex(browserSecret) });
  if (!started.started) throw new ApiError("not_found");
  return { session_id: started.session.session_id, url: screenUrl(serviceBaseUrl, sessionToken), expires_at: started.session.expires_at };
}

/**
 * The person the hosted session identified, for the browser that started it, once: a new session
 * (its token for the cookie, its CSRF token for the page) or why not: `409 SIGN_IN_PENDING` while
 * the screen is not done, `401 SIGN_IN_FAILED` otherwise (refused, cancelled, used, stale, another
 * browser, unknown), with the reason.
 */
export async function finishPersonSignIn(deps: Deps, sessionId: string, browserSecret: string) {
  const id = sessionUuid(sessionId);
  if (!id) throw new ApiError("SIGN_IN_FAILED", { reason: "unknown" });
  const token = `pst_${randomBase64Url(32)}`;
  const csrfToken = randomBase64Url(32);
  const result = await rpc(deps.sql, "person_sign_in_finish", {
    session_id: id,
    browser_hash: await sha256Hex(browserSecret),
    now: deps.now.toISOString(),
    person_session: {
      id: crypto.randomUUID(),
      token_hash: await sha256Hex(token),
      csrf_hash: await sha256Hex(csrfToken),
      idle_seconds: PERSON_SESSION_IDLE_SECONDS,
      ttl_seconds: PERSON_SESSION_TTL_SECONDS,
    },
  });
  if (!result.signed_in) throw new ApiError(result.reason === "pending" ? "SIGN_IN_PENDING" : "SIGN_IN_FAILED", { reason: result.reason });
  return {
    token,
    answer: {
      signed_in: true as const,
      environment: result.environment,
      csrf_token: csrfToken,
      expires_at: result.expires_at,
      idle_expires_at: result.idle_expires_at,
    },
  };
}

/**
 * The person's session the cookie's token names, its idle timeout moved on; `401
 * PERSON_SESSION_REQUIRED` without a live one (none, unknown, signed out), `401
 * PERSON_SESSION_EXPIRED` past its idle or absolute end.
 */
export async function authenticatePersonSession(deps: Deps, token: string | undefined): Promise<PersonSession> {
  if (!token || !PERSON_SESSION_TOKEN.test(token)) throw new ApiError("PERSON_SESSION_REQUIRED");
  const found = await rpc(deps.sql, "person_session_touch", { token_hash: await sha256Hex(token), now: deps.now.toISOString() });
  if ("reason" in found) throw new ApiError(found.reason === "expired" ? "PERSON_SESSION_EXPIRED" : "PERSON_SESSION_REQUIRED");
  return sessionOf(found);
}

const sessionOf = (view: PersonSessionView): PersonSession => ({
  sessionId: view.session_id,
  identityId: view.identity_id,
  environment: view.environment,
  expiresAt: view.expires_at,
  idleExpiresAt: view.idle_expires_at,
  csrfHash: view.csrf_hash,
});

/** Signs the session out: its cookie authenticates nothing after. */
export async function endPersonSession(deps: Deps, session: PersonSession) {
  await rpc(deps.sql, "person_session_end", { session_id: session.sessionId, now: deps.now.toISOString() });
  return { signed_out: true as const };
}

/** What the page may show of the session: the environment and its two ends (never the identity id). */
export function sessionAnswer(session: PersonSession) {
  return { environment: session.environment, expires_at: session.expiresAt, idle_expires_at: session.idleExpiresAt };
}
