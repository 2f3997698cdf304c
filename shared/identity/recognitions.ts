/**
 * POST /v1/identity/recognitions (resource API 4.2): is the live person of this proof one the
 * merchant has claimed? Free and stateless: judged and searched, nothing written, no capture used
 * up (so the same proof may still make a claim or answer an attribute within its five minutes).
 */
import * as v from "valibot";
import { captureDevice } from "../devices/capture";
import type { RelyingParty } from "../devices/ceremony";
import { described } from "../kernel/answers";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { deviceBindingAnswer } from "./answers";
import { judgedLive, PROOF_EXAMPLE, proofField, proofFrom, type RecognitionKeys, recognisedBy } from "./proof";

export const recognitionSchema = v.pipe(v.strictObject({ proof: proofField }), v.examples([{ proof: PROOF_EXAMPLE }]));

/** A recognition's answer: who the live person is for this merchant, or no one. */
export const recognitionAnswerSchema = v.object({
  object: v.literal("recognition"),
  matched: described(v.boolean(), "Whether the live person is one the merchant has claimed."),
  facetoken: described(v.nullable(v.string()), "The person's facetoken when matched; null otherwise."),
  confidence: described(
    v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    "The face match score (4 decimals, calibrated so that 0.75 is the gate) when matched; 0 when not (an unmatched answer carries no similarity).",
  ),
  device_binding: v.optional(deviceBindingAnswer),
});
export type Recognition = v.InferOutput<typeof recognitionAnswerSchema>;

/**
 * The facetoken the merchant holds for the live person, or `matched: false` with no facetoken and
 * a confidence of 0: as face-identify, an unmatched answer carries no similarity (a score below the
 * gate would let a caller climb towards someone's face, query by query).
 */
export async function recognisePerson(
  deps: Deps,
  keys: RecognitionKeys,
  tenant: Tenant,
  body: v.InferOutput<typeof recognitionSchema>,
  rp: RelyingParty,
): Promise<Recognition> {
  const proof = proofFrom(body.proof);
  const { descriptor } = proof;
  judgedLive(descriptor, deps.now);
  const held = await recognisedBy(keys, tenant, keys.templates.protector.protect(descriptor.face.embedding));
  if (!held) return { object: "recognition", matched: false, facetoken: null, confidence: 0 };
  // A known face counts only signed on one of its devices (live mode); the challenge is used up by it.
  const device = await captureDevice(deps, tenant, {
    identityId: held.identityId,
    purpose: "login",
    challenge: descriptor.capture_nonce,
    descriptor: proof.descriptorAsSent,
    assertion: proof.device?.assertion,
    rp,
  });
  return {
    object: "recognition",
    matched: true,
    facetoken: held.facetoken,
    confidence: Math.min(1, Math.round(held.similarity * 10_000) / 10_000),
    device_binding: device.device_binding,
  };
}
