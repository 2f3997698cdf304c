/**
 * hosted-session-consume (function API 4.13): the single-use session token is exchanged for the
 * session, the nonce of its one capture and the screen credential that completes or cancels it.
 * The hosted screen's boot exchanges it as the service; a merchant's own secret key may exchange
 * its own sessions (a screen of its own). Single use is the database's row lock: of racing
 * exchanges exactly one wins.
 */
import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Principal, ServicePrincipal } from "../kernel/principal";
import { jsonObject } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import type {} from "./rpc";
import { isSessionToken, newCaptureNonce, newScreenToken } from "./tokens";

/** `{session_token}`: a string; one without the token's form names no session (`404 not_found`). */
export const consumeSchema = v.pipe(jsonObject, v.strictObject({ session_token: v.pipe(v.string(), v.minLength(1), v.maxLength(256)) }));

/**
 * Exchanges the token once, as the service or as a merchant. A merchant reaches only its own sessions in its environment:
 * another merchant's token (or an unknown one) is `404 not_found` and stays unused. A token already
 * exchanged is `409 SESSION_ALREADY_CONSUMED`; an expired session `410 SESSION_EXPIRED`.
 */
export async function consumeSession(deps: Deps, exchanger: ServicePrincipal | Principal, sessionToken: string) {
  if (!isSessionToken(sessionToken)) throw new ApiError("not_found");
  const captureNonce = newCaptureNonce();
  const screenToken = newScreenToken();
  const exchanged = await rpc(deps.sql, "hosted_session_consume", {
    token_hash: await sha256Hex(sessionToken),
    now: deps.now.toISOString(),
    ...(exchanger.kind === "service"
      ? { opened_by: "service" as const }
      : { opened_by: "merchant" as const, merchant_id: exchanger.merchantId, environment: exchanger.environment }),
    capture_nonce: captureNonce,
    screen_token_hash: await sha256Hex(screenToken),
  });
  return { ...exchanged, capture_nonce: captureNonce, screen_token: screenToken };
}
