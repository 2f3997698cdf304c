import { baselineFromResult, cosineSimilarity, type PresenceDescriptor } from "../engine";
import { verifyDocument } from "../identity/document-verification";
import { FACE_MATCH_GATE, judge } from "../identity/presence";
import type { ResolvedIdentity } from "../identity/rpc";
import { bestMatch, type Templates } from "../identity/template-store";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { KeySet } from "../lib/signing";
import type { AssuranceLevel } from "../receipts/signed-receipt";
import { DOCUMENT_ACTIONS, type TransactionBody } from "./input";
import { type ActOptions, actReceipt, captureRow, documentRequired } from "./record";
import type { Approval } from "./rpc";

/**
 * Judges a live capture for one identity at the instant of the act and records it: the face must
 * be this identity's (`IDENTITY_MISMATCH` when it is another person who consented with this
 * merchant, `FACE_MATCH_BELOW_THRESHOLD` otherwise: another merchant's persons are never
 * revealed), the engine must find a live, uncoerced person, and money or signature acts
 * need a valid document (on record, or carried by this capture and verified now). The capture row (refused ones too, for audit), on approval its signed
 * receipt, and under an Idempotency-Key the answer a retry replays are written by one RPC.
 */
export async function judgeAndRecord(
  deps: Deps,
  keys: { signing: KeySet; templates: Templates },
  tenant: Tenant,
  body: TransactionBody,
  descriptor: PresenceDescriptor,
  identity: ResolvedIdentity,
  { scenario, storedResponse }: Pick<ActOptions, "scenario" | "storedResponse">,
): Promise<Approval> {
  const { protector } = keys.templates;
  const live = protector.protect(descriptor.face.embedding);
  if (!identity.template || identity.template.key_id !== protector.keyId)
    throw new ApiError("ACCESS_REVOKED", { reason: "template_revoked" });
  const similarity = cosineSimilarity(live, identity.template.embedding);
  if (scenario === "subject_mismatch") throw new ApiError("IDENTITY_MISMATCH", { reason: "subject_mismatch" });
  if (similarity < FACE_MATCH_GATE) {
    const best = await bestMatch(keys.templates, tenant.environment, live, tenant.merchantId);
    if (best && best.identity_id !== identity.identity_id && best.similarity >= FACE_MATCH_GATE) throw new ApiError("IDENTITY_MISMATCH");
    // No similarity in the refusal: below the gate a number would make the sink the oracle face-identify is not.
    throw new ApiError("FACE_MATCH_BELOW_THRESHOLD");
  }

  // Evidence that fails passive authentication is refused before anything is judged or written.
  const newDocument = body.document ? await verifyDocument(deps.sql, tenant.environment, body.document, deps.now) : null;
  const { baseline } = identity;
  const judgement = judge(descriptor, deps.now, baseline, scenario);
  const assurance: AssuranceLevel = identity.document || newDocument ? "face_voice_doc" : "face_voice";
  const refusal = !judgement.livenessPassed
    ? new ApiError("BIOMETRIC_LIVENESS_FAILED", { reason: judgement.refusal })
    : judgement.coercion
      ? new ApiError("COERCION_DETECTED")
      : DOCUMENT_ACTIONS.has(body.action) && assurance !== "face_voice_doc"
        ? documentRequired(body.action)
        : null;

  const capture = captureRow(tenant, body, deps.now, {
    id: crypto.randomUUID(),
    captureNonce: descriptor.capture_nonce,
    assurance: refusal ? null : assurance,
    judged: {
      identity_id: identity.identity_id,
      liveness_passed: judgement.livenessPassed,
      liveness_reason: judgement.livenessPassed ? null : judgement.refusal,
      coercion_signal: judgement.coercion,
      face_similarity: similarity,
      scenario,
    },
  });
  const receipt = refusal ? null : await actReceipt(keys.signing, tenant, body, capture.id, assurance, deps.now);
  const approval: Approval | null = receipt && {
    success: true,
    status: "approved",
    transaction_id: capture.id,
    service_hash: body.service_hash,
    immutability_seal: receipt.seal,
    assurance_level: assurance,
    receipt_id: receipt.id,
    receipt_code: receipt.code,
  };
  await rpc(deps.sql, "capture_record", {
    capture,
    receipt,
    document: refusal ? null : newDocument,
    baseline: baseline ? null : baselineFromResult(judgement.result),
    // The answer, approval or refusal, is stored with the act it answers (a refused capture is written too).
    ...(storedResponse && {
      stored_response: {
        record: storedResponse.record,
        ...(refusal ? { status: refusal.status, body: refusal.body() } : { status: 200, body: approval }),
      },
    }),
  });
  if (storedResponse) storedResponse.stored = true;
  if (refusal || !approval) throw refusal;
  return approval;
}
