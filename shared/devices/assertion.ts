/**
 * Verifying the device's signature over a capture: the assertion's challenge must be
 * assertionChallenge(issued challenge, descriptor digest) (shared/contracts/device.ts), so a
 * signature counts for exactly the numbers sent, once, for the merchant, environment and purpose
 * the challenge was issued for. The credential must be a registered, unrevoked device of the
 * identity the face identified, in this environment; origin, RP ID, user presence and user
 * verification are checked before the signature, the counter after it, under the credential's lock.
 */
import { generateAuthenticationOptions, verifyAuthenticationResponse } from "@simplewebauthn/server";
import * as v from "valibot";
import { assertionChallenge, DEVICE_CHALLENGE_BYTES, type DeviceBinding } from "../contracts/device";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { fromBase64Url } from "../lib/crypto";
import { type AssertionResponse, assertionResponseSchema, checkCeremony, type RelyingParty } from "./ceremony";
import { consumeDeviceChallenge } from "./challenges";
import { type DeviceChallengePurpose, type DeviceRefused, deviceBindingOf, deviceRef, refused } from "./policy";
import type { DeviceCredentialRow } from "./rpc";

/**
 * The options of navigator.credentials.get (PublicKeyCredentialRequestOptionsJSON, for
 * @simplewebauthn/browser's startAuthentication) but the challenge: user verification required, and
 * the person's devices when they are known (otherwise the authenticator offers its discoverable
 * credentials for the RP). The hosted screen's boot serves these; the page adds the challenge.
 */
export async function assertionOptions(rp: RelyingParty, input: { allowCredentialIds?: readonly string[] } = {}) {
  const { challenge: _placeholder, ...options } = await generateAuthenticationOptions({
    rpID: rp.id,
    challenge: new Uint8Array(DEVICE_CHALLENGE_BYTES),
    timeout: 120_000,
    userVerification: "required",
    allowCredentials: (input.allowCredentialIds ?? []).map((id) => ({ id })),
  });
  return options;
}

/** Assertion options without their challenge, as the service serves them. */
export type ServedAssertionOptions = Awaited<ReturnType<typeof assertionOptions>>;

/** The assertion options of a capture's ceremony: the served options with assertionChallenge(issued challenge, descriptor digest). */
export async function deviceAssertionOptions(
  rp: RelyingParty,
  input: { challenge: string; descriptorDigest: string; allowCredentialIds?: readonly string[] },
) {
  return { ...(await assertionOptions(rp, input)), challenge: assertionChallenge(input.challenge, input.descriptorDigest) };
}

/** What verifying a capture's device signature takes. */
export interface DeviceAssertion {
  /** The identity the capture's face identified: the credential must be one of theirs. */
  identityId: string;
  purpose: DeviceChallengePurpose;
  /** The issued challenge (the descriptor's capture_nonce). */
  challenge: string;
  /** SHA-256 hex of the canonical descriptor the server received (descriptorDigest). */
  descriptorDigest: string;
  response: unknown;
  rp: RelyingParty;
}

/** A signature that counts: which device, and what binding it gives the capture. */
export interface DeviceAccepted {
  ok: true;
  device_id: string;
  device_binding: Exclude<DeviceBinding, "none">;
  sign_count: number;
  backup_state: boolean;
}

/**
 * Verifies a capture's device assertion. The challenge is consumed first, so one challenge is tried
 * once whatever the outcome; a refusal names why (policy.ts, deviceRefusals).
 */
export async function verifyDeviceAssertion(deps: Deps, tenant: Tenant, input: DeviceAssertion): Promise<DeviceAccepted | DeviceRefused> {
  const parsed = v.safeParse(assertionResponseSchema, input.response);
  if (!parsed.success) return refused("response_malformed");
  const response = parsed.output;
  const consumed = await consumeDeviceChallenge(deps, tenant, input.purpose, input.challenge);
  if (!consumed.ok) return consumed;

  // Looked up in the tenant's environment only: a credential registered in the other one is unknown here.
  const { device } = await rpc(deps.sql, "device_credential_get", { environment: tenant.environment, credential_id: response.id });
  if (!device) return refused("credential_unknown");
  if (device.identity_id !== input.identityId) return refused("credential_other_identity");
  if (device.revoked_at !== null && new Date(device.revoked_at) <= deps.now) return refused("credential_revoked");

  return verifySignature(deps, tenant.environment, device, response, assertionChallenge(input.challenge, input.descriptorDigest), input.rp);
}

/**
 * The signature half of an assertion's verification, once its challenge was consumed and its
 * credential found (a registered device, unrevoked): the ceremony's facts (type, challenge, origin,
 * RP ID, user presence and verification), then the signature with the stored key, then the counter
 * under the credential's lock. The capture's verification above and the person's passkey sign-in
 * (shared/persons/passkey.ts) both end here.
 */
export async function verifySignature(
  deps: Deps,
  environment: Tenant["environment"],
  device: DeviceCredentialRow,
  response: AssertionResponse,
  expectedChallenge: string,
  rp: RelyingParty,
): Promise<DeviceAccepted | DeviceRefused> {
  const facts = await checkCeremony(
    "webauthn.get",
    response.response.clientDataJSON,
    fromBase64Url(response.response.authenticatorData),
    expectedChallenge,
    rp,
  );
  if ("ok" in facts) return facts;

  let verified = false;
  try {
    const result = await verifyAuthenticationResponse({
      response: response as Parameters<typeof verifyAuthenticationResponse>[0]["response"],
      expectedChallenge,
      expectedOrigin: [...rp.origins],
      expectedRPID: rp.id,
      requireUserVerification: true,
      // The counter is judged by device_credential_use, under the credential's row lock, where a
      // regression is also recorded: the library is given 0 so it never refuses on it first.
      credential: { id: device.credential_id, publicKey: hexBytes(device.public_key_hex), counter: 0 },
    });
    verified = result.verified;
  } catch {
    verified = false;
  }
  if (!verified) return refused("signature_invalid");

  const used = await rpc(deps.sql, "device_credential_use", {
    environment,
    now: deps.now.toISOString(),
    device_id: device.device_id,
    identity_id: device.identity_id,
    sign_count: facts.counter,
    backup_state: facts.flags.bs,
  });
  if (used.outcome === "regressed") return refused("sign_count_regressed");
  if (used.outcome !== "used") return refused(used.outcome === "revoked" ? "credential_revoked" : "credential_unknown");
  return {
    ok: true,
    device_id: deviceRef(device.device_id),
    device_binding: deviceBindingOf(device),
    sign_count: used.sign_count,
    backup_state: facts.flags.bs,
  };
}

/** Hex as bytes (the stored COSE key). */
function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}
