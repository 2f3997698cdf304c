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
import { documentTypes } from "./documents";
import { consentVersion, type EnrollmentKeys, enrollLive, retentionDays } from "./enrollment";
import { judgedLive, PROOF_EXAMPLE, proofField, proofFrom, recognisedBy } from "./proof";
import type { ClaimCapture } from "./rpc";

/**
 * How a legal identity would be attached to the claim. `document` (an identity document read on
 * the device) is the one source; it is refused until a document can be verified (see claimPerson).
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

/** The claim's answer (resource API 2.1): `source` is absent, since a claim binds no legal identity yet. */
export const claimAnswerSchema = v.object({
  object: v.literal("claim"),
  facetoken: described(v.string(), "The handle the merchant keeps in place of the person: the same for this person on every later call."),
  claimed_at: instant("When the person was claimed."),
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
 * Claims the live person of the proof. In order: a `source` is `403 DOCUMENT_REQUIRED`
 * (`document_unverifiable`: the legal identity cannot be bound yet), a malformed proof `400
 * INVALID_INPUT`, a proof without the person's consent `403 CONSENT_REQUIRED`, a proof that is not
 * a live person now `403 LIVENESS_REQUIRED`, a person the merchant holds already `409
 * ALREADY_CLAIMED` (with `facetoken`; nothing written, nothing billed), a month whose allowance is
 * used up `402 ALLOWANCE_EXHAUSTED` (nothing written). `receiptBaseUrl` is where the receipt's
 * public verification is served.
 */
export async function claimPerson(
  deps: Deps,
  keys: EnrollmentKeys,
  tenant: Tenant,
  body: v.InferOutput<typeof claimSchema>,
  options: { receiptBaseUrl: string; storedResponse: PendingResponse | undefined; rp: RelyingParty },
): Promise<Claim> {
  if (body.source !== undefined)
    throw new ApiError("DOCUMENT_REQUIRED", { reason: "document_unverifiable", source: body.source, accepted_documents: documentTypes });
  const proof = proofFrom(body.proof);
  const consent = v.safeParse(proofConsentSchema, proof.consent);
  if (!consent.success) throw new ApiError("CONSENT_REQUIRED");
  const judgement = judgedLive(proof.descriptor, deps.now);
  const held = await recognisedBy(keys, tenant, keys.templates.protector.protect(proof.descriptor.face.embedding));
  if (held) throw new ApiError("ALREADY_CLAIMED", { facetoken: held.facetoken });

  const captureId = crypto.randomUUID();
  const capture: Omit<ClaimCapture, "device_id" | "device_binding"> = {
    id: captureId,
    service_hash: `claim:${captureId.replace(/-/g, "")}`,
    coercion_signal: judgement.coercion,
    assurance_level: "face_voice",
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
      ...(storedResponse && { stored_response: { record: storedResponse.record, status: 201, body: claim } }),
    }).catch((error) => {
      // A racing claim of the same person committed first: the facetoken it holds is this one.
      throw error instanceof ApiError && error.code === "ALREADY_CLAIMED"
        ? new ApiError("ALREADY_CLAIMED", { facetoken: enrollee.subjectRef })
        : error;
    });
    if (storedResponse) storedResponse.stored = true;
    return claim;
  });
}
