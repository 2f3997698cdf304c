import * as v from "valibot";
import { baselineFromResult, cosineSimilarity, ENGINE_VERSION, type PresenceBaseline, type PresenceDescriptor } from "../engine";
import { documentAttestationSchema, documentTypes, type VerifiedDocument, verifyDocument } from "../identity/documents";
import { FACE_MATCH_GATE, judge } from "../identity/presence";
import type { ForcedScenario } from "../identity/scenario";
import { bestMatch, protectorFor } from "../identity/template-store";
import { currencySchema, isMinorUnitAmount } from "../lib/money";
import { decisionSchema } from "../mandates/decision";
import type { AppContext } from "../platform/app";
import { rpc } from "../platform/db/client";
import { ApiError } from "../platform/errors";
import { parseWith } from "../platform/validation";
import { type AssuranceLevel, buildReceipt, newReceiptCode } from "../receipts/receipts";

export const transactionActions = ["ACTION_LOGIN", "ACTION_PAYMENT", "ACTION_SIGN", "ACTION_SIGNUP"] as const;
export type TransactionAction = (typeof transactionActions)[number];
/** Acts that bind the person legally or move money need a valid identity document on record (rule 3). */
export const DOCUMENT_ACTIONS: ReadonlySet<TransactionAction> = new Set(["ACTION_PAYMENT", "ACTION_SIGN"]);

export const transactionSchema = v.strictObject({
  action: v.picklist(transactionActions),
  service_hash: v.pipe(v.string(), v.regex(/^[A-Za-z0-9:._-]{8,128}$/, "8 to 128 of A-Z a-z 0-9 : . _ -")),
  user_id: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  capture_nonce: v.optional(v.pipe(v.string(), v.minLength(8), v.maxLength(128))),
  face_template: v.optional(v.unknown()),
  amount: v.optional(v.number()),
  currency: v.optional(currencySchema),
  document: v.optional(documentAttestationSchema),
  mandate_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  scope: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  context: v.optional(decisionSchema.entries.context),
});
export type TransactionInput = v.InferOutput<typeof transactionSchema>;

/**
 * The body, validated: money is an integer in the minor unit or `400 AMOUNT_INVALID` (rule 2,
 * also when a payment carries no amount); everything else `400 INVALID_INPUT` with its fields.
 */
export function transactionInput(body: unknown): TransactionInput {
  const record = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if ("amount" in record && !isMinorUnitAmount(record.amount)) throw new ApiError("AMOUNT_INVALID");
  if (record.action === "ACTION_PAYMENT" && !("amount" in record)) throw new ApiError("AMOUNT_INVALID");
  const input = parseWith(transactionSchema, body);
  if ((input.amount === undefined) !== (input.currency === undefined)) {
    throw new ApiError("INVALID_INPUT", { fields: [input.amount === undefined ? "amount" : "currency"] });
  }
  return input;
}

interface ResolvedIdentity {
  identity_id: string;
  erased: boolean;
  baseline: PresenceBaseline | null;
  template: { key_id: string; embedding: number[] } | null;
  document: { document_type: string; issuing_country: string; expires_on: string } | null;
  consent_revoked: boolean;
  session_active: boolean | null;
}

/**
 * The identity named by `user_id`, as this principal may name it: a first-party session names
 * only its own identity (another is `403 UNAUTHORIZED_DEVICE`; a revoked session `403
 * ACCESS_REVOKED`); a merchant names a person by the subject_ref it was given. An unknown person
 * is `403 IDENTITY_MISMATCH`; an erased identity or withdrawn consent `403 ACCESS_REVOKED`.
 */
export async function resolveIdentity(c: AppContext, userId: string): Promise<ResolvedIdentity> {
  const principal = c.var.principal!;
  if (principal.kind === "user" && userId !== principal.identityId) throw new ApiError("UNAUTHORIZED_DEVICE");
  const identity = await rpc<ResolvedIdentity | null>(c.var.db(), "identity_resolve", {
    merchant_id: principal.merchantId,
    environment: principal.environment,
    now: c.var.now.toISOString(),
    ...(principal.kind === "user"
      ? { user_id: principal.identityId, session_token_hash: principal.sessionTokenHash }
      : /^sub_[0-9a-f]{48}$/.test(userId)
        ? { subject_ref: userId }
        : { subject_ref: null }),
  });
  if (!identity) throw new ApiError("IDENTITY_MISMATCH", { reason: "unknown_user" });
  if (identity.session_active === false) throw new ApiError("ACCESS_REVOKED", { reason: "session_revoked" });
  if (identity.erased || identity.consent_revoked)
    throw new ApiError("ACCESS_REVOKED", { reason: identity.erased ? "identity_erased" : "consent_revoked" });
  return identity;
}

