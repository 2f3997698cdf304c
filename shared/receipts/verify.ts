/**
 * Public receipt verification (resource API 4.9 and 5.2): a receipt by `id` or `code`, checked
 * against the published keys, its seal recomputed and, once anchored, its inclusion under the
 * anchor's root verified. Answers what it attests and nothing personal (docs/receipts.md).
 */

import type { JWK } from "jose";
import * as v from "valibot";
import { deviceBindings } from "../contracts/device";
import { described, orNull } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { environments } from "../kernel/principal";
import { verifyInclusion } from "./merkle";
import type { StoredReceipt } from "./rpc";
import { normaliseReceiptCode, type ReceiptPayload, receiptSeal, verifyReceipt } from "./signed-receipt";

/**
 * What a verification answers (docs/receipts.md): whether the receipt holds, the facts it attests
 * (null where the signature does not hold) and the evidence, nothing personal.
 */
export const receiptVerificationSchema = v.object({
  valid: described(
    v.boolean(),
    "The signature holds over this receipt, its seal recomputes and, once anchored, its inclusion proof holds.",
  ),
  receipt_id: described(v.string(), "The receipt's id."),
  code: described(v.string(), "The receipt's short code."),
  environment: described(v.picklist(environments), "Live or sandbox."),
  transaction_id: orNull(v.string(), "The act the receipt is of."),
  merchant_id: orNull(v.string(), "The merchant it was issued to."),
  action: orNull(v.string(), "What the person did, for example ACTION_SIGNUP."),
  issued_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When it was signed."),
  assurance_level: orNull(v.string(), "How the person was verified (mandate: a mandate stood in for them)."),
  service_hash: orNull(v.string(), "The hash of what the act was about, as the merchant sent it."),
  device_binding: v.optional(
    described(
      v.picklist(deviceBindings),
      "What signed the person's capture (hardware, synced, none: docs/devices.md); absent on receipts signed before devices and when a mandate stood in.",
    ),
  ),
  amount: orNull(v.object({ minor: v.number(), currency: v.nullable(v.string()) }), "The act's amount in the currency's minor unit."),
  mandate: orNull(
    v.object({ mandate_id: v.optional(v.string()), action: v.optional(v.string()), assurance_level: v.optional(v.string()) }),
    "When a mandate stood in for the person: which, for what, and how its granter was verified.",
  ),
  signature: described(
    v.object({ alg: v.nullable(v.string()), kid: v.nullable(v.string()), valid: v.boolean() }),
    "The JWS signature: its algorithm, key id (in the published JWKS) and whether it holds.",
  ),
  immutability_seal: described(v.string(), "The receipt's seal: the leaf anchored in the Merkle tree."),
  seal_valid: described(v.boolean(), "Whether the seal recomputes from the receipt."),
  public_seal_status: described(
    v.picklist(["none", "pending", "anchored"]),
    "Sandbox receipts are never anchored (no public seal); live ones are pending until their anchor's publication is confirmed, and again while a reorg is repaired.",
  ),
  public_seal: orNull(
    v.object({
      anchor_id: v.string(),
      root: v.string(),
      leaf_count: v.number(),
      sink: v.string(),
      sink_reference: v.nullable(v.string()),
      anchored_at: v.pipe(v.string(), v.isoTimestamp()),
      confirmed_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
      inclusion_proof: v.array(v.unknown()),
      inclusion_valid: v.boolean(),
    }),
    "The anchor holding the seal, with the inclusion proof under its root: its sink (a chain's CAIP-2 id), the transaction (`<hash>@<block>` once confirmed, the hash alone while pending) and when it was confirmed (null while pending).",
  ),
  jws: described(v.string(), "The receipt itself, a compact JWS to verify against the published keys."),
});

/** Exactly one of `id` (a uuid) and `code` (as a person might type it). */
export const receiptLookupSchema = v.object({
  id: v.optional(v.pipe(v.string(), v.uuid())),
  code: v.optional(v.pipe(v.string(), v.maxLength(64))),
});

