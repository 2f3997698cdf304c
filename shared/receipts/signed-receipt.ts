/**
 * Receipts and seals (docs/receipts.md). Pure and workerd-safe: Web Crypto and jose only.
 *
 * - A receipt is a compact JWS (EdDSA, `typ: receipt+jws`) over a payload that says what was
 *   attested and nothing personal: no identity id, no subject_ref, nothing from the face or voice.
 * - Its `immutability_seal` is SHA-256 (lowercase hex) of the compact JWS string.
 * - Live seals are the leaves of a Merkle tree whose root is recorded as an anchor:
 *     leaf hash  = SHA-256(0x00 ‖ seal bytes)          (32 raw bytes decoded from the seal's hex)
 *     node hash  = SHA-256(0x01 ‖ left ‖ right)        (raw 32-byte child hashes)
 *   Leaves keep their order; each level pairs neighbours left to right and a node left without a
 *   partner is promoted unchanged to the next level. The root of one leaf is that leaf's hash.
 *   The 0x00/0x01 prefixes keep a leaf from ever being read as an inner node (second preimage).
 *   The tree is built and checked in shared/receipts/merkle.ts and, in SQL, by private.merkle_fold.
 */
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JWK } from "jose";
import { type DeviceBinding, deviceBindings } from "../contracts/device";
import type { Environment } from "../kernel/principal";
import { toHex } from "../lib/crypto";
import { type KeySet, signJson } from "../lib/signing";
import { UUID } from "../lib/uuid";

const RECEIPT_TYPE = "receipt+jws";
const RECEIPT_PAYLOAD_VERSION = 1;

/** The acts a person does; `ACTION_MANDATE` is the receipt's act when a mandate stood in for the person. */
export type PersonAction = "ACTION_LOGIN" | "ACTION_PAYMENT" | "ACTION_SIGN" | "ACTION_SIGNUP";
export type ReceiptAction = PersonAction | "ACTION_MANDATE";
export type AssuranceLevel = "face" | "face_voice" | "face_voice_doc";
/**
 * What a receipt says about presence: a level proven at the instant of the act, or `mandate` when
 * nobody was present and a mandate stood in (the level of the grant is then `mandate_assurance_level`).
 */
export type ReceiptAssurance = AssuranceLevel | "mandate";

const PERSON_ACTIONS: readonly PersonAction[] = ["ACTION_LOGIN", "ACTION_PAYMENT", "ACTION_SIGN", "ACTION_SIGNUP"];
/** Every act a receipt may attest. */
export const RECEIPT_ACTIONS: readonly ReceiptAction[] = [...PERSON_ACTIONS, "ACTION_MANDATE"];
const ASSURANCE_LEVELS: readonly AssuranceLevel[] = ["face", "face_voice", "face_voice_doc"];
const MANDATE_ID = /^mdt_[0-9a-f]{32}$/;
/** An immutability seal: SHA-256 of a receipt's compact JWS, lowercase hex. */
export const SEAL = /^[0-9a-f]{64}$/;

// ---------------------------------------------------------------------------------------------
// Receipt codes
// ---------------------------------------------------------------------------------------------

/** Crockford's base32 alphabet: digits and upper-case letters without I, L, O and U. */
const CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const RECEIPT_CODE = /^RCPT-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/;

/**
 * A fresh public receipt code `RCPT-XXXX-XXXX-XXXX`: 12 random Crockford base32 characters
 * (60 bits; 256 is a multiple of 32, so masking a random byte has no bias).
 *
 * @example newReceiptCode() // "RCPT-7QK2-M0ZD-4HXW"
 */
export function newReceiptCode(): string {
  const chars = Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) => CODE_ALPHABET[byte & 31]);
  return `RCPT-${chars.slice(0, 4).join("")}-${chars.slice(4, 8).join("")}-${chars.slice(8).join("")}`;
}