export interface Approval {
  transaction_id: string;
  service_hash: string;
  immutability_seal: string;
  assurance_level: AssuranceLevel;
  receipt_id: string;
  receipt_code: string;
}

/**
 * Judges a live capture for one identity at the instant of the act and records it: the face must
 * be this identity's (`IDENTITY_MISMATCH` when it is someone else's, `FACE_MATCH_BELOW_THRESHOLD`
 * when it is nobody's), the engine must find a live, uncoerced person, and money or signature acts
 * need a valid document. The capture row (refused ones too, for audit) and, on approval, its
 * signed receipt are written by one RPC.
 */
export async function judgeAndRecord(
  c: AppContext,
  input: TransactionInput,
  descriptor: PresenceDescriptor,
  identity: ResolvedIdentity,
  scenario: ForcedScenario | null,
): Promise<Approval> {
  const principal = c.var.principal!;
  const protector = await protectorFor(c);
  const live = protector.protect(descriptor.face.embedding);
  if (!identity.template || identity.template.key_id !== protector.keyId)
    throw new ApiError("ACCESS_REVOKED", { reason: "template_revoked" });
  const similarity = cosineSimilarity(live, identity.template.embedding);
  if (scenario === "subject_mismatch") throw new ApiError("IDENTITY_MISMATCH", { reason: "subject_mismatch" });
  if (similarity < FACE_MATCH_GATE) {
    const best = await bestMatch(c, principal.environment, protector, live);
    if (best && best.identity_id !== identity.identity_id && best.similarity >= FACE_MATCH_GATE) throw new ApiError("IDENTITY_MISMATCH");
    throw new ApiError("FACE_MATCH_BELOW_THRESHOLD", { confidence: Math.max(0, Math.round(similarity * 10_000) / 10_000) });
  }

  const judgement = judge(descriptor, c.var.now, identity.baseline, scenario);
  const newDocument: VerifiedDocument | null = input.document ? verifyDocument(input.document, descriptor.face.embedding, c.var.now) : null;
  const assurance: AssuranceLevel = identity.document || newDocument ? "face_voice_doc" : "face_voice";
  const refusal = !judgement.livenessPassed
    ? new ApiError("BIOMETRIC_LIVENESS_FAILED", { reason: judgement.refusal })
    : judgement.coercion
      ? new ApiError("COERCION_DETECTED")
      : DOCUMENT_ACTIONS.has(input.action) && assurance !== "face_voice_doc"
        ? documentRequired(input.action)
        : null;

  const capture = {
    id: crypto.randomUUID(),
    merchant_id: principal.merchantId,
    environment: principal.environment,
    identity_id: identity.identity_id,
    action: input.action,
    service_hash: input.service_hash,
    amount_minor: input.amount ?? null,
    currency: input.currency ?? null,
    capture_nonce: descriptor.capture_nonce,
    liveness_passed: judgement.livenessPassed,
    liveness_reason: judgement.livenessPassed ? null : judgement.refusal,
    coercion_signal: judgement.coercion,
    assurance_level: refusal ? null : assurance,
    face_similarity: similarity,
    engine_version: ENGINE_VERSION,
    scenario,
    created_at: c.var.now.toISOString(),
  };
  const receipt = refusal ? null : await actReceipt(c, input, capture.id, assurance);
  await rpc(c.var.db(), "capture_record", {
    capture,
    receipt,
    document: refusal ? null : newDocument,
    baseline: identity.baseline ? null : baselineFromResult(judgement.result),
  });
  if (refusal) throw refusal;
  return {
    transaction_id: capture.id,
    service_hash: input.service_hash,
    immutability_seal: receipt!.seal,
    assurance_level: assurance,
    receipt_id: receipt!.id,
    receipt_code: receipt!.code,
  };
}

/** `403 DOCUMENT_REQUIRED` for an act that needs a valid identity document on record (rule 3). */
export function documentRequired(action: TransactionAction): ApiError {
  return new ApiError("DOCUMENT_REQUIRED", {
    action,
    required: "a valid identity document on record",
    accepted_documents: documentTypes,
  });
}

/** The signed receipt of an act recorded as capture `captureId`, ready for the capture's RPC. */
export async function actReceipt(c: AppContext, input: TransactionInput, captureId: string, assurance: AssuranceLevel) {
  const principal = c.var.principal!;
  const id = crypto.randomUUID();
  const code = newReceiptCode();
  const { jws, seal } = await buildReceipt(c.var.config, {
    receiptId: id,
    code,
    captureId,
    merchantId: principal.merchantId,
    environment: principal.environment,
    action: input.action,
    assuranceLevel: assurance,
    serviceHash: input.service_hash,
    issuedAt: c.var.now,
    amountMinor: input.amount ?? null,
    currency: input.currency ?? null,
  });
  return { id, code, jws, seal };
}
