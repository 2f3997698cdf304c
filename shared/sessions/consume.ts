/**
 * hosted-session-consume (function API 4.13): the single-use session token is exchanged for the
 * session, the nonce of its one capture and the screen credential that completes or cancels it.
 * The hosted screen's boot exchanges it as the service; a merchant's own secret key may exchange
 * its own sessions (a screen of its own). Single use is the database's row lock: of racing
 * exchanges exactly one wins.
 */
import * as v from "valibot";
import type { ScreenAction } from "../contracts/hosted-screen";
import { issueDeviceChallenge } from "../devices/challenges";
import type { DeviceChallengePurpose } from "../devices/policy";
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
 * Exchanges the token once, as the service or as a merchant. `userHandle`: the user handle of the
 * registration options the caller serves with an enrolment's challenge (the screen's boot). A merchant reaches only its own sessions in its environment:
 * another merchant's token (or an unknown one) is `404 not_found` and stays unused. A token already
 * exchanged is `409 SESSION_ALREADY_CONSUMED`; an expired session `410 SESSION_EXPIRED`.
 */
export async function consumeSession(
  deps: Deps,
  exchanger: ServicePrincipal | Principal,
  sessionToken: string,
  options: { userHandle?: string } = {},
) {
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
  // The nonce is the device challenge of the session's capture (docs/devices.md), live while the
  // session is (at most the ten minutes a challenge may live): the person may read the screen a while
  // (docs/decisions.md, D-348).
  const tenant = { merchantId: exchanged.session.merchant_id, environment: exchanged.environment };
  const sessionSeconds = Math.floor((new Date(exchanged.session.expires_at).getTime() - deps.now.getTime()) / 1000);
  const ttlSeconds = Math.min(MAX_SCREEN_CHALLENGE_SECONDS, Math.max(1, sessionSeconds));
  // The boot serves a registration's options with the challenge: their user handle is issued with it (D-485).
  const purpose = screenDevicePurpose(exchanged.session.action as ScreenAction);
  await issueDeviceChallenge(deps, tenant, purpose, {
    challenge: captureNonce,
    ttlSeconds,
    ...(purpose === "enroll" && options.userHandle ? { userHandle: options.userHandle } : {}),
  });
  return { ...exchanged, capture_nonce: captureNonce, screen_token: screenToken };
}

/** The longest a screen's device challenge lives: the ten minutes private.device_challenges allows. */
const MAX_SCREEN_CHALLENGE_SECONDS = 600;

/** What the device signs a session's capture for, by the session's action or /v1 mode. */
export function screenDevicePurpose(action: ScreenAction): DeviceChallengePurpose {
  const purposes: Record<ScreenAction, DeviceChallengePurpose> = {
    enroll: "enroll",
    claim: "enroll",
    login: "login",
    recognise: "login",
    authorize: "payment",
    sign: "sign",
    verify: "verify",
    attribute: "attribute",
    mandate: "grant",
  };
  return purposes[action];
}
