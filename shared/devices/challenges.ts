/**
 * Device challenges: the service issues one for a capture that must count in live mode (single
 * use, two minutes, bound to the merchant, environment and purpose), the device signs it together
 * with the descriptor (shared/contracts/device.ts#assertionChallenge), and the verification consumes
 * it once, whatever it then concludes. Only the challenge's SHA-256 is stored.
 */
import * as v from "valibot";
import { DEVICE_CHALLENGE_BYTES } from "../contracts/device";
import { described } from "../kernel/answers";
import type { Statements } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { randomBase64Url, sha256Hex } from "../lib/crypto";
import { DEVICE_CHALLENGE_TTL_SECONDS, type DeviceChallengePurpose, type DeviceRefused, deviceChallengePurposes, refused } from "./policy";
import type {} from "./rpc";

/** device-challenge's body: what the capture the challenge will sign is for. */
export const deviceChallengeSchema = v.object({ purpose: v.picklist(deviceChallengePurposes) });

/** An issued challenge: the value the device signs (and the descriptor's capture_nonce), shown once. */
export interface IssuedDeviceChallenge {
  challenge: string;
  purpose: DeviceChallengePurpose;
  expires_at: string;
  ttl_seconds: number;
}

/**
 * Issues a challenge for `purpose` to the tenant, live for two minutes from `deps.now`. A hosted
 * session's boot issues its capture nonce as the challenge (`challenge`), live as long as the session
 * (`ttlSeconds`): the person may read the screen for longer than two minutes; and with it the
 * options of a registration, whose user handle (`userHandle`) is recorded with the challenge.
 */
export async function issueDeviceChallenge(
  deps: Deps,
  tenant: Tenant,
  purpose: DeviceChallengePurpose,
  options: { challenge?: string; ttlSeconds?: number; userHandle?: string } = {},
): Promise<IssuedDeviceChallenge> {
  const challenge = options.challenge ?? randomBase64Url(DEVICE_CHALLENGE_BYTES);
  const ttlSeconds = options.ttlSeconds ?? DEVICE_CHALLENGE_TTL_SECONDS;
  const { expires_at } = await rpc(deps.sql, "device_challenge_issue", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    purpose,
    challenge_hash: await sha256Hex(challenge),
    ttl_seconds: ttlSeconds,
    ...(options.userHandle ? { user_handle: options.userHandle } : {}),
  });
  return { challenge, purpose, expires_at: new Date(expires_at).toISOString(), ttl_seconds: ttlSeconds };
}

/**
 * Takes the challenge once for the tenant and purpose it was issued for, with the user handle of
 * the registration options issued with it (null when none were), else why not (another merchant's,
 * environment's or purpose's challenge is unknown to this one).
 */
export async function consumeDeviceChallenge(
  deps: Deps,
  tenant: Tenant,
  purpose: DeviceChallengePurpose,
  challenge: string,
): Promise<DeviceRefused | { ok: true; userHandle: string | null }> {
  const consumed = await rpc(deps.sql, "device_challenge_consume", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    purpose,
    challenge_hash: await sha256Hex(challenge),
  });
  const { outcome } = consumed;
  if (outcome === "consumed") return { ok: true, userHandle: consumed.user_handle };
  return closedChallenge(outcome);
}

/** The refusal of a challenge that is not open: used, expired, or unknown to the one asking. */
function closedChallenge(outcome: "unknown" | "used" | "expired"): DeviceRefused {
  return refused(outcome === "used" ? "challenge_used" : outcome === "expired" ? "challenge_expired" : "challenge_unknown");
}

/**
 * The user handle of registration options built for a challenge issued without them (device-add's
 * options): `userHandle` is recorded with the open challenge unless one was already, and the
 * recorded one is answered, so the registration made over the challenge keeps it (as the hosted
 * screen's boot records its own); a challenge that is not open is refused as consumption would be.
 */
export async function recordUserHandle(
  deps: Deps,
  tenant: Tenant,
  purpose: DeviceChallengePurpose,
  challenge: string,
  userHandle: string,
): Promise<DeviceRefused | { ok: true; userHandle: string }> {
  const recorded = await rpc(deps.sql, "device_challenge_user_handle", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    purpose,
    challenge_hash: await sha256Hex(challenge),
    user_handle: userHandle,
  });
  return recorded.outcome === "open" ? { ok: true, userHandle: recorded.user_handle } : closedChallenge(recorded.outcome);
}

/**
 * The minute cron's sweep: deletes the challenges that expired more than a day before `at` (none can
 * count any more). Answers how many.
 */
export async function sweepDeviceChallenges(sql: Statements, at: Date): Promise<number> {
  return (await rpc(sql, "device_challenges_sweep", { now: at.toISOString() })).deleted;
}

/** device-challenge's answer. */
export const deviceChallengeAnswerSchema = v.object({
  challenge: described(
    v.string(),
    "43 characters of base64url, shown once: the descriptor's capture_nonce, and the first half of assertionChallenge.",
  ),
  purpose: described(v.picklist(deviceChallengePurposes), "What the signed capture is for, as asked."),
  expires_at: described(v.pipe(v.string(), v.isoTimestamp()), "After this instant the challenge is refused."),
  ttl_seconds: described(v.literal(DEVICE_CHALLENGE_TTL_SECONDS), "How long it lives: two minutes."),
});
