/**
 * The presence proof v1: the one string the device SDK emits for the resource API's identity
 * routes (`proof` of `POST /v1/identity/claims`, `…/recognitions`, `…/attributes`;
 * docs/resource-api.md, "The proof"). It wraps what the device already computes, the presence
 * descriptor v1 (docs/presence-descriptor.md), and, for a claim, the person's consent as the device
 * showed it:
 *
 *   proof = "pp1." + base64url(UTF-8 JSON {"descriptor": {…descriptor v1…}, "consent"?: {"version", "retention_days"}})
 *
 * Version 2 adds the device's signature over the capture (docs/proof-format.md): the WebAuthn
 * assertion (a known person) or registration (a new person's claim) whose challenge is
 * assertionChallenge(descriptor.capture_nonce, descriptorDigest(descriptor)). Live mode takes only
 * a version 2 proof with its device; the sandbox takes either (docs/decisions.md, D-346).
 *
 *   proof = "pp2." + base64url(UTF-8 JSON {"descriptor", "consent"?, "device": {"assertion"} | {"registration"}})
 *
 * Either version may carry `document`: the eMRTD evidence the device read (EF.SOD, EF.DG1, the hash
 * of EF.DG2 and its portrait match; docs/documents.md), the same the function API's capture takes.
 * A claim with `source: "document"` binds it to the person (D-517); elsewhere it is not read.
 *
 * The capture nonce is the descriptor's own. Pure: the browser client and the service share it.
 */
import { type PresenceDescriptor, parseDescriptor } from "./descriptor.js";

export const PROOF_PREFIX = "pp1.";
/** The prefix of a proof version 2, which carries the device's signature. */
export const PROOF_V2_PREFIX = "pp2.";

/** The device's part of a proof version 2: one WebAuthn answer, as @simplewebauthn/browser resolves it. */
export interface ProofDevice {
  assertion?: unknown;
  registration?: unknown;
}

/** A proof is at most this long: a 30-second descriptor at 60 Hz with its consent fits with room to spare. */
export const MAX_PROOF_LENGTH = 200_000;

/** What the person agreed to on the device before the capture: the consent text's version and how long it holds. */
export interface ProofConsent {
  version: string;
  retention_days: number;
}

export interface PresenceProof {
  descriptor: PresenceDescriptor;
  /** Present when the device collected the person's consent to be claimed (absent: recognition, attributes). */
  consent?: unknown;
  /** Version 2 only: the device's signature over the descriptor as sent (`descriptorAsSent`). */
  device?: ProofDevice;
  /** The descriptor's JSON as the proof carried it: what the device's signature covers (descriptorDigest). */
  descriptorAsSent: unknown;
  /** The identity document the device read, as sent: judged by the claim that asks for it (`source: "document"`). */
  document?: unknown;
}

export type ParseProofResult = { ok: true; proof: PresenceProof } | { ok: false; fields: string[] };

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The proof string of a descriptor (and the consent the device collected).
 *
 * @example encodeProof(descriptor, { version: "2026-11", retention_days: 365 }) // "pp1.eyJkZXNjcmlwdG9yIjp7…"
 */
export function encodeProof(descriptor: PresenceDescriptor, consent?: ProofConsent, device?: ProofDevice, document?: unknown): string {
  const payload = {
    descriptor,
    ...(consent ? { consent } : {}),
    ...(device ? { device } : {}),
    ...(document === undefined ? {} : { document }),
  };
  const bytes = encoder.encode(JSON.stringify(payload));
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return (device ? PROOF_V2_PREFIX : PROOF_PREFIX) + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The proof a string carries, or the fields at fault: `proof` when it is no proof v1 (prefix,
 * base64url, UTF-8, a JSON object of `descriptor` and `consent` only), `proof.descriptor.…` naming
 * what the descriptor's validation refused. The consent is returned as sent, for the claim to judge.
 */
export function parseProof(input: string): ParseProofResult {
  const refused: ParseProofResult = { ok: false, fields: ["proof"] };
  const version = input.startsWith(PROOF_V2_PREFIX) ? 2 : input.startsWith(PROOF_PREFIX) ? 1 : null;
  if (version === null || input.length > MAX_PROOF_LENGTH) return refused;
  const encoded = input.slice(PROOF_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded) || encoded.length % 4 === 1) return refused;
  let payload: unknown;
  try {
    const binary = atob(encoded.replace(/-/g, "+").replace(/_/g, "/"));
    payload = JSON.parse(decoder.decode(Uint8Array.from(binary, (char) => char.charCodeAt(0))));
  } catch {
    return refused;
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return refused;
  const { descriptor, consent, device, document, ...unknown } = payload as Record<string, unknown>;
  if (Object.keys(unknown).length > 0) return refused;
  // Version 2 carries exactly one device answer; version 1 none.
  const deviceFields = isObject(device) ? Object.keys(device) : null;
  const oneAnswer = deviceFields?.length === 1 && (deviceFields[0] === "assertion" || deviceFields[0] === "registration");
  if (version === 2 ? !oneAnswer : device !== undefined) return { ok: false, fields: ["proof.device"] };
  const parsed = parseDescriptor(descriptor, { path: "proof.descriptor" });
  if (!parsed.ok) return parsed;
  return {
    ok: true,
    proof: {
      descriptor: parsed.descriptor,
      descriptorAsSent: descriptor,
      ...(consent === undefined ? {} : { consent }),
      ...(version === 2 ? { device: device as ProofDevice } : {}),
      ...(document === undefined ? {} : { document }),
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
