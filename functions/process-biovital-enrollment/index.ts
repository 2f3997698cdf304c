/**
 * POST /functions/v1/process-biovital-enrollment (spec 4.3): creates the identity from a live
 * capture, or recognises an already-enrolled face, and mints the device's first-party session.
 * Publishable key allowed. Consent is checked before any biometric data is looked at.
 */
import * as v from "valibot";
import { baselineFromResult } from "../../shared/engine";
import { enrol } from "../../shared/identity/enrollment";
import { descriptorFrom, judge } from "../../shared/identity/presence";
import { forcedScenario } from "../../shared/identity/scenario";
import { SESSION_TOKEN_HEADER } from "../../shared/identity/sessions";
import { createFunctionApp } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { ApiError } from "../../shared/platform/errors";
import { parseWith, readJson } from "../../shared/platform/validation";

const app = createFunctionApp("process-biovital-enrollment");

const consentSchema = v.strictObject({
  accepted: v.optional(v.literal(true)),
  version: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(64)),
  retention_days: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650)),
});

const enrollmentSchema = v.strictObject({
  capture_nonce: v.pipe(v.string(), v.minLength(8), v.maxLength(128)),
  face_template: v.unknown(),
  consent: consentSchema,
});

app.post("/", apiKeyAuth("publishable"), async (c) => {
  const body = await readJson(c);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError("INVALID_INPUT", { fields: ["body"] });
  const { consent, face_template } = body as Record<string, unknown>;
  if (typeof consent !== "object" || consent === null || (consent as { accepted?: unknown }).accepted === false) {
    throw new ApiError("CONSENT_REQUIRED");
  }
  if (face_template === undefined || face_template === null) throw new ApiError("FACE_TEMPLATE_REQUIRED");
  const input = parseWith(enrollmentSchema, body);

  const scenario = forcedScenario(c);
  const descriptor = descriptorFrom(input.face_template, input.capture_nonce);
  const judgement = judge(descriptor, c.var.now, null, scenario);
  if (!judgement.livenessPassed) throw new ApiError("BIOMETRIC_LIVENESS_FAILED", { reason: judgement.refusal });
  if (scenario === "duplicate_enroll") throw new ApiError("IDENTITY_UNREACHABLE", { reason: "duplicate_enroll" });

  const consentRecord = { version: input.consent.version, retention_days: input.consent.retention_days };
  const enrollment = await enrol(c, descriptor, baselineFromResult(judgement.result), consentRecord);
  c.header(SESSION_TOKEN_HEADER, enrollment.sessionToken);
  c.header("cache-control", "no-store");
  return c.json({
    success: true,
    status: "enrolled",
    subject_ref: enrollment.subjectRef,
    session_token_hash: enrollment.sessionTokenHash,
    consent: consentRecord,
  });
});

export default app;