/**
 * The canonical form of a code as a person might type it, or null when it cannot be one: case,
 * spaces and hyphens are ignored, the `RCPT` prefix is optional, and Crockford's look-alikes are
 * read as digits (O → 0, I and L → 1).
 *
 * @example normaliseReceiptCode("rcpt 7qk2 mozd 4hxw") // "RCPT-7QK2-M0ZD-4HXW"
 */
export function normaliseReceiptCode(input: string): string | null {
  if (input.length > 64) return null;
  let compact = input.toUpperCase().replace(/[\s-]+/g, "");
  if (compact.startsWith("RCPT")) compact = compact.slice(4);
  compact = compact.replace(/O/g, "0").replace(/[IL]/g, "1");
  if (!/^[0-9A-HJKMNP-TV-Z]{12}$/.test(compact)) return null;
  return `RCPT-${compact.slice(0, 4)}-${compact.slice(4, 8)}-${compact.slice(8)}`;
}

// ---------------------------------------------------------------------------------------------
// Signed receipts
// ---------------------------------------------------------------------------------------------

/** What the transaction sink knows about an accepted act when it issues the receipt. */
export interface ReceiptInput {
  receiptId: string;
  code: string;
  /** The capture id: `transaction_id` of process-biovital-transaction, `proof.capture_id` of mandate-issue. */
  captureId: string;
  merchantId: string;
  environment: Environment;
  /** The person's act, or `ACTION_MANDATE` when a mandate stood in (then `mandate` is required). */
  action: ReceiptAction;
  /** The level proven at the act; for `ACTION_MANDATE`, the level proven when the mandate was granted. */
  assuranceLevel: AssuranceLevel;
  /** Only with `ACTION_MANDATE`: the mandate that stood in and the act it was used for. */
  mandate?: { mandateId: string; action: PersonAction };
  /** The merchant's own reference for the act. */
  serviceHash: string;
  /** The capture's created_at; the receipt row's issued_at must be the same instant. */
  issuedAt: Date;
  /** Integer minor units; with `currency`, or neither. */
  amountMinor?: number | null;
  currency?: string | null;
  /** A person's act: what signed its capture (docs/devices.md); absent on receipts before devices and on ACTION_MANDATE. */
  deviceBinding?: DeviceBinding;
}

/** The signed payload. Short JOSE-style names where JOSE has one (`iat`), plain names elsewhere. */
export interface ReceiptPayload {
  /** Payload version. */
  v: typeof RECEIPT_PAYLOAD_VERSION;
  /** Receipt id. */
  rid: string;
  /** Public receipt code. */
  code: string;
  /** `test` (sandbox, never anchored) or `live`. */
  env: Environment;
  /** The attested action; `ACTION_MANDATE` when a mandate stood in for the person. */
  act: ReceiptAction;
  /** Issue time, epoch seconds. */
  iat: number;
  /** Presence proven at the act, or `mandate`: nobody was present. */
  assurance_level: ReceiptAssurance;
  service_hash: string;
  /** The merchant the act was done for (a tenant id, not a person). */
  merchant_id: string;
  /** The capture id (an opaque random id, not a person). */
  transaction_id: string;
  amount_minor?: number;
  currency?: string;
  /** Only on `ACTION_MANDATE`: the mandate that stood in (`mdt_…`). */
  mandate_id?: string;
  /** Only on `ACTION_MANDATE`: the act it was used for. */
  mandate_act?: PersonAction;
  /** Only on `ACTION_MANDATE`: the level proven when the person granted the mandate. */
  mandate_assurance_level?: AssuranceLevel;
  /** A person's act: what signed its capture, hardware, synced or none (docs/devices.md; docs/decisions.md, D-347). */
  device_binding?: DeviceBinding;
}

interface BuiltReceipt {
  payload: ReceiptPayload;
  /** Compact JWS, EdDSA, protected header `{alg: "EdDSA", kid, typ: "receipt+jws"}`. */
  jws: string;
  /** immutability_seal: SHA-256 hex of `jws`; the Merkle leaf once the receipt is anchored. */
  seal: string;
}

