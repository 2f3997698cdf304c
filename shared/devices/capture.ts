/**
 * The device's part of a capture that counts (docs/devices.md, "Where live mode requires a device"):
 * in live mode every such capture carries a WebAuthn assertion (or, for a new person's enrolment, a
 * registration) over assertionChallenge(capture_nonce, descriptorDigest(descriptor)), from a
 * registered, unrevoked device of the person the capture is for, over a challenge the service issued
 * for the merchant, environment and purpose. Anything else is `403 UNAUTHORIZED_DEVICE` with the
 * refusal's `reason`, thrown before the capture is recorded. In the sandbox the device is optional: a
 * capture without one counts as `device_binding: "none"`; one that carries a device is verified as in
 * live mode, so an integration tests the same ceremony it will run (docs/decisions.md, D-345).
 */
import * as v from "valibot";
import { type DeviceBinding, descriptorDigest, isDeclinedCeremony } from "../contracts/device";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { verifyDeviceAssertion } from "./assertion";
import type { RelyingParty } from "./ceremony";
import { type DeviceChallengePurpose, type DeviceRefusal, deviceBindingOf, deviceIdOf } from "./policy";
import { verifyRegistration } from "./registration";
import type { PendingRegistration } from "./rpc";

/**
 * A new person's first passkey, verified and named, for the enrolment's transaction to store
 * (identity_enroll registers it through device_credential_register, with the identity).
 */
export type VerifiedCredential = PendingRegistration & { device_id: string; device_binding: Exclude<DeviceBinding, "none"> };

/**
 * The body fields a capture's device answer travels in: `device_assertion` (what
 * @simplewebauthn/browser's startAuthentication resolves to), `device_registration` (what
 * startRegistration resolves to, on a new person's enrolment). Their shape is judged by the
 * verification (`response_malformed`), so a malformed one is the device's refusal, not a 400.
 * Either may instead be DECLINED_CEREMONY (shared/contracts/device.ts): the ceremony was refused on
 * the device, which reads `user_not_verified`.
 */
export const deviceAssertionField = v.optional(v.unknown());
export const deviceRegistrationField = v.optional(v.unknown());

/** What a capture's device proved, recorded with the capture: its binding and, when one signed, the device. */
export interface CaptureDevice {
  device_binding: DeviceBinding;
  /** The credential's row id (private.device_credentials.id), or null when no device signed (sandbox). */
  device_id: string | null;
}

/** A capture no device signed: the sandbox's simulator captures. */
export const NO_DEVICE: CaptureDevice = { device_binding: "none", device_id: null };

/** The way forward named by the refusals that mean "this device is not one of the person's". */
const NEW_DEVICE_WAY =
  "Sign on a device this person registered, or add this device: approve it from one of their registered devices, or prove again with their passport and a live capture.";

/** What each refusal says (the `error` of the 403); `reason` names it for code. */
const refusalMessages: Record<DeviceRefusal, string> = {
  device_missing: `No device signed this capture; live mode counts only a capture signed by a passkey of the person. ${NEW_DEVICE_WAY}`,
  response_malformed: "The device's answer is not a WebAuthn response of the expected shape.",
  challenge_unknown: "The capture's challenge was not issued by the service to this merchant, environment and purpose.",
  challenge_used: "The capture's challenge was already used: ask device-challenge for a new one.",
  challenge_expired: "The capture's challenge expired: ask device-challenge for a new one.",
  challenge_mismatch: "The device signed another challenge than the capture's.",
  descriptor_mismatch: "The device signed other numbers than the capture sent.",
  credential_unknown: `This device holds no passkey registered to a person here. ${NEW_DEVICE_WAY}`,
  credential_other_identity: "The passkey that signed belongs to another person than the capture's.",
  credential_revoked: `The passkey that signed was revoked. ${NEW_DEVICE_WAY}`,
  credential_exists: "This passkey is registered already.",
  user_handle_mismatch:
    "The passkey's user handle is not the one the service issued when it was registered: it names nobody here. Sign in with a passkey registered on this service's screen.",
  identity_unknown: "No such person in this environment.",
  wrong_ceremony: "The device's answer is of the other WebAuthn ceremony.",
  origin_mismatch: "The ceremony ran on a page of another origin than the service's.",
  rp_id_mismatch: "The passkey is for another relying party than the service.",
  user_not_present: "The authenticator did not see the person present.",
  user_not_verified:
    "The device did not verify the person (biometric or PIN), or the person cancelled its prompt: user verification is required.",
  attestation_invalid: "The registration's attestation does not verify.",
  signature_invalid: "The device's signature does not verify with the registered key.",
  sign_count_regressed: "The passkey's counter went back: the credential may be cloned, and is flagged.",
};

