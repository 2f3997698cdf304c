/**
 * The device rules that need no database and no cryptography: what a challenge may be for and how
 * long it lives, what an attestation can prove, which binding a credential gives a capture, why an
 * assertion or a registration is refused, and how a device is named outside the service.
 */
import type { DeviceBinding } from "../contracts/device";

/**
 * What a device challenge is issued for: the purpose of the capture it will sign (as
 * private.captures.purpose names them) or `add_device`, registering another device of a person.
 */
export const deviceChallengePurposes = ["enroll", "login", "payment", "sign", "verify", "attribute", "grant", "add_device"] as const;
export type DeviceChallengePurpose = (typeof deviceChallengePurposes)[number];

/**
 * How a credential came to be registered: `enroll` (in the ceremony of a capture that enrolled or
 * identified the person), `device_approval` (a registered device of the person signed its
 * registration), `document` (re-proof with a verified document on record plus a live capture).
 */
export const deviceRegisteredVia = ["enroll", "device_approval", "document"] as const;
export type DeviceRegisteredVia = (typeof deviceRegisteredVia)[number];

/** How long an issued challenge may be signed and sent: two minutes (issue 27). */
export const DEVICE_CHALLENGE_TTL_SECONDS = 120;

/**
 * What a registration's attestation proved: `trusted` (its certificate chain ends at a root pinned
 * for its format: this authenticator model made the key), `self` (signed by the new key itself:
 * possession only), `untrusted` (a chain the service has no pinned root for, so unchecked),
 * `none` (no statement).
 */
export const attestationVerdicts = ["trusted", "self", "untrusted", "none"] as const;
export type AttestationVerdict = (typeof attestationVerdicts)[number];

/**
 * The binding a credential gives the captures it signs: `hardware` only for a key its
 * authenticator says cannot leave it (backup eligibility off) AND whose attestation chains to a
 * pinned root, since an unattested authenticator's flags are only its own word; every other
 * registered passkey is `synced`. A capture no device signed is `none`.
 */
export function deviceBindingOf(credential: {
  backup_eligible: boolean;
  attestation_verdict: AttestationVerdict;
}): Exclude<DeviceBinding, "none"> {
  return !credential.backup_eligible && credential.attestation_verdict === "trusted" ? "hardware" : "synced";
}

/**
 * Why a device's signature does not count, one reason each (docs/devices.md, "Refusals"). An
 * integration answers every one of them `403 UNAUTHORIZED_DEVICE` with this `reason`.
 */
export const deviceRefusals = [
  "device_missing",
  "response_malformed",
  "challenge_unknown",
  "challenge_used",
  "challenge_expired",
  "challenge_mismatch",
  "descriptor_mismatch",
  "credential_unknown",
  "credential_other_identity",
  "credential_revoked",
  "credential_exists",
  "user_handle_mismatch",
  "identity_unknown",
  "wrong_ceremony",
  "origin_mismatch",
  "rp_id_mismatch",
  "user_not_present",
  "user_not_verified",
  "attestation_invalid",
  "signature_invalid",
  "sign_count_regressed",
] as const;
export type DeviceRefusal = (typeof deviceRefusals)[number];

/** The transports a credential may list (WebAuthn's AuthenticatorTransport); others a browser reports are dropped. */
export const authenticatorTransports = ["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"] as const;

/** A refusal as the operations answer it. */
export interface DeviceRefused {
  ok: false;
  reason: DeviceRefusal;
}

/** The refusal of `reason`. */
export const refused = (reason: DeviceRefusal): DeviceRefused => ({ ok: false, reason });

/** How a device is named outside the service: dev_ and its id's 32 hex digits. */
export function deviceRef(deviceId: string): string {
  return `dev_${deviceId.replaceAll("-", "")}`;
}

/** The device id a `dev_…` name stands for, or null when it names none. */
export function deviceIdOf(ref: string): string | null {
  const hex = /^dev_([0-9a-f]{32})$/.exec(ref)?.[1];
  return hex ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` : null;
}
