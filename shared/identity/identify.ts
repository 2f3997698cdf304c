/**
 * face-identify (spec 4.2): is this live face already known to the caller merchant? Answers its
 * pseudonym (`subject_ref`), never the identity id. Only persons who consented with this merchant
 * (enrolled through it, consent not withdrawn, not erased) are ever matched, and the capture is
 * claimed for identification in the same RPC (one identification per capture, see
 * private.capture_nonces).
 */
import * as v from "valibot";
import { type CaptureDevice, captureDevice, deviceAssertionField } from "../devices/capture";
import type { RelyingParty } from "../devices/ceremony";
import type { DeviceChallengePurpose } from "../devices/policy";
import type { PresenceModality } from "../engine";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { identifyAnswerSchema } from "./answers";
import { matchScore, searchOutcome } from "./face-match";
import { descriptorFrom, judge } from "./presence";
import type {} from "./rpc";
import type { ForcedScenario } from "./scenario";
import { subjectRef } from "./subject-ref";
import type { Templates } from "./template-store";

export const identifySchema = v.object({
  face_template: v.unknown(),
  capture_nonce: v.pipe(v.string(), v.minLength(8), v.maxLength(128)),
  /** The device's assertion over the capture (required in live mode: shared/devices/capture.ts). */
  device_assertion: deviceAssertionField,
});

export async function identifyFace(
  deps: Deps,
  keys: { templates: Templates; subjectRefSecret: string },
  tenant: Tenant,
  body: v.InferOutput<typeof identifySchema>,
  scenario: ForcedScenario | null,
  rp: RelyingParty,
) {
  return (await identifyOnDevice(deps, keys, tenant, body, { scenario, rp, purpose: "login" })).answer;
}

/**
 * face-identify's judgement, with the device that signed the capture (null when unmatched): a hosted
 * screen identifies, then acts with the same capture, and its act takes the device verified here
 * (its challenge is single use). `purpose` is what the challenge was issued for; `modality` what the
 * capture must prove beyond the face (a hosted step-up's is `face`, judged as its act will be: D-428).
 */
export async function identifyOnDevice(
  deps: Deps,
  keys: { templates: Templates; subjectRefSecret: string },
  tenant: Tenant,
  body: v.InferOutput<typeof identifySchema>,
  {
    scenario,
    rp,
    purpose,
    modality,
  }: { scenario: ForcedScenario | null; rp: RelyingParty; purpose: DeviceChallengePurpose; modality?: PresenceModality },
): Promise<{ answer: v.InferOutput<typeof identifyAnswerSchema>; device: CaptureDevice | null }> {
  const descriptor = descriptorFrom(body.face_template, body.capture_nonce);
  const { livenessPassed, refusal } = judge(descriptor, deps.now, null, scenario, modality);
  if (!livenessPassed) throw new ApiError("LIVE_CAPTURE_REQUIRED", { reason: refusal });

  const embedding = keys.templates.protector.protect(descriptor.face.embedding);
  const match = await rpc(keys.templates.store, "face_identify", {
    environment: tenant.environment,
    merchant_id: tenant.merchantId,
    key_id: keys.templates.protector.keyId,
    embedding,
    code: keys.templates.protector.code(embedding),
    capture_nonce: descriptor.capture_nonce,
    now: deps.now.toISOString(),
  }).catch((error) => {
    throw error instanceof ApiError && error.code === "DATABASE_UNAVAILABLE" ? new ApiError("TEMPLATE_STORE_UNAVAILABLE") : error;
  });
  // An unmatched answer carries no similarity at all (docs/decisions.md, D-073): the nearest neighbour's
  // score below the gate would let a caller climb towards someone else's face, query by query. A near
  // miss (two consented persons both at the gate, too close to tell apart: D-385) answers no one either.
  const outcome = searchOutcome(match.identity_id ? (match.similarity ?? null) : null, match.second_similarity ?? null);
  if (!match.identity_id || outcome !== "matched" || scenario === "subject_mismatch") {
    return { answer: { matched: false, subject_ref: null, confidence: 0 }, device: null };
  }
  // The match and the device are judged together: a known face counts only signed on one of its own
  // devices (live mode); an unmatched face answers as before, naming no device.
  const device = await captureDevice(deps, tenant, {
    identityId: match.identity_id,
    purpose,
    challenge: body.capture_nonce,
    descriptor: body.face_template,
    assertion: body.device_assertion,
    rp,
  });
  const confidence = matchScore(match.similarity ?? 0);
  // The pseudonym was recorded when this merchant enrolled the person (their consent with it).
  const ref = await subjectRef(keys.subjectRefSecret, match.identity_id, tenant.merchantId);
  return { answer: { matched: true, subject_ref: ref, confidence, device_binding: device.device_binding }, device };
}