function lookupOf(input: v.InferOutput<typeof receiptLookupSchema>): { id: string } | { code: string } {
  if ((input.id === undefined) === (input.code === undefined)) throw new ApiError("INVALID_INPUT", { fields: ["id", "code"] });
  if (input.id !== undefined) return { id: input.id.toLowerCase() };
  const code = normaliseReceiptCode(input.code ?? "");
  if (!code) throw new ApiError("INVALID_INPUT", { fields: ["code"] });
  return { code };
}

/** The public halves of the signing keys, as /jwks publishes them. */
export function publishedKeys(jwks: { keys: JWK[] }) {
  return { keys: jwks.keys.map(({ kty, crv, x, kid, alg, use }) => ({ kty, crv, x, kid, alg, use })) };
}

export async function verifyStoredReceipt(
  deps: Pick<Deps, "sql">,
  jwks: { keys: JWK[] },
  input: v.InferOutput<typeof receiptLookupSchema>,
) {
  const stored = await rpc(deps.sql, "receipt_get", lookupOf(input));
  if (!stored) throw new ApiError("not_found");

  const checked = await verifyReceipt(stored.jws, jwks);
  // A genuine signature over another receipt's payload proves nothing about this one.
  const payload = checked.payload && bindsTo(checked.payload, stored) ? checked.payload : null;
  const sealValid = (await receiptSeal(stored.jws)) === stored.seal;
  const publicSeal = stored.environment === "live" && stored.anchor ? await anchorSection(stored, stored.anchor) : null;
  const valid = payload !== null && sealValid && (publicSeal === null || publicSeal.inclusion_valid);

  return {
    valid,
    receipt_id: stored.id,
    code: stored.code,
    environment: stored.environment,
    ...attested(payload),
    signature: { alg: checked.header?.alg ?? null, kid: checked.header?.kid ?? null, valid: payload !== null },
    immutability_seal: stored.seal,
    seal_valid: sealValid,
    public_seal_status: stored.environment === "test" ? "none" : publicSeal?.confirmed_at ? "anchored" : "pending",
    public_seal: publicSeal,
    jws: stored.jws,
  };
}

function bindsTo(payload: ReceiptPayload, stored: StoredReceipt): boolean {
  return payload.rid === stored.id && payload.code === stored.code && payload.env === stored.environment;
}

/** The attested facts, only from a verified payload; null fields when the signature does not hold. */
function attested(payload: ReceiptPayload | null) {
  return {
    transaction_id: payload?.transaction_id ?? null,
    merchant_id: payload?.merchant_id ?? null,
    action: payload?.act ?? null,
    issued_at: payload ? new Date(payload.iat * 1000).toISOString() : null,
    assurance_level: payload?.assurance_level ?? null,
    service_hash: payload?.service_hash ?? null,
    ...(payload?.device_binding ? { device_binding: payload.device_binding } : {}),
    amount: payload?.amount_minor !== undefined ? { minor: payload.amount_minor, currency: payload.currency } : null,
    // Set only when a mandate stood in for the person (action ACTION_MANDATE, assurance_level mandate).
    mandate:
      payload?.act === "ACTION_MANDATE"
        ? { mandate_id: payload.mandate_id, action: payload.mandate_act, assurance_level: payload.mandate_assurance_level }
        : null,
  };
}

async function anchorSection(stored: StoredReceipt, anchor: NonNullable<StoredReceipt["anchor"]>) {
  const proof = stored.inclusion_proof ?? [];
  return {
    anchor_id: anchor.id,
    root: anchor.root,
    leaf_count: anchor.leaf_count,
    sink: anchor.sink,
    sink_reference: anchor.sink_reference,
    anchored_at: new Date(anchor.anchored_at).toISOString(),
    confirmed_at: anchor.confirmed_at ? new Date(anchor.confirmed_at).toISOString() : null,
    inclusion_proof: proof,
    inclusion_valid: await verifyInclusion(stored.seal, proof, anchor.root),
  };
}

/** The published signing keys (JWKS): Ed25519 public keys only. */
export const publishedKeysSchema = v.object({
  keys: v.array(v.object({ kty: v.string(), crv: v.string(), x: v.string(), kid: v.string(), alg: v.string(), use: v.string() })),
});