/**
 * Signs a receipt with the service's active Ed25519 key. Invalid input is a programming error and
 * throws; the caller stores `jws` and `seal` with the capture (capture_record) and answers `seal`
 * as `immutability_seal`.
 *
 * @example
 * const { jws, seal } = await buildReceipt(keys, {
 *   receiptId: crypto.randomUUID(), code: newReceiptCode(), captureId, merchantId, environment: "live",
 *   action: "ACTION_PAYMENT", assuranceLevel: "face_voice_doc", serviceHash, issuedAt: now,
 *   amountMinor: 1299, currency: "EUR",
 * });
 */
export async function buildReceipt(keys: KeySet, input: ReceiptInput): Promise<BuiltReceipt> {
  const payload = receiptPayload(input);
  const jws = await signJson(keys, payload, RECEIPT_TYPE);
  return { payload, jws, seal: await receiptSeal(jws) };
}

/** The payload for `input`, checked field by field. */
function receiptPayload(input: ReceiptInput): ReceiptPayload {
  const fail = (field: string): never => {
    throw new Error(`buildReceipt: invalid ${field}`);
  };
  if (!UUID.test(input.receiptId)) fail("receiptId");
  if (!RECEIPT_CODE.test(input.code)) fail("code");
  if (!UUID.test(input.captureId)) fail("captureId");
  if (!UUID.test(input.merchantId)) fail("merchantId");
  if (input.environment !== "test" && input.environment !== "live") fail("environment");
  if (input.action !== "ACTION_MANDATE" && !PERSON_ACTIONS.includes(input.action)) fail("action");
  if (!ASSURANCE_LEVELS.includes(input.assuranceLevel)) fail("assuranceLevel");
  const mandate = input.mandate ?? null;
  if ((input.action === "ACTION_MANDATE") !== (mandate !== null)) fail("mandate (with ACTION_MANDATE, and only then)");
  if (mandate && !(typeof mandate.mandateId === "string" && MANDATE_ID.test(mandate.mandateId))) fail("mandate.mandateId");
  if (mandate && !PERSON_ACTIONS.includes(mandate.action)) fail("mandate.action");
  if (typeof input.serviceHash !== "string" || input.serviceHash.length === 0 || input.serviceHash.length > 512) fail("serviceHash");
  if (!(input.issuedAt instanceof Date) || Number.isNaN(input.issuedAt.getTime())) fail("issuedAt");
  const hasAmount = input.amountMinor !== undefined && input.amountMinor !== null;
  const hasCurrency = input.currency !== undefined && input.currency !== null;
  if (hasAmount !== hasCurrency) fail("amountMinor/currency (both or neither)");
  if (hasAmount && !(Number.isSafeInteger(input.amountMinor) && input.amountMinor! >= 0)) fail("amountMinor");
  if (hasCurrency && !/^[A-Z]{3}$/.test(input.currency!)) fail("currency");
  if (input.deviceBinding !== undefined && (mandate || !deviceBindings.includes(input.deviceBinding))) fail("deviceBinding");

  return {
    v: RECEIPT_PAYLOAD_VERSION,
    rid: input.receiptId.toLowerCase(),
    code: input.code,
    env: input.environment,
    act: input.action,
    iat: Math.floor(input.issuedAt.getTime() / 1000),
    assurance_level: input.action === "ACTION_MANDATE" ? "mandate" : input.assuranceLevel,
    service_hash: input.serviceHash,
    merchant_id: input.merchantId.toLowerCase(),
    transaction_id: input.captureId.toLowerCase(),
    ...(hasAmount ? { amount_minor: input.amountMinor!, currency: input.currency! } : {}),
    ...(mandate ? { mandate_id: mandate.mandateId, mandate_act: mandate.action, mandate_assurance_level: input.assuranceLevel } : {}),
    ...(input.deviceBinding ? { device_binding: input.deviceBinding } : {}),
  };
}

/** immutability_seal: SHA-256 of the compact JWS string (UTF-8; it is ASCII), lowercase hex. */
export async function receiptSeal(jws: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(jws)));
}

