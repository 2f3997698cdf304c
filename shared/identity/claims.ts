/**
 * POST /v1/identity/claims (resource API 2.1, 4.1): claims a person for the merchant from a
 * presence proof (docs/resource-api.md, "The proof"). A claim is the person's enrolment with the
 * merchant (the person's consent travels in the proof), recorded as an `ACTION_SIGNUP` capture
 * with its signed receipt and billed once per person for life, all in one transaction
 * (identity_claim, which calls private.billing_charge_claim). A person the merchant already holds
 * is `409 ALREADY_CLAIMED` with the facetoken held.
 */
import * as v from "valibot";
import type { RelyingParty } from "../devices/ceremony";
import { ENGINE_VERSION } from "../engine";
import { described, instant, metadataAnswer } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { PendingResponse } from "../kernel/rpc";
import { metadataSchema } from "../kernel/validation";
import { buildReceipt, newReceiptCode } from "../receipts/signed-receipt";
import { deviceBindingAnswer } from "./answers";
import { verifyDocument } from "./document-verification";
import { documentEvidenceSchema, documentRefused } from "./documents";
import { consentVersion, type EnrollmentKeys, enrollLive, retentionDays } from "./enrollment";
import { judgedLive, PROOF_EXAMPLE, proofField, proofFrom, recognisedBy } from "./proof";
import type { ClaimCapture } from "./rpc";

/**
 * How a legal identity is attached to the claim (resource API 2.1, 4.1; D-517). `document`: the
 * eMRTD the device read, carried in the proof (`document`), verified by passive authentication as
 * the function API verifies a capture's document, and kept on the person's record.
 */
export const claimSources = ["document"] as const;

export const claimSchema = v.pipe(
  v.strictObject({
    proof: proofField,
    source: v.optional(v.picklist(claimSources)),
    metadata: v.optional(metadataSchema),
  }),
  v.examples([{ proof: PROOF_EXAMPLE, metadata: { signup: "A-1042" } }]),
);

/** The consent the device collected: what the person agreed to (the text's version) and for how long. */
const proofConsentSchema = v.strictObject({
  accepted: v.optional(v.literal(true)),
  version: consentVersion,
  retention_days: retentionDays,
});

/** The claim's answer (resource API 2.1): `source` only when the claim bound a legal identity. */
export const claimAnswerSchema = v.object({
  object: v.literal("claim"),
  facetoken: described(v.string(), "The handle the merchant keeps in place of the person: the same for this person on every later call."),
  claimed_at: instant("When the person was claimed."),
  source: v.optional(
    described(
      v.picklist(claimSources),
      "How the legal identity is attached: `document`, the identity document the device read, verified by passive authentication and kept on the person's record. Absent: the claim binds no legal identity.",
    ),
  ),
  device_binding: deviceBindingAnswer,
  receipt: described(
    v.object({
      id: described(v.string(), "The receipt's id."),
      code: described(v.string(), "The receipt's short code, for receipt-verify."),
      anchor: described(v.string(), "The receipt's immutability seal: the leaf anchored in the Merkle tree (live receipts only)."),
      url: described(v.pipe(v.string(), v.url()), "The receipt's public verification, GET /v1/receipts/{id}/verify."),
    }),
    "The signed receipt of the claim.",
  ),
  metadata: metadataAnswer,
});
export type Claim = v.InferOutput<typeof claimAnswerSchema>;

/**
 * Claims the live person of the proof. In order: a malformed proof `400 INVALID_INPUT`; with
 * `source: "document"`, a proof without a document `403 DOCUMENT_REQUIRED` (`document_missing`) or
 * with a malformed one `400 INVALID_INPUT` (`proof.document`); a proof without the person's consent
 * `403 CONSENT_REQUIRED`, a proof that is not a live person now `403 LIVENESS_REQUIRED`, a person the
 * merchant holds already `409 ALREADY_CLAIMED` (with `facetoken`; nothing written, nothing billed);
 * a document that fails passive authentication, or is another person's, `403 DOCUMENT_REQUIRED` with
 * the cause in `reason` (D-427, D-517); a month
 * whose allowance is used up `402 ALLOWANCE_EXHAUSTED` (nothing written). `receiptBaseUrl` is where
 * the receipt's public verification is served.
 */
