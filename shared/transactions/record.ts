/** What every act of the transaction sink records, whether a live capture or a mandate stood in for it. */
import { ENGINE_VERSION } from "../engine";
import { documentTypes } from "../identity/documents";
import type { ForcedScenario } from "../identity/scenario";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { PendingResponse } from "../kernel/rpc";
import type { KeySet } from "../lib/signing";
import type { ReceiptRow } from "../receipts/rpc";
import { type AssuranceLevel, buildReceipt, newReceiptCode } from "../receipts/signed-receipt";
import type { TransactionAction, TransactionBody } from "./input";
import type { CaptureRow } from "./rpc";

/**
 * The capture row of an act: who, what, how much and when, plus `judged` (what the engine and the
 * face match found, for a live capture; a mandate's capture has none) and the nonce it consumed.
 */
export function captureRow(
  tenant: Tenant,
  body: TransactionBody,
  now: Date,
  recorded: { id: string; captureNonce: string; assurance: AssuranceLevel | null; judged?: Partial<CaptureRow> },
): CaptureRow {
  return {
    id: recorded.id,
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    action: body.action,
    service_hash: body.service_hash,
    amount_minor: body.amount ?? null,
    currency: body.currency ?? null,
    capture_nonce: recorded.captureNonce,
    assurance_level: recorded.assurance,
    engine_version: ENGINE_VERSION,
    created_at: now.toISOString(),
    ...recorded.judged,
  };
}

/**
 * The signed receipt of an act recorded as capture `captureId`, ready for the capture's RPC. A live
 * act is attested at the level proven at this instant. An act mandate `standInFor` (`mdt_…`) stood
 * in for is attested as `ACTION_MANDATE` at assurance `mandate` (nobody was present), naming the
 * mandate, the act and `assurance`, the level proven when the person granted it (docs/receipts.md).
 */
export async function actReceipt(
  keys: KeySet,
  tenant: Tenant,
  body: TransactionBody,
  captureId: string,
  assurance: AssuranceLevel,
  now: Date,
  standInFor?: string,
): Promise<ReceiptRow> {
  const id = crypto.randomUUID();
  const code = newReceiptCode();
  const mandateId = standInFor;
  const { jws, seal } = await buildReceipt(keys, {
    receiptId: id,
    code,
    captureId,
    merchantId: tenant.merchantId,
    environment: tenant.environment,
    action: mandateId ? "ACTION_MANDATE" : body.action,
    assuranceLevel: assurance,
    ...(mandateId ? { mandate: { mandateId, action: body.action } } : {}),
    serviceHash: body.service_hash,
    issuedAt: now,
    amountMinor: body.amount ?? null,
    currency: body.currency ?? null,
  });
  return { id, code, jws, seal };
}

/** `403 DOCUMENT_REQUIRED` for an act that needs a valid identity document on record (rule 3). */
export function documentRequired(action: TransactionAction): ApiError {
  return new ApiError("DOCUMENT_REQUIRED", {
    action,
    required: "a valid identity document on record",
    accepted_documents: documentTypes,
  });
}

/**
 * How one request's act is recorded: the sandbox scenario forced on it, and under an Idempotency-Key
 * the key (the stand-in's consume key) and the response-store record that the RPC recording the act
 * completes with the answer, in the act's own transaction.
 */
export interface ActOptions {
  scenario: ForcedScenario | null;
  idempotencyKey?: string;
  storedResponse?: PendingResponse;
}
