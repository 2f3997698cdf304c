/**
 * An owner signs in at the MCP authorization endpoint by proving presence on the hosted capture
 * screen (docs/decisions.md, D-242): a hosted `login`
 * session of the business the person names, bound to the pending authorization request and to
 * the browser that asked; once the screen identified an owner, that browser on that request signs
 * in with it, once.
 */

import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { sha256Hex } from "../lib/crypto";
import { newSessionRecord, screenUrl } from "../sessions/create";
import { sessionUuid } from "../sessions/tokens";
import type {} from "./rpc";

/** The screen has five minutes, as a hosted session by default. */
const SIGN_IN_SESSION_TTL_SECONDS = 300;

/** What a sign-in is bound to: the authorization request (its query) and the browser (its cookie's secret). */
export interface SignInBinding {
  request: string;
  browserSecret: string;
}

const bindingParams = async (binding: SignInBinding) => ({
  request_hash: await sha256Hex(binding.request),
  browser_hash: await sha256Hex(binding.browserSecret),
});

/**
 * Opens the hosted login session of `tenant` for this request and browser: the screen's URL and
 * the session id, or null when the business has no owner in that environment (nothing is opened).
 */
export async function startPresenceSignIn(deps: Deps, tenant: Tenant, binding: SignInBinding, serviceBaseUrl: string) {
  const { sessionToken, record } = await newSessionRecord(
    tenant,
    { action: "login", metadata: { purpose: "agent_sign_in" }, ttl_seconds: SIGN_IN_SESSION_TTL_SECONDS },
    deps.now,
  );
  const started = await rpc(deps.sql, "agent_sign_in_begin", { session: record, ...(await bindingParams(binding)) });
  if (!started.started) return null;
  return { url: screenUrl(serviceBaseUrl, sessionToken), sessionId: started.session.session_id };
}

/**
 * The owner the session identified, for this request and browser, once; or why not (`pending`:
 * the screen is not done yet, ask again).
 */
export async function finishPresenceSignIn(deps: Deps, sessionId: string, binding: SignInBinding) {
  const id = sessionUuid(sessionId);
  if (!id) return { signed_in: false as const, reason: "unknown" as const };
  return rpc(deps.sql, "agent_sign_in_finish", { session_id: id, ...(await bindingParams(binding)), now: deps.now.toISOString() });
}
