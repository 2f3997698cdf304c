/**
 * POST /functions/v1/process-biovital-enrollment (spec 4.3): creates the identity from a live
 * capture, or recognises an already-enrolled face, and mints the device's first-party session
 * (returned once, in the x-session-token header). Publishable key allowed.
 */

import { relyingPartyOf } from "../../shared/devices/ceremony";
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { enrollmentAnswerSchema } from "../../shared/identity/answers";
import { enrollmentFailureCodes, enrollmentSchema, enrollPerson } from "../../shared/identity/enrollment";
import { forcedScenario, SCENARIO_HEADER, scenarioCodes } from "../../shared/identity/scenario";
import { SESSION_TOKEN_HEADER } from "../../shared/identity/sessions";
import { bearerOf } from "../../shared/kernel/authenticate";
import { keyMaterialOf } from "../../shared/kernel/keys";

const app = createFunctionApp("process-biovital-enrollment");

app.post(
  "/",
  documented({
    summary: "Enrol a live person",
    success: { status: 200, description: "Enrolled", schema: enrollmentAnswerSchema },
    answers: [
      ...scenarioCodes,
      "BIOMETRIC_LIVENESS_FAILED",
      "SESSION_PRESENT",
      "UNAUTHORIZED_DEVICE",
      "IDENTITY_UNREACHABLE",
      "CAPTURE_REPLAYED",
      "ENROLLMENT_RACE",
      ...enrollmentFailureCodes,
    ],
  }),
  noStore,
  apiKeyAuth("publishable"),
  input("json", enrollmentSchema),
  async (c) => {
    const { principal } = c.var;
    const scenario = forcedScenario(c.req.header(SCENARIO_HEADER), principal.environment);
    const keys = await keyMaterialOf(c.var);
    const presentedSessionToken = bearerOf(c.req.header("authorization"));
    const rp = relyingPartyOf(c.var.config, c.req.url);
    const enrolled = await enrollPerson(depsOf(c.var), keys, principal, c.var.input, { scenario, presentedSessionToken, rp });
    c.header(SESSION_TOKEN_HEADER, enrolled.session_token);
    return c.json({
      success: true,
      status: "enrolled",
      subject_ref: enrolled.subject_ref,
      session_token_hash: enrolled.session_token_hash,
      consent: enrolled.consent,
      device_binding: enrolled.device_binding,
    });
  },
);

export default app;
