/**
 * The device's part of a capture, as the server and the browser both compute it (docs/devices.md):
 * the digest of the canonical descriptor, and the WebAuthn challenge a passkey signs for a capture,
 * derived from the challenge the service issued and that digest, so one signature covers exactly
 * the numbers sent. Pure WebCrypto and shared/lib: the browser bundle takes it whole.
 */
import { fromBase64Url, sha256Hex, toBase64Url } from "../lib/crypto";
import { canonicalJson } from "../lib/json";

/**
 * What a capture's device proved, on every answer and receipt that counts it: `hardware` (a passkey
 * whose key cannot leave the authenticator: not backup eligible), `synced` (a passkey the
 * platform may copy to the person's other devices), `none` (no device signed: sandbox only).
 */
export const deviceBindings = ["hardware", "synced", "none"] as const;
export type DeviceBinding = (typeof deviceBindings)[number];

/**
 * The attestation statement formats a registration may carry (WebAuthn Level 3, 8), as a device's
 * view names them; a deployment's own trust roots are configured per format (DEVICE_ATTESTATION_ROOTS).
 */
export const attestationFormats = ["packed", "tpm", "android-key", "android-safetynet", "apple", "fido-u2f", "none"] as const;
export type AttestationFormat = (typeof attestationFormats)[number];

/** Bytes of an issued device challenge (256 random bits; base64url, 43 characters). */
export const DEVICE_CHALLENGE_BYTES = 32;

/** Bytes of a descriptor digest (SHA-256). */
const DIGEST_BYTES = 32;

/**
 * SHA-256 (hex) of a descriptor in its canonical JSON (keys sorted at every level, numbers as
 * JavaScript writes them): the same on the device that computed it and on the server that parsed
 * the JSON it was sent as, whatever key order either kept.
 */
export function descriptorDigest(descriptor: unknown): Promise<string> {
  return sha256Hex(canonicalJson(descriptor));
}

/**
 * The WebAuthn challenge of a capture's assertion (base64url): the issued challenge's 32 bytes
 * followed by the descriptor digest's 32 bytes. Concatenated, not hashed, so anyone reading the
 * signed clientDataJSON sees which challenge and which descriptor it covers; both parts have a fixed
 * length, so no two pairs give one challenge. Throws on a malformed part: it is never guessed.
 *
 * @example assertionChallenge("q1…43 chars", "9f86d0…64 hex") // 86 base64url characters
 */
export function assertionChallenge(challenge: string, descriptorDigestHex: string): string {
  const issued = /^[A-Za-z0-9_-]{43}$/.test(challenge) ? fromBase64Url(challenge) : null;
  if (issued?.length !== DEVICE_CHALLENGE_BYTES) throw new Error("the issued challenge must be 32 bytes of base64url");
  if (!/^[0-9a-f]{64}$/.test(descriptorDigestHex)) throw new Error("the descriptor digest must be 64 lowercase hex digits");
  const bytes = new Uint8Array(DEVICE_CHALLENGE_BYTES + DIGEST_BYTES);
  bytes.set(issued, 0);
  for (let i = 0; i < DIGEST_BYTES; i++)
    bytes[DEVICE_CHALLENGE_BYTES + i] = Number.parseInt(descriptorDigestHex.slice(2 * i, 2 * i + 2), 16);
  return toBase64Url(bytes);
}

/**
 * What a new device's registration covers when it is added by the approval of a registered device
 * (no capture is made on the new device): its WebAuthn challenge is assertionChallenge(issued
 * challenge, descriptorDigest(DEVICE_APPROVAL_CONTEXT)) (docs/devices.md, "Adding a device").
 */
export const DEVICE_APPROVAL_CONTEXT = { purpose: "add_device", method: "device_approval" } as const;

/**
 * What the approving device signs, as the descriptor digest of its add_device assertion: the
 * addition and the new credential it would register (its id and key thumbprint), so one signature
 * approves exactly that registration.
 */
export function approvalDigest(addition: { addition_id: string; credential_id: string; key_thumbprint: string }): Promise<string> {
  return descriptorDigest({
    addition_id: addition.addition_id,
    credential_id: addition.credential_id,
    key_thumbprint: addition.key_thumbprint,
  });
}

/**
 * The device's answer when its ceremony was refused on the device: the browser's `NotAllowedError`
 * (the person cancelled the prompt, or its user verification, a biometric or PIN, did not pass;
 * WebAuthn does not tell these apart, on purpose, so neither can the service). Sent in place of the
 * WebAuthn response (`device_assertion` or `device_registration`), so the refusal reads
 * `user_not_verified` rather than `device_missing` (docs/decisions.md, D-640). It is the page's word,
 * so it can only refuse, never count.
 */
export const DECLINED_CEREMONY = { declined: "NotAllowedError" } as const;

/** Whether a device answer is DECLINED_CEREMONY (exactly: any other object is a response to verify). */
export function isDeclinedCeremony(answer: unknown): boolean {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return false;
  const keys = Object.keys(answer);
  return keys.length === 1 && (answer as { declined?: unknown }).declined === DECLINED_CEREMONY.declined;
}

/**
 * The `alg` of a key-binding JWT (RFC 9901) signed by a WebAuthn passkey (docs/decisions.md, D-642):
 * a passkey signs only assertions, so the KB-JWT's third segment is the assertion (what
 * @simplewebauthn/browser's startAuthentication resolves to, as base64url JSON) whose challenge is
 * keyBindingChallenge(the KB-JWT's signing input). Not a JOSE algorithm: standard verifiers refuse it.
 */
export const WEBAUTHN_KB_ALG = "webauthn";

/**
 * The WebAuthn challenge of a key-binding JWT's assertion: the SHA-256 of its signing input
 * (`base64url(header).base64url(payload)`, ASCII), base64url, 43 characters. 32 bytes where a
 * capture's challenge is 64, so no assertion made for the one passes for the other.
 */
export async function keyBindingChallenge(signingInput: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(signingInput))));
}