/** `403 UNAUTHORIZED_DEVICE` for a device refusal, with its `reason`. */
export function unauthorizedDevice(reason: DeviceRefusal): ApiError {
  return new ApiError("UNAUTHORIZED_DEVICE", { reason }, refusalMessages[reason]);
}

/**
 * A capture's device as an act receives it: the assertion still to verify (with the relying party
 * it must be for), or the device an earlier step of the same request verified (a hosted screen
 * identifies, then acts, on one capture and one signature).
 */
export type DeviceEvidence = { assertion: unknown; rp: RelyingParty } | { verified: CaptureDevice };

/** What judging a capture's device takes: whose capture, for what, the descriptor and the device's answer. */
export interface CaptureOnDevice {
  /** The person the capture is for (identified by the face, or named by the caller). */
  identityId: string;
  purpose: DeviceChallengePurpose;
  /** The descriptor's capture_nonce: in live mode, a challenge the service issued. */
  challenge: string;
  /** The descriptor as received (its digest is what the device must have signed). */
  descriptor: unknown;
  /** The `device_assertion` field, absent when none was sent. */
  assertion: unknown;
  rp: RelyingParty;
}

/**
 * The device a capture was signed on: verified when the capture carries an assertion (either
 * environment), `none` in the sandbox when it carries none; otherwise `403 UNAUTHORIZED_DEVICE`.
 */
export async function captureDevice(
  deps: Deps,
  tenant: Tenant,
  input: Omit<CaptureOnDevice, "assertion" | "rp"> & DeviceEvidence,
): Promise<CaptureDevice> {
  if ("verified" in input) return input.verified;
  // Said by the page, so it can only refuse: in either environment, as a device answer that failed would.
  if (isDeclinedCeremony(input.assertion)) throw unauthorizedDevice("user_not_verified");
  if (input.assertion === undefined) {
    if (tenant.environment === "test") return NO_DEVICE;
    throw unauthorizedDevice("device_missing");
  }
  const verified = await verifyDeviceAssertion(deps, tenant, {
    identityId: input.identityId,
    purpose: input.purpose,
    challenge: input.challenge,
    descriptorDigest: await descriptorDigest(input.descriptor),
    response: input.assertion,
    rp: input.rp,
  });
  if (!verified.ok) throw unauthorizedDevice(verified.reason);
  return { device_binding: verified.device_binding, device_id: deviceIdOf(verified.device_id) };
}

/** What an enrolment's device proof takes: the capture's, and both fields the device may answer in. */
export interface EnrolmentOnDevice extends Omit<CaptureOnDevice, "identityId" | "purpose"> {
  /** The `device_registration` field, absent when none was sent. */
  registration: unknown;
}

/** An enrolment's device: the credential a new person registers (stored with the identity), and what it proved. */
export interface EnrolmentDevice {
  credential: VerifiedCredential | null;
  device: CaptureDevice;
}

/**
 * The device of an enrolment capture. A new person registers their first device in the ceremony
 * of the capture (`device_registration`: verified now, the challenge consumed, stored by the
 * enrolment's own transaction); a face already known (`existingIdentityId`) enrols with an
 * assertion from one of its devices, and a registration from a device new to that person is
 * `credential_unknown`: adding a device is its own flow. In the sandbox, no device is `none`.
 */
export async function enrolmentDevice(
  deps: Deps,
  tenant: Tenant,
  existingIdentityId: string | null,
  input: EnrolmentOnDevice,
): Promise<EnrolmentDevice> {
  if (isDeclinedCeremony(input.assertion) || isDeclinedCeremony(input.registration)) throw unauthorizedDevice("user_not_verified");
  if (existingIdentityId !== null) {
    if (input.assertion === undefined && input.registration !== undefined) throw unauthorizedDevice("credential_unknown");
    const device = await captureDevice(deps, tenant, { ...input, identityId: existingIdentityId, purpose: "enroll" });
    return { credential: null, device };
  }
  if (input.registration === undefined) {
    if (tenant.environment === "test" && input.assertion === undefined) return { credential: null, device: NO_DEVICE };
    // An assertion cannot enrol a face nobody holds: its credential would be somebody's already.
    throw unauthorizedDevice(input.assertion === undefined ? "device_missing" : "credential_other_identity");
  }
  const verified = await verifyRegistration(deps, tenant, {
    purpose: "enroll",
    challenge: input.challenge,
    descriptorDigest: await descriptorDigest(input.descriptor),
    response: input.registration,
    rp: input.rp,
  });
  if (!verified.ok) throw unauthorizedDevice(verified.reason);
  const credential = { ...verified.registration, device_id: crypto.randomUUID(), device_binding: deviceBindingOf(verified.registration) };
  return { credential, device: { device_binding: credential.device_binding, device_id: credential.device_id } };
}
