/**
 * What a registration and an assertion share before any signature is checked: the relying party
 * they are for, the response's shape, and the client data and authenticator data read field by
 * field, so each refusal names its own reason (the library's errors are prose, not codes). The
 * signature and the attestation themselves are @simplewebauthn/server's (registration.ts,
 * assertion.ts).
 */
import { parseAuthenticatorData } from "@simplewebauthn/server/helpers";
import * as v from "valibot";
import { type AttestationFormat, DEVICE_CHALLENGE_BYTES } from "../contracts/device";
import { type Config, serviceBaseUrl } from "../kernel/config";
import { fromBase64Url, toBase64Url } from "../lib/crypto";
import { type DeviceRefused, refused } from "./policy";

/**
 * The WebAuthn relying party a ceremony is for: its RP ID (a registrable domain of the page's
 * origin; the service's own host for the hosted screen), the name an authenticator shows, and the
 * origins whose pages may run the ceremony. Configuration decides it; the operations take it plain.
 */
export interface RelyingParty {
  id: string;
  name: string;
  origins: readonly string[];
  /**
   * Attestation roots trusted beside the pinned ones (trust-roots.ts), per format, as PEM: the
   * deployment's DEVICE_ATTESTATION_ROOTS. A registration's chain to one of them is `trusted`.
   */
  attestationRoots?: AttestationRoots;
}

/** Trust roots per attestation format, as PEM certificates. */
export type AttestationRoots = Partial<Record<AttestationFormat, readonly string[]>>;

/** The name an authenticator shows for the service's own relying party. */
export const SERVICE_RP_NAME = "Human-authorisation service";

/**
 * The relying party of the service's own pages (the hosted screen, and every capture that counts in
 * live mode): the RP ID is the host of the service's base URL, its origin the only one allowed.
 *
 * @example firstPartyRelyingParty("https://auth.example.com") // {id: "auth.example.com", name, origins: ["https://auth.example.com"]}
 */
export function firstPartyRelyingParty(baseUrl: string): RelyingParty {
  const url = new URL(baseUrl);
  return { id: url.hostname, name: SERVICE_RP_NAME, origins: [url.origin] };
}

/**
 * The relying party of a request to the service: the first-party one for the service's base URL
 * (PUBLIC_BASE_URL, else the origin the request reached), trusting the deployment's own attestation
 * roots (DEVICE_ATTESTATION_ROOTS) beside the pinned ones.
 */
export function relyingPartyOf(config: Pick<Config, "PUBLIC_BASE_URL" | "DEVICE_ATTESTATION_ROOTS">, requestUrl: string): RelyingParty {
  const rp = firstPartyRelyingParty(serviceBaseUrl(config, requestUrl));
  return config.DEVICE_ATTESTATION_ROOTS ? { ...rp, attestationRoots: config.DEVICE_ATTESTATION_ROOTS } : rp;
}

const base64url = (max: number) => v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/, "base64url"), v.maxLength(max));
/** A credential id: at least 16 bytes (WebAuthn 6.1: at least 16 bytes of entropy), at most 1023. */
const credentialId = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{22,1364}$/, "a credential id in base64url"));

/** A registration response as @simplewebauthn/browser's startRegistration answers it (toJSON). */
export const registrationResponseSchema = v.object({
  id: credentialId,
  rawId: credentialId,
  type: v.literal("public-key"),
  response: v.object({
    clientDataJSON: base64url(8192),
    attestationObject: base64url(65536),
    transports: v.optional(v.array(v.pipe(v.string(), v.maxLength(16)))),
  }),
  clientExtensionResults: v.optional(v.record(v.string(), v.unknown()), {}),
  authenticatorAttachment: v.optional(v.picklist(["platform", "cross-platform"])),
});
export type RegistrationResponse = v.InferOutput<typeof registrationResponseSchema>;

/** An assertion response as @simplewebauthn/browser's startAuthentication answers it. */
export const assertionResponseSchema = v.object({
  id: credentialId,
  rawId: credentialId,
  type: v.literal("public-key"),
  response: v.object({
    clientDataJSON: base64url(8192),
    authenticatorData: base64url(8192),
    signature: base64url(2048),
    userHandle: v.optional(base64url(128)),
  }),
  clientExtensionResults: v.optional(v.record(v.string(), v.unknown()), {}),
  authenticatorAttachment: v.optional(v.picklist(["platform", "cross-platform"])),
});
export type AssertionResponse = v.InferOutput<typeof assertionResponseSchema>;

/** What the ceremony's client data and authenticator data said, once every check passed. */
export interface CeremonyFacts {
  origin: string;
  flags: { up: boolean; uv: boolean; be: boolean; bs: boolean };
  counter: number;
}

/** The client data as the browser wrote it, or null when it is not JSON of the right shape. */
function clientDataOf(clientDataJSON: string): { type: string; challenge: string; origin: string; crossOrigin?: boolean } | null {
  try {
    const data = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64Url(clientDataJSON)));
    const fields = [data?.type, data?.challenge, data?.origin];
    return fields.every((field) => typeof field === "string") ? data : null;
  } catch {
    return null;
  }
}

/**
 * Checks what a ceremony's signature is over, before the signature: the ceremony's type, the
 * challenge (its issued half, then its descriptor half), the origin, the RP ID's hash, user presence
 * and user verification. The refusal names the first check that fails.
 */
export async function checkCeremony(
  kind: "webauthn.create" | "webauthn.get",
  clientDataJSON: string,
  authenticatorData: Uint8Array<ArrayBuffer>,
  expectedChallenge: string,
  rp: RelyingParty,
): Promise<DeviceRefused | CeremonyFacts> {
  const client = clientDataOf(clientDataJSON);
  if (!client) return refused("response_malformed");
  if (client.type !== kind) return refused("wrong_ceremony");
  if (client.challenge !== expectedChallenge) {
    const signed = /^[A-Za-z0-9_-]+$/.test(client.challenge) ? fromBase64Url(client.challenge) : new Uint8Array();
    const issuedHalf = toBase64Url(fromBase64Url(expectedChallenge).slice(0, DEVICE_CHALLENGE_BYTES));
    const sameIssued = toBase64Url(signed.slice(0, DEVICE_CHALLENGE_BYTES)) === issuedHalf;
    return refused(sameIssued ? "descriptor_mismatch" : "challenge_mismatch");
  }
  // A page framed by another origin (crossOrigin) is a ceremony the person did not start on ours.
  if (!rp.origins.includes(client.origin) || client.crossOrigin === true) return refused("origin_mismatch");
  let parsed: ReturnType<typeof parseAuthenticatorData>;
  try {
    parsed = parseAuthenticatorData(authenticatorData);
  } catch {
    return refused("response_malformed");
  }
  const rpIdHash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(rp.id)));
  if (toBase64Url(parsed.rpIdHash) !== toBase64Url(rpIdHash)) return refused("rp_id_mismatch");
  if (!parsed.flags.up) return refused("user_not_present");
  if (!parsed.flags.uv) return refused("user_not_verified");
  const { up, uv, be, bs } = parsed.flags;
  return { origin: client.origin, flags: { up, uv, be, bs }, counter: parsed.counter };
}
