/**
 * POST /functions/v1/face-identify (spec 4.2): is this live face already known? Answers the
 * caller merchant's pseudonym (`subject_ref`), never the identity id. Publishable key allowed;
 * replay guard.
 */
import { identifyFace, identifySchema } from "../../shared/identity/identify";
import { forcedScenario, SCENARIO_HEADER } from "../../shared/identity/scenario";
import { createFunctionApp, depsOf } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { input } from "../../shared/platform/input";
import { requireSecret, templatesOf } from "../../shared/platform/keys";

const app = createFunctionApp("face-identify");

app.post("/", apiKeyAuth("publishable", { replay: true }), input("json", identifySchema), async (c) => {
  const { principal, config } = c.var;
  const scenario = forcedScenario(c.req.header(SCENARIO_HEADER), principal.environment);
  const keys = { templates: await templatesOf(c.var), subjectRefSecret: requireSecret(config, "SUBJECT_REF_SECRET") };
  return c.json(await identifyFace(depsOf(c.var), keys, principal, c.var.input, scenario));
});

export default app;
