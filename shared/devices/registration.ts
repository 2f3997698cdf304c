/**
 * Registering a device: the options the service gives the browser's navigator.credentials.create,
 * and the verification of what it answers (the ceremony's facts, the attestation of any format
 * @simplewebauthn/server knows), ending in a credential of the identity in this environment. The
 * WebAuthn challenge is assertionChallenge(issued challenge, descriptor digest), as for an
 * assertion: a device registered in the same ceremony as a capture (enrollment) covers that
 * capture's descriptor too.
 */
import { generateRegistrationOptions, verifyRegistrationResponse } from "@simplewebauthn/server";
import { decodeAttestationObject } from "@simplewebauthn/server/helpers";
import * as v from "valibot";
import { assertionChallenge } from "../contracts/device";
import { type RpcParams, rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { fromBase64Url, toHex } from "../lib/crypto";
import { attestationVerdictOf } from "./attestation";
import { checkCeremony, type RelyingParty, registrationResponseSchema } from "./ceremony";
import { consumeDeviceChallenge } from "./challenges";
import { type DeviceView, deviceView } from "./devices";
import { authenticatorTransports, type DeviceChallengePurpose, type DeviceRefused, refused } from "./policy";
import type {} from "./rpc";

/**
 * The public-key algorithms a device may register: ES256, EdDSA, RS256 (COSE -7, -8, -257), as
 * WebAuthn's own default list orders them; every one verifies with WebCrypto in workerd.
 */
export const SUPPORTED_ALGORITHMS = [-7, -8, -257];

/** How long the browser may take over the ceremony (ms): the issued challenge's own two minutes. */
const CEREMONY_TIMEOUT_MS = 120_000;

/**
 * The options of navigator.credentials.create (PublicKeyCredentialCreationOptionsJSON, for
 * @simplewebauthn/browser's startRegistration): a discoverable credential, user verification
 * required, direct attestation (the person's device may still give none), and the person's other
 * devices excluded so one authenticator is not registered twice.
 */
export function deviceRegistrationOptions(
  rp: RelyingParty,
  input: { challenge: string; descriptorDigest: string; userName: string; excludeCredentialIds?: readonly string[] },
) {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: input.userName,
    // The bytes, not the string: a string is taken as UTF-8 text, which would sign other bytes.
    challenge: fromBase64Url(assertionChallenge(input.challenge, input.descriptorDigest)),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: "direct",
    excludeCredentials: (input.excludeCredentialIds ?? []).map((id) => ({ id })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
    supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
  });
}

/** What registering a device takes: whose it is, the challenge and descriptor it covers, the browser's answer. */
export interface DeviceRegistration {
  identityId: string;
  purpose: DeviceChallengePurpose;
  challenge: string;
  descriptorDigest: string;
  response: unknown;
  rp: RelyingParty;
}

/** A registration that verified: the credential's facts, to be stored for an identity (device_credential_register). */
export type VerifiedCredential = Omit<RpcParams<"device_credential_register">, "environment" | "now" | "identity_id">;

/**
 * Verifies a registration (challenge consumed first, ceremony, attestation) without storing it: an
 * enrolment stores the credential in the transaction that creates its identity (identity_enroll).
 */
export async function verifyDeviceRegistration(
  deps: Deps,
  tenant: Tenant,
  input: Omit<DeviceRegistration, "identityId">,
): Promise<{ ok: true; credential: VerifiedCredential } | DeviceRefused> {
  const parsed = v.safeParse(registrationResponseSchema, input.response);
  if (!parsed.success) return refused("response_malformed");
  const response = parsed.output;
  const challengeRefused = await consumeDeviceChallenge(deps, tenant, input.purpose, input.challenge);
  if (challengeRefused) return challengeRefused;

  const expectedChallenge = assertionChallenge(input.challenge, input.descriptorDigest);
  let authData: Uint8Array<ArrayBuffer>;
  try {
    authData = decodeAttestationObject(fromBase64Url(response.response.attestationObject)).get("authData");
  } catch {
    return refused("response_malformed");
  }
  const facts = await checkCeremony("webauthn.create", response.response.clientDataJSON, authData, expectedChallenge, input.rp);
  if ("ok" in facts) return facts;

  let info: Awaited<ReturnType<typeof verifyRegistrationResponse>>["registrationInfo"];
  try {
    const verified = await verifyRegistrationResponse({
      response: response as Parameters<typeof verifyRegistrationResponse>[0]["response"],
      expectedChallenge,
      expectedOrigin: [...input.rp.origins],
      expectedRPID: input.rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    });
    info = verified.registrationInfo;
  } catch {
    return refused("attestation_invalid");
  }
  if (!info) return refused("attestation_invalid");
  const attestation = attestationVerdictOf(response.response.attestationObject);
  return {
    ok: true,
    credential: {
      device_id: crypto.randomUUID(),
      credential_id: info.credential.id,
      public_key_hex: toHex(info.credential.publicKey),
      sign_count: info.credential.counter,
      transports: (response.response.transports ?? []).filter((t) => (authenticatorTransports as readonly string[]).includes(t)),
      aaguid: info.aaguid,
      attestation_format: attestation.format,
      attestation_verdict: attestation.verdict,
      backup_eligible: facts.flags.be,
      backup_state: facts.flags.bs,
    },
  };
}

/**
 * Verifies a registration and records the credential for the identity in the tenant's environment.
 * The challenge is consumed first, so a failed registration cannot be retried with it.
 */
export async function registerDevice(
  deps: Deps,
  tenant: Tenant,
  input: DeviceRegistration,
): Promise<{ ok: true; device: DeviceView } | DeviceRefused> {
  const verified = await verifyDeviceRegistration(deps, tenant, input);
  if (!verified.ok) return verified;
  const registered = await rpc(deps.sql, "device_credential_register", {
    ...verified.credential,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    identity_id: input.identityId,
  });
  if (!registered.registered) return refused(registered.reason);
  return { ok: true, device: deviceView(registered.device) };
}