export async function claimPerson(
  deps: Deps,
  keys: EnrollmentKeys,
  tenant: Tenant,
  body: v.InferOutput<typeof claimSchema>,
  options: { receiptBaseUrl: string; storedResponse: PendingResponse | undefined; rp: RelyingParty },
): Promise<Claim> {
  const proof = proofFrom(body.proof);
  const evidence = body.source === "document" ? documentEvidenceOf(proof.document) : null;
  const consent = v.safeParse(proofConsentSchema, proof.consent);
  if (!consent.success) throw new ApiError("CONSENT_REQUIRED");
  const judgement = judgedLive(proof.descriptor, deps.now);
  const held = await recognisedBy(keys, tenant, keys.templates.protector.protect(proof.descriptor.face.embedding));
  if (held) throw new ApiError("ALREADY_CLAIMED", { facetoken: held.facetoken });
  // The legal identity, when asked for: the document verified at this instant, as a capture's is (D-517).
  const document = evidence ? await verifyDocument(deps.sql, tenant.environment, evidence, deps.now) : null;

  const captureId = crypto.randomUUID();
  const capture: Omit<ClaimCapture, "device_id" | "device_binding"> = {
    id: captureId,
    service_hash: `claim:${captureId.replace(/-/g, "")}`,
    coercion_signal: judgement.coercion,
    assurance_level: document ? "face_voice_doc" : "face_voice",
    engine_version: ENGINE_VERSION,
  };
  const receiptId = crypto.randomUUID();
  const receiptCode = newReceiptCode();
  const device = {
    descriptor: proof.descriptorAsSent,
    registration: proof.device?.registration,
    assertion: proof.device?.assertion,
    rp: options.rp,
  };
  const live = {
    descriptor: proof.descriptor,
    judgement: judgement.result,
    consent: { version: consent.output.version, retention_days: consent.output.retention_days },
    device,
  };
  const signing = await keys.signing();
  return enrollLive(deps, keys, tenant, live, async (params, enrollee, _session, proved) => {
    const { jws, seal } = await buildReceipt(signing, {
      receiptId,
      code: receiptCode,
      captureId: capture.id,
      merchantId: tenant.merchantId,
      environment: tenant.environment,
      action: "ACTION_SIGNUP",
      assuranceLevel: capture.assurance_level,
      serviceHash: capture.service_hash,
      issuedAt: deps.now,
      deviceBinding: proved.device_binding,
    });
    const claim: Claim = {
      object: "claim",
      facetoken: enrollee.subjectRef,
      claimed_at: deps.now.toISOString(),
      ...(document && { source: "document" as const }),
      device_binding: proved.device_binding,
      receipt: { id: receiptId, code: receiptCode, anchor: seal, url: `${options.receiptBaseUrl}/v1/receipts/${receiptId}/verify` },
      metadata: body.metadata ?? {},
    };
    const { storedResponse } = options;
    await rpc(keys.templates.store, "identity_claim", {
      ...params,
      // The capture row names the credential that signed it, as every capture that counted does (D-347).
      capture: { ...capture, device_id: proved.device_id, device_binding: proved.device_binding },
      receipt: { id: receiptId, code: receiptCode, jws, seal },
      ...(document && { document }),
      ...(storedResponse && { stored_response: { record: storedResponse.record, status: 201, body: claim } }),
    }).catch((error) => {
      // A racing claim of the same person committed first: the facetoken it holds is this one.
      if (error instanceof ApiError && error.code === "ALREADY_CLAIMED")
        throw new ApiError("ALREADY_CLAIMED", { facetoken: enrollee.subjectRef });
      // The document is on record for another person (HA438): the same refusal as every document problem (D-427).
      if (error instanceof ApiError && error.code === "DOCUMENT_REQUIRED") throw documentRefused("document_already_bound");
      throw error;
    });
    if (storedResponse) storedResponse.stored = true;
    return claim;
  });
}

/**
 * The document a claim with `source: "document"` binds: the proof's `document`, in the shape a
 * capture's takes. None is `403 DOCUMENT_REQUIRED` (`document_missing`); a malformed one `400
 * INVALID_INPUT` naming `proof.document`.
 */
function documentEvidenceOf(document: unknown): v.InferOutput<typeof documentEvidenceSchema> {
  if (document === undefined) throw documentRefused("document_missing", { source: "document" });
  const parsed = v.safeParse(documentEvidenceSchema, document);
  if (!parsed.success) throw new ApiError("INVALID_INPUT", { fields: ["proof.document"] });
  return parsed.output;
}
