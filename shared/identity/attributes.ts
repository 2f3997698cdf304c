/**
 * POST /v1/identity/attributes (resource API 4.3): one predicate about a claimed person, asked
 * with a fresh proof that this person is present now. The answer says only the predicate's truth:
 * never the document, its country or a date. Where each attribute's truth comes from:
 *
 * | attribute                 | true when                                                                      |
 * | ------------------------- | ------------------------------------------------------------------------------ |
 * | `document_verified` | a verified identity document is on record and unexpired at this instant        |
 * | `age_over_18`, `age_over_21` | the verified, unexpired document's date of birth makes the person at least that old today (UTC) |
 *
 * An age attribute of a person with no such document, or one whose date of birth is unknown, is
 * refused (`403 DOCUMENT_REQUIRED`, `reason: document_unverifiable`): unknown is not false, and no
 * capture is used. An answered
 * attribute uses its capture as an act (identity_attribute_record), with the answer stored under
 * its Idempotency-Key in the same transaction.
 */
import * as v from "valibot";
import { captureDevice } from "../devices/capture";
import type { RelyingParty } from "../devices/ceremony";
import { described, instant, metadataAnswer } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { PendingResponse } from "../kernel/rpc";
import { metadataSchema } from "../kernel/validation";
import { deviceBindingAnswer } from "./answers";
import { sameFace } from "./face-match";
import { ageOn } from "./mrz";
import { facetokenField, judgedLive, PROOF_EXAMPLE, proofField, proofFrom, type RecognitionKeys } from "./proof";
import type { ResolvedIdentity } from "./rpc";
import { templateSimilarity } from "./template-store";

/** Every attribute a merchant may ask for; those without evidence are refused, not guessed. */
export const attributeNames = ["document_verified", "age_over_18", "age_over_21"] as const;
type AttributeName = (typeof attributeNames)[number];

/** The age each age attribute asks for. */
const AGE_OVER: Partial<Record<AttributeName, number>> = { age_over_18: 18, age_over_21: 21 };

export const attributeSchema = v.pipe(
  v.strictObject({
    proof: proofField,
    facetoken: facetokenField,
    attribute: v.picklist(attributeNames),
    metadata: v.optional(metadataSchema),
  }),
  v.examples([{ proof: PROOF_EXAMPLE, facetoken: `sub_${"4f0c".repeat(12)}`, attribute: "age_over_18" as const }]),
);

/** An attribute's answer: the predicate's truth only, never the document, its country or a date. */
export const attributeAnswerSchema = v.object({
  object: v.literal("attribute"),
  attribute: described(v.picklist(attributeNames), "The attribute asked for."),
  value: described(v.boolean(), "Whether the attribute holds for the person at this instant."),
  facetoken: described(v.string(), "The person the attribute is about (the facetoken asked with)."),
  asserted_at: instant("When the attribute was asserted."),
  device_binding: deviceBindingAnswer,
  metadata: metadataAnswer,
});
export type AttributeAnswer = v.InferOutput<typeof attributeAnswerSchema>;

/**
 * The predicate's truth for the person of `facetoken`, who must be the live person of the proof:
 * `403 LIVENESS_REQUIRED` when the proof is no live person now; `403 IDENTITY_MISMATCH` when the
 * facetoken names nobody this merchant holds or the live face is not theirs (below the 0.75 gate);
 * `403 ACCESS_REVOKED` when their consent was withdrawn, they were erased or their template was
 * revoked; `409 CAPTURE_REPLAYED` when the capture was used for an act before.
 */
export async function proveAttribute(
  deps: Deps,
  keys: RecognitionKeys,
  tenant: Tenant,
  body: v.InferOutput<typeof attributeSchema>,
  storedResponse: PendingResponse | undefined,
  rp: RelyingParty,
): Promise<AttributeAnswer> {
  const proof = proofFrom(body.proof);
  const { descriptor } = proof;
  judgedLive(descriptor, deps.now);
  const identity = await rpc(deps.sql, "identity_resolve", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    subject_ref: body.facetoken,
  });
  if (!identity) throw new ApiError("IDENTITY_MISMATCH");
  if (identity.erased || identity.consent_revoked)
    throw new ApiError("ACCESS_REVOKED", { reason: identity.erased ? "identity_erased" : "consent_revoked" });
  const { protector } = keys.templates;
  if (!identity.template || identity.template.key_id !== protector.keyId)
    throw new ApiError("ACCESS_REVOKED", { reason: "template_revoked" });
  // The 1:1 check is the store's, against the sealed template (D-680).
  const similarity = await templateSimilarity(
    keys.templates,
    tenant.environment,
    identity.identity_id,
    protector.protect(descriptor.face.embedding),
  );
  if (similarity === null) throw new ApiError("ACCESS_REVOKED", { reason: "template_revoked" });
  if (!sameFace(similarity)) throw new ApiError("IDENTITY_MISMATCH");
  // The person's own device must have signed this capture (live mode), before anything is answered or recorded.
  const device = await captureDevice(deps, tenant, {
    identityId: identity.identity_id,
    purpose: "attribute",
    challenge: descriptor.capture_nonce,
    descriptor: proof.descriptorAsSent,
    assertion: proof.device?.assertion,
    rp,
  });

  const answer: AttributeAnswer = {
    object: "attribute",
    attribute: body.attribute,
    value: attributeValue(body.attribute, identity.document, deps.now),
    facetoken: body.facetoken,
    asserted_at: deps.now.toISOString(),
    device_binding: device.device_binding,
    metadata: body.metadata ?? {},
  };
  await rpc(deps.sql, "identity_attribute_record", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    capture_nonce: descriptor.capture_nonce,
    ...(storedResponse && { stored_response: { record: storedResponse.record, status: 200, body: answer } }),
  });
  if (storedResponse) storedResponse.stored = true;
  return answer;
}

/** The attribute's truth from the verified document on record (null: none), at `now`. */
function attributeValue(attribute: AttributeName, document: ResolvedIdentity["document"], now: Date): boolean {
  const age = AGE_OVER[attribute];
  if (age === undefined) return document !== null;
  if (!document?.date_of_birth)
    throw new ApiError("DOCUMENT_REQUIRED", {
      reason: "document_unverifiable",
      attribute,
      required: "a verified identity document with a date of birth",
    });
  return ageOn(document.date_of_birth, now.toISOString().slice(0, 10)) >= age;
}
