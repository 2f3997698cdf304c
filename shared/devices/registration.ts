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
import { assertionChallenge, DEVICE_CHALLENGE_BYTES } from "../contracts/device";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { fromBase64Url, toHex } from "../lib/crypto";
import { attestationVerdictOf } from "./attestation";
import { checkCeremony, type RelyingParty, registrationResponseSchema } from "./ceremony";
import { consumeDeviceChallenge } from "./challenges";
import { type DeviceView, deviceView } from "./devices";
import { jwkOfCoseKey, keyThumbprint } from "./keys";
import {
  authenticatorTransports,
  type DeviceChallengePurpose,
  type DeviceRefused,
  type DeviceRegisteredVia,
  deviceBindingOf,
  refused,
} from "./policy";
import type { PendingRegistration } from "./rpc";

/**
 * The public-key algorithms a device may register: ES256, EdDSA, RS256 (COSE -7, -8, -257), as
 * WebAuthn's own default list orders them; every one verifies with WebCrypto in workerd.
 */
export const SUPPORTED_ALGORITHMS = [-7, -8, -257];

/** Bytes of a user handle the service issues (WebAuthn allows 1 to 64; 32 random bytes name nobody). */
export const USER_HANDLE_BYTES = 32;

/** How long the browser may take over the ceremony (ms): the issued challenge's own two minutes. */
const CEREMONY_TIMEOUT_MS = 120_000;

/**
 * The options of navigator.credentials.create (PublicKeyCredentialCreationOptionsJSON, for
 * @simplewebauthn/browser's startRegistration) but the challenge: a discoverable credential
 * (residentKey required), user verification required, the algorithms the service verifies, direct
 * attestation (the person's device may still give none), credProps asked (the browser says whether
 * the key is discoverable), and the person's other devices excluded so one authenticator is not
 * registered twice. `userHandle` is user.id (base64url; random when not given): the service records
 * it with the challenge it issues these options with (issueDeviceChallenge), and the credential keeps it.
 * The hosted screen's boot serves these (docs/devices.md, "Registration options"): the page adds the
 * challenge, assertionChallenge(capture nonce, descriptor digest), once the capture is made.
 */
export async function registrationOptions(
  rp: RelyingParty,
  input: { userName: string; userHandle?: string; excludeCredentialIds?: readonly string[] },
) {
  const { challenge: _placeholder, ...options } = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: input.userName,
    userDisplayName: input.userName,
    ...(input.userHandle ? { userID: fromBase64Url(input.userHandle) } : {}),
    challenge: new Uint8Array(DEVICE_CHALLENGE_BYTES),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: "direct",
    excludeCredentials: (input.excludeCredentialIds ?? []).map((id) => ({ id })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
    supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    extensions: { credProps: true },
  });
  return options;
}

/** Registration options without their challenge, as the service serves them. */
export type ServedRegistrationOptions = Awaited<ReturnType<typeof registrationOptions>>;

/**
 * The registration options of a ceremony over a capture (or another context's digest): the served
 * options with the challenge assertionChallenge(issued challenge, descriptor digest).
 */
export async function deviceRegistrationOptions(
  rp: RelyingParty,
  input: {
    challenge: string;
    descriptorDigest: string;
    userName: string;
    userHandle?: string;
    excludeCredentialIds?: readonly string[];
  },
) {
  return { ...(await registrationOptions(rp, input)), challenge: assertionChallenge(input.challenge, input.descriptorDigest) };
}

/** What verifying a registration takes: the challenge and descriptor it covers, the browser's answer. */
export interface RegistrationCeremony {
  purpose: DeviceChallengePurpose;
  challenge: string;
  descriptorDigest: string;
  response: unknown;
  rp: RelyingParty;
}

/** What registering a device takes: whose it is, and the ceremony. */
export interface DeviceRegistration extends RegistrationCeremony {
  identityId: string;
}

/**
 * Verifies a registration ceremony without giving the credential to anyone: the challenge (consumed
 * first, so a failed registration cannot be retried with it), the client data and authenticator
 * data, the attestation. Answers the facts a credential is stored with (storeRegistration), or why not.
 */
export async function verifyRegistration(
  deps: Deps,
  tenant: Tenant,
  input: RegistrationCeremony,
): Promise<{ ok: true; registration: PendingRegistration } | DeviceRefused> {
  const parsed = v.safeParse(registrationResponseSchema, input.response);
  if (!parsed.success) return refused("response_malformed");
  const response = parsed.output;
  const consumed = await consumeDeviceChallenge(deps, tenant, input.purpose, input.challenge);
  if (!consumed.ok) return consumed;

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
  const attestation = await attestationVerdictOf(response.response.attestationObject, input.rp.attestationRoots);
  let thumbprint: string;
  try {
    thumbprint = await keyThumbprint(jwkOfCoseKey(info.credential.publicKey));
  } catch {
    return refused("attestation_invalid");
  }
  return {
    ok: true,
    registration: {
      credential_id: info.credential.id,
      public_key_hex: toHex(info.credential.publicKey),
      sign_count: info.credential.counter,
      transports: (response.response.transports ?? []).filter((t) => (authenticatorTransports as readonly string[]).includes(t)),
      aaguid: info.aaguid,
      attestation_format: attestation.format,
      attestation_verdict: attestation.verdict,
      backup_eligible: facts.flags.be,
      backup_state: facts.flags.bs,
      key_thumbprint: thumbprint,
      // The handle the served options gave the authenticator (user.id): its assertions will answer it.
      user_handle: consumed.userHandle,
    },
  };
}

/**
 * Stores a verified registration as a credential of `identityId` in the tenant's environment, with
 * `device.registered` to the merchants holding the person. `via` says how it came (policy.ts); with
 * `documentLds` (a re-proof by document) only while that document is on record for the person.
 */
export async function storeRegistration(
  deps: Deps,
  tenant: Tenant,
  identityId: string,
  registration: PendingRegistration,
  options: { via?: DeviceRegisteredVia; documentLds?: string } = {},
): Promise<{ ok: true; device: DeviceView } | DeviceRefused | { ok: false; reason: "document_not_on_record" }> {
  const registered = await rpc(deps.sql, "device_credential_register", {
    ...registration,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    identity_id: identityId,
    device_id: crypto.randomUUID(),
    device_binding: deviceBindingOf(registration),
    ...(options.via ? { registered_via: options.via } : {}),
    ...(options.documentLds ? { document_lds_sha256: options.documentLds } : {}),
  });
  if (!registered.registered) {
    return registered.reason === "document_not_on_record" ? { ok: false, reason: registered.reason } : refused(registered.reason);
  }
  return { ok: true, device: deviceView(registered.device) };
}

/**
 * Verifies a registration and records the credential for the identity in the tenant's environment
 * (as the ceremony of an enrollment does). The challenge is consumed first, so a failed
 * registration cannot be retried with it.
 */
export async function registerDevice(
  deps: Deps,
  tenant: Tenant,
  input: DeviceRegistration,
): Promise<{ ok: true; device: DeviceView } | DeviceRefused> {
  const verified = await verifyRegistration(deps, tenant, input);
  if (!verified.ok) return verified;
  const stored = await storeRegistration(deps, tenant, input.identityId, verified.registration);
  // Only a re-proof by document names a document, so only it can be refused for one.
  if (!stored.ok && stored.reason === "document_not_on_record") throw new Error("no document was named");
  return stored;
}
