/**
 * The passkey sign-in to a person's own page (docs/decisions.md, D-601 and D-602; D-465's "with
 * device binding"). The service issues a single-use challenge to one browser; the browser asks its
 * authenticator for a discoverable credential of the service's relying party (no allowCredentials)
 * and sends the assertion. The credential names the person: it must be registered and unrevoked in
 * the environment, and the assertion's user handle must be the one the credential was registered
 * with (the service issued it). The signature, user verification and counter are judged as a
 * capture's are (shared/devices/assertion.ts). Then the capture confirms the face: a hosted login
 * session for that person alone (its facetoken is their pseudonym at a merchant that holds them, so
 * another face is refused), bound to the browser and the passkey, which the ordinary finish turns
 * into the person's session (`proof: "passkey"`). No merchant's link and no search across every
 * merchant's persons.
 *
 * Lockout: five refused sign-ins with one credential within fifteen minutes (assertions refused
 * once the credential is known, and faces refused on its screen) lock its sign-in for fifteen
 * minutes: `429 RATE_LIMITED` with `retry_after_seconds`, nothing verified. The minute cron deletes
 * challenges and refusals a day after they stopped counting (./sweep.ts, D-610).
 */
import * as v from "valibot";
import { DEVICE_CHALLENGE_BYTES } from "../contracts/device";
import { assertionOptions, verifySignature } from "../devices/assertion";
import { unauthorizedDevice } from "../devices/capture";
import { assertionResponseSchema, type RelyingParty } from "../devices/ceremony";
import { DEVICE_CHALLENGE_TTL_SECONDS, type DeviceRefusal } from "../devices/policy";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Environment } from "../kernel/principal";
import { jsonObject } from "../kernel/validation";
import { randomBase64Url, sha256Hex } from "../lib/crypto";
import { newSessionRecord, screenUrl } from "../sessions/create";
import { SIGN_IN_SCREEN_TTL_SECONDS } from "./session";

export const passkeyOptionsSchema = v.pipe(jsonObject, v.strictObject({ environment: v.picklist(["test", "live"]) }));

/** The assertion's body: the environment of the options, the challenge they carried, and the browser's answer. */
export const passkeySignInSchema = v.pipe(
  jsonObject,
  v.strictObject({
    environment: v.picklist(["test", "live"]),
    challenge: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/, "a challenge as issued")),
    assertion: v.unknown(),
  }),
);

/**
 * The options of navigator.credentials.get for the sign-in, challenge included (issued now for this
 * browser, single use, two minutes): user verification required, no allowCredentials.
 */
export async function startPasskeyOptions(deps: Deps, environment: Environment, browserSecret: string, rp: RelyingParty) {
  const challenge = randomBase64Url(DEVICE_CHALLENGE_BYTES);
  const { expires_at } = await rpc(deps.sql, "person_passkey_challenge_issue", {
    environment,
    challenge_hash: await sha256Hex(challenge),
    browser_hash: await sha256Hex(browserSecret),
    ttl_seconds: DEVICE_CHALLENGE_TTL_SECONDS,
    now: deps.now.toISOString(),
  });
  return { environment, options: { ...(await assertionOptions(rp)), challenge }, expires_at: new Date(expires_at).toISOString() };
}

/**
 * Verifies the assertion and opens the capture screen that confirms the named person's face, in
 * POST /me/sign-in's shape (the finish is the same). `403 UNAUTHORIZED_DEVICE` with the device
 * refusal's reason; `429 RATE_LIMITED` while the credential's sign-in is locked; `401
 * SIGN_IN_FAILED` (`unreachable`) when no merchant holds the person under a standing consent.
 */
export async function startPasskeySignIn(
  deps: Deps,
  body: v.InferOutput<typeof passkeySignInSchema>,
  browserSecret: string,
  rp: RelyingParty,
  serviceBaseUrl: string,
) {
  const parsed = v.safeParse(assertionResponseSchema, body.assertion);
  if (!parsed.success) throw unauthorizedDevice("response_malformed");
  const response = parsed.output;
  const { environment } = body;
  const attempt = await rpc(deps.sql, "person_passkey_attempt", {
    environment,
    challenge_hash: await sha256Hex(body.challenge),
    browser_hash: await sha256Hex(browserSecret),
    credential_id: response.id,
    now: deps.now.toISOString(),
  });
  if (attempt.locked_until) throw locked(attempt.locked_until, deps.now);
  if (attempt.challenge !== "consumed") {
    throw unauthorizedDevice(
      attempt.challenge === "used" ? "challenge_used" : attempt.challenge === "expired" ? "challenge_expired" : "challenge_unknown",
    );
  }
  const { device } = attempt;
  if (!device) throw unauthorizedDevice("credential_unknown");
  const refuse = async (reason: DeviceRefusal) => {
    const { locked_until } = await rpc(deps.sql, "person_passkey_refused", {
      environment,
      credential_id: response.id,
      reason,
      now: deps.now.toISOString(),
    });
    return locked_until ? locked(locked_until, deps.now) : unauthorizedDevice(reason);
  };
  if (device.revoked_at !== null && new Date(device.revoked_at) <= deps.now) throw unauthorizedDevice("credential_revoked");
  // The user handle names the person: the one the service issued with the credential's registration.
  if (!device.user_handle || response.response.userHandle !== device.user_handle) throw await refuse("user_handle_mismatch");
  const verified = await verifySignature(deps, environment, device, response, body.challenge, rp);
  if (!verified.ok) throw await refuse(verified.reason);
  if (!attempt.merchant_id) throw new ApiError("SIGN_IN_FAILED", { reason: "unreachable" });

  const { sessionToken, record } = await newSessionRecord(
    { merchantId: attempt.merchant_id, environment },
    { action: "login", metadata: { purpose: "person_sign_in" }, ttl_seconds: SIGN_IN_SCREEN_TTL_SECONDS },
    deps.now,
  );
  const started = await rpc(deps.sql, "person_passkey_sign_in_begin", {
    session: record,
    browser_hash: await sha256Hex(browserSecret),
    identity_id: device.identity_id,
    device_id: device.device_id,
  });
  if (!started.started) throw new ApiError("SIGN_IN_FAILED", { reason: "unreachable" });
  return { session_id: started.session.session_id, url: screenUrl(serviceBaseUrl, sessionToken), expires_at: started.session.expires_at };
}

/** `429 RATE_LIMITED` until the credential's lock ends. */
function locked(until: string, now: Date): ApiError {
  return new ApiError("RATE_LIMITED", { retry_after_seconds: Math.max(1, Math.ceil((Date.parse(until) - now.getTime()) / 1000)) });
}
