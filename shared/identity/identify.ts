/**
 * face-identify (spec 4.2): is this live face already known? Answers the caller merchant's
 * pseudonym (`subject_ref`), never the identity id.
 */
import * as v from "valibot";
import { rpc } from "../platform/db/rpc";
import type { Deps } from "../platform/deps";
import { ApiError } from "../platform/errors";
import type { Tenant } from "../platform/principal";
import { descriptorFrom, FACE_MATCH_GATE, judge } from "./presence";
import type { ForcedScenario } from "./scenario";
import { subjectRef } from "./subject-ref";
import { bestMatch, type Templates } from "./template-store";

export const identifySchema = v.object({
  face_template: v.unknown(),
  capture_nonce: v.pipe(v.string(), v.minLength(8), v.maxLength(128)),
});

export async function identifyFace(
  deps: Deps,
  keys: { templates: Templates; subjectRefSecret: string },
  tenant: Tenant,
  body: v.InferOutput<typeof identifySchema>,
  scenario: ForcedScenario | null,
) {
  const descriptor = descriptorFrom(body.face_template, body.capture_nonce);
  const { livenessPassed, refusal } = judge(descriptor, deps.now, null, scenario);
  if (!livenessPassed) throw new ApiError("LIVE_CAPTURE_REQUIRED", { reason: refusal });

  const embedding = keys.templates.protector.protect(descriptor.face.embedding);
  const match = await bestMatch(keys.templates, tenant.environment, embedding).catch((error) => {
    throw error instanceof ApiError && error.code === "DATABASE_UNAVAILABLE" ? new ApiError("TEMPLATE_STORE_UNAVAILABLE") : error;
  });
  const confidence = Math.max(0, Math.round((match?.similarity ?? 0) * 10_000) / 10_000);
  if (!match?.reachable || match.similarity < FACE_MATCH_GATE || scenario === "subject_mismatch") {
    return { matched: false, subject_ref: null, confidence };
  }

  const ref = await subjectRef(keys.subjectRefSecret, match.identity_id, tenant.merchantId);
  await rpc(deps.sql, "subject_ref_record", {
    merchant_id: tenant.merchantId,
    subject_ref: ref,
    identity_id: match.identity_id,
    now: deps.now.toISOString(),
  });
  return { matched: true, subject_ref: ref, confidence };
}