interface ReceiptVerification {
  /** True only when the signature verifies under one of `jwks`' keys, typ is receipt+jws and the payload is well formed. */
  signatureValid: boolean;
  /** The protected header as sent (unverified when signatureValid is false); null when unreadable. */
  header: { alg: string | null; kid: string | null; typ: string | null } | null;
  /** The payload, only when signatureValid. */
  payload: ReceiptPayload | null;
}

/**
 * Verifies a receipt JWS against a public JWKS (the one served at `receipt-verify/jwks`). Only
 * EdDSA is accepted, and only `typ: receipt+jws`, so no other token the service signs with the
 * same key (a user session JWT, for instance) can pass for a receipt.
 */
export async function verifyReceipt(jws: string, jwks: { keys: JWK[] }): Promise<ReceiptVerification> {
  let header: ReceiptVerification["header"] = null;
  try {
    const raw = decodeProtectedHeader(jws);
    header = { alg: stringOrNull(raw.alg), kid: stringOrNull(raw.kid), typ: stringOrNull(raw.typ) };
  } catch {
    return { signatureValid: false, header: null, payload: null };
  }
  if (header.typ !== RECEIPT_TYPE) return { signatureValid: false, header, payload: null };
  try {
    const { payload } = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ["EdDSA"] });
    const parsed = parsePayload(JSON.parse(new TextDecoder().decode(payload)));
    return { signatureValid: parsed !== null, header, payload: parsed };
  } catch {
    return { signatureValid: false, header, payload: null };
  }
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** The payload when every field has its type; anything else (or any extra field) is not a receipt. */
function parsePayload(value: unknown): ReceiptPayload | null {
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  const p = value as Record<string, unknown>;
  const allowed = new Set([
    "v",
    "rid",
    "code",
    "env",
    "act",
    "iat",
    "assurance_level",
    "service_hash",
    "merchant_id",
    "transaction_id",
    "amount_minor",
    "currency",
    "mandate_id",
    "mandate_act",
    "mandate_assurance_level",
    "device_binding",
  ]);
  if (Object.keys(p).some((key) => !allowed.has(key))) return null;
  const ok =
    p.v === RECEIPT_PAYLOAD_VERSION &&
    typeof p.rid === "string" &&
    UUID.test(p.rid) &&
    typeof p.code === "string" &&
    RECEIPT_CODE.test(p.code) &&
    (p.env === "test" || p.env === "live") &&
    Number.isSafeInteger(p.iat) &&
    (p.act === "ACTION_MANDATE"
      ? // Nobody was present: the receipt says so, and names the mandate, the act and the grant's level.
        p.assurance_level === "mandate" &&
        typeof p.mandate_id === "string" &&
        MANDATE_ID.test(p.mandate_id) &&
        PERSON_ACTIONS.includes(p.mandate_act as PersonAction) &&
        ASSURANCE_LEVELS.includes(p.mandate_assurance_level as AssuranceLevel)
      : PERSON_ACTIONS.includes(p.act as PersonAction) &&
        ASSURANCE_LEVELS.includes(p.assurance_level as AssuranceLevel) &&
        p.mandate_id === undefined &&
        p.mandate_act === undefined &&
        p.mandate_assurance_level === undefined) &&
    typeof p.service_hash === "string" &&
    typeof p.merchant_id === "string" &&
    UUID.test(p.merchant_id) &&
    typeof p.transaction_id === "string" &&
    UUID.test(p.transaction_id) &&
    (p.amount_minor === undefined || (Number.isSafeInteger(p.amount_minor) && (p.amount_minor as number) >= 0)) &&
    (p.currency === undefined || (typeof p.currency === "string" && /^[A-Z]{3}$/.test(p.currency))) &&
    (p.amount_minor === undefined) === (p.currency === undefined) &&
    (p.device_binding === undefined || (p.act !== "ACTION_MANDATE" && deviceBindings.includes(p.device_binding as DeviceBinding)));
  return ok ? (p as unknown as ReceiptPayload) : null;
}
