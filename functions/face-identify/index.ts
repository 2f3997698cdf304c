/**
 * POST /functions/v1/face-identify (spec 4.2): is this live face already known? Answers the
 * caller merchant's pseudonym (`subject_ref`), never the identity id. Publishable key allowed;
 * replay guard; rate limited per merchant and environment, and per client IP for publishable keys
 * (docs/decisions.md, D-074).
 */

import { relyingPartyOf } from "../../shared/devices/ceremony";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth, type KeyAuthenticated } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { clientIp, type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { identifyAnswerSchema } from "../../shared/identity/answers";
import { identifyFace, identifySchema } from "../../shared/identity/identify";
import { forcedScenario, SCENARIO_HEADER, scenarioCodes } from "../../shared/identity/scenario";
import { keyMaterialOf } from "../../shared/kernel/keys";

/** Counted before the body is judged: a malformed request spends the budget too (docs/decisions.md, D-074). */
const identifyLimits = {
  merchant: { name: "face-identify", limit: 600, windowSeconds: 60 },
  publishableIp: { name: "face-identify-ip", limit: 60, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;

const app = createFunctionApp("face-identify");

app.post(
  "/",
  documented({
    summary: "Identify the live person of a capture",
    success: { status: 200, description: "The person, or no one", schema: identifyAnswerSchema },
    answers: ["LIVE_CAPTURE_REQUIRED", ...scenarioCodes, "UNAUTHORIZED_DEVICE", "CAPTURE_REPLAYED", "TEMPLATE_STORE_UNAVAILABLE"],
  }),
  apiKeyAuth("publishable", { replay: true }),
  rateLimit<AppEnv & KeyAuthenticated>((c) => ({ rule: identifyLimits.merchant, identifier: tenantBudget(c.var.principal) })),
  rateLimit<AppEnv & KeyAuthenticated>((c) => {
    const { principal } = c.var;
    if (principal.keyKind !== "publishable") return null;
    return { rule: identifyLimits.publishableIp, identifier: `${tenantBudget(principal)}:ip:${clientIp(c)}` };
  }),
  input("json", identifySchema),
  async (c) => {
    const { principal } = c.var;
    const scenario = forcedScenario(c.req.header(SCENARIO_HEADER), principal.environment);
    const keys = await keyMaterialOf(c.var);
    const rp = relyingPartyOf(c.var.config, c.req.url);
    return c.json(await identifyFace(depsOf(c.var), keys, principal, c.var.input, scenario, rp));
  },
);

export default app;
