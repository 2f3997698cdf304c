import type { CaptureDevice } from "../devices/capture";
import { baselineFromResult, type PresenceDescriptor } from "../engine";
import { verifyDocument } from "../identity/document-verification";
import { documentRefused } from "../identity/documents";
import { matchScore, sameFace, searchOutcome } from "../identity/face-match";
import { judge } from "../identity/presence";
import type { ResolvedIdentity } from "../identity/rpc";
import { bestMatches, type Templates, templateSimilarity } from "../identity/template-store";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { KeySet } from "../lib/signing";
import type { AssuranceLevel } from "../receipts/signed-receipt";
import { DOCUMENT_ACTIONS, type TransactionBody } from "./input";
import { type ActOptions, actReceipt, captureRow, documentRequired, intentOf } from "./record";
import type { Approval, CaptureRecordParams } from "./rpc";

/**
 * Judges a live capture for one identity at the instant of the act and records it: the face must
 * be this identity's (`IDENTITY_MISMATCH` when it is another person who consented with this
 * merchant, `FACE_MATCH_BELOW_THRESHOLD` otherwise: another merchant's persons are never
 * revealed), the engine must find a live, uncoerced person, and money or signature acts
 * need a valid document (on record, or carried by this capture and verified now). Every judged
 * act is written by one RPC, refused ones too: the capture row (with its refusal's code, and the
 * purpose the person was shown), on approval its signed receipt, and under an Idempotency-Key the
 * answer a retry replays. So a refused capture is used up like an approved one (its nonce is
 * claimed by the same RPC) and cannot approve later, for this person or another.
 */
export async function judgeAndRecord(
  deps: Deps,
  keys: { signing: KeySet; templates: Templates },
  tenant: Tenant,
  body: TransactionBody,
  descriptor: PresenceDescriptor,
  identity: ResolvedIdentity,
  {
    scenario,
    storedResponse,
    intent,
    device: evidence,
  }: Pick<ActOptions, "scenario" | "storedResponse" | "intent"> & {
    device: { verified: CaptureDevice };
  },
): Promise<Approval> {
  const device = evidence.verified;
  const { protector } = keys.templates;
  const live = protector.protect(descriptor.face.embedding);
  if (!identity.template || identity.template.key_id !== protector.keyId)
    throw new ApiError("ACCESS_REVOKED", { reason: "template_revoked" });
  // The 1:1 check is made in the store against the sealed template (D-680); null: no template under this key.
  const similarity = await templateSimilarity(keys.templates, tenant.environment, identity.identity_id, live);
  if (similarity === null) throw new ApiError("ACCESS_REVOKED", { reason: "template_revoked" });
  const judged = { identity_id: identity.identity_id, face_similarity: matchScore(similarity), scenario };
  const record = (params: Omit<CaptureRecordParams, "stored_response">, answer: { status: number; body: unknown }) =>
    rpc(deps.sql, "capture_record", {
      ...params,
      // The answer, approval or refusal, is stored with the act it answers (a refused capture is written too).
      ...(storedResponse && { stored_response: { record: storedResponse.record, ...answer } }),
    }).catch((error: unknown) => {
      // The document is another person's (HA438): the same refusal as every document problem, in full (D-427).
      if (error instanceof ApiError && error.code === "DOCUMENT_REQUIRED") throw documentRefused("document_already_bound");
      throw error;
    });

  const mismatch = await faceMismatch(keys.templates, tenant, identity, live, similarity, scenario);
  if (mismatch) {
    // The face is not this person's: nothing is judged, but the act is recorded and its capture used up.
    const capture = captureRow(tenant, body, deps.now, {
      id: crypto.randomUUID(),
      captureNonce: descriptor.capture_nonce,
      assurance: null,
      judged: { ...judged, liveness_passed: false, liveness_reason: null, coercion_signal: false },
      intent: intentOf(body, intent),
      refusal: mismatch,
      device,
    });
    await record({ capture, receipt: null }, { status: mismatch.status, body: mismatch.body() });
    if (storedResponse) storedResponse.stored = true;
    throw mismatch;
  }

  // Evidence that fails passive authentication is refused before anything is judged or written.
  const newDocument = body.document ? await verifyDocument(deps.sql, tenant.environment, body.document, deps.now) : null;
  const { baseline } = identity;
  const judgement = judge(descriptor, deps.now, baseline, scenario, body.presence);
  // A face-only capture is level `face` whatever is on record: it proves no voice (D-428).
  const assurance: AssuranceLevel = body.presence === "face" ? "face" : identity.document || newDocument ? "face_voice_doc" : "face_voice";
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
      ...judged,
      liveness_passed: judgement.livenessPassed,
      liveness_reason: judgement.livenessPassed ? null : judgement.refusal,
      coercion_signal: judgement.coercion,
    },
    intent: intentOf(body, intent),
    refusal,
    device,
  });
  const receipt = refusal
    ? null
    : await actReceipt(keys.signing, tenant, body, capture.id, assurance, deps.now, undefined, device.device_binding);
  const approval: Approval | null = receipt && {
    success: true,
    status: "approved",
    transaction_id: capture.id,
    service_hash: body.service_hash,
    immutability_seal: receipt.seal,
    assurance_level: assurance,
    receipt_id: receipt.id,
    receipt_code: receipt.code,
    device_binding: device.device_binding,
  };
  await record(
    { capture, receipt, document: refusal ? null : newDocument, baseline: baseline ? null : baselineFromResult(judgement.result) },
    refusal ? { status: refusal.status, body: refusal.body() } : { status: 200, body: approval },
  );
  if (storedResponse) storedResponse.stored = true;
  if (refusal || !approval) throw refusal;
  return approval;
}

/**
 * Why the live face is not `identity`'s, or null when it is: below the 0.75 gate the face is
 * searched among this merchant's persons; another of them is `IDENTITY_MISMATCH`, anyone else
 * `FACE_MATCH_BELOW_THRESHOLD` (no similarity in it: below the gate a number would make the sink the
 * oracle face-identify is not). The sandbox's `subject_mismatch` forces the first.
 */
async function faceMismatch(
  templates: Templates,
  tenant: Tenant,
  identity: ResolvedIdentity,
  live: number[],
  similarity: number,
  scenario: ActOptions["scenario"],
): Promise<ApiError | null> {
  if (scenario === "subject_mismatch") return new ApiError("IDENTITY_MISMATCH", { reason: "subject_mismatch" });
  if (sameFace(similarity)) return null;
  // Another of the merchant's persons only when the search names them clearly: a near miss (two
  // persons at the gate, too close to tell apart: D-385) names no one.
  const [best, second] = await bestMatches(templates, tenant.environment, live, tenant.merchantId, 2);
  const outcome = searchOutcome(best?.similarity ?? null, second?.similarity ?? null);
  if (best && best.identity_id !== identity.identity_id && outcome === "matched") return new ApiError("IDENTITY_MISMATCH");
  return new ApiError("FACE_MATCH_BELOW_THRESHOLD");
}
