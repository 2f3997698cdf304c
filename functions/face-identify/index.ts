/**
 * POST /functions/v1/face-identify (spec 4.2): is this live face already known? Answers the
 * caller merchant's pseudonym (`subject_ref`), never the identity id. Publishable key allowed.
 */
import * as v from "valibot";
import { descriptorFrom, FACE_MATCH_GATE, judge } from "../../shared/identity/presence";
import { forcedScenario } from "../../shared/identity/scenario";
import { subjectRef } from "../../shared/identity/subject-ref";
import { bestMatch, protectorFor } from "../../shared/identity/template-store";
import { createFunctionApp } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { requireSecret } from "../../shared/platform/config";
import { rpc } from "../../shared/platform/db/client";
import { ApiError } from "../../shared/platform/errors";
import { replayGuard } from "../../shared/platform/replay-guard";
import { validJson } from "../../shared/platform/validation";

const app = createFunctionApp("face-identify");

const identifySchema = v.object({
  face_template: v.unknown(),
  capture_nonce: v.pipe(v.string(), v.minLength(8), v.maxLength(128)),
});

app.post("/", apiKeyAuth("publishable"), replayGuard(), async (c) => {
  const input = await validJson(c, identifySchema);
  const principal = c.var.principal!;
  const scenario = forcedScenario(c);
  const descriptor = descriptorFrom(input.face_template, input.capture_nonce);
  const { livenessPassed, refusal } = judge(descriptor, c.var.now, null, scenario);
  if (!livenessPassed) throw new ApiError("LIVE_CAPTURE_REQUIRED", { reason: refusal });

  const protector = await protectorFor(c);
  const match = await bestMatch(c, principal.environment, protector, protector.protect(descriptor.face.embedding)).catch((error) => {
    throw error instanceof ApiError && error.code === "DATABASE_UNAVAILABLE" ? new ApiError("TEMPLATE_STORE_UNAVAILABLE") : error;
  });
  const confidence = Math.max(0, Math.round((match?.similarity ?? 0) * 10_000) / 10_000);
  if (!match?.reachable || match.similarity < FACE_MATCH_GATE || scenario === "subject_mismatch") {
    return c.json({ matched: false, subject_ref: null, confidence });
  }

  const ref = await subjectRef(requireSecret(c.var.config, "SUBJECT_REF_SECRET"), match.identity_id, principal.merchantId);
  await rpc(c.var.db(), "subject_ref_record", {
    merchant_id: principal.merchantId,
    subject_ref: ref,
    identity_id: match.identity_id,
    now: c.var.now.toISOString(),
  });
  return c.json({ matched: true, subject_ref: ref, confidence });
});

export default app;
