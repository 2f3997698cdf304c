/**
 * POST /functions/v1/device-challenge (issue 27; docs/devices.md): a challenge for a device to sign
 * with a capture (shared/devices/challenges.ts): single use, two minutes, bound to the caller's
 * merchant, environment and the purpose asked. Publishable key allowed (the SDK on the person's
 * device asks for it); replay guard; rate limited per merchant and environment, and per client IP
 * for publishable keys. Every response is `cache-control: no-store`.
 */

import { deviceChallengeAnswerSchema, deviceChallengeSchema, issueDeviceChallenge } from "../../shared/devices/challenges";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth, type KeyAuthenticated } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp, type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";

/** One challenge per capture, and a page may retry: alias check's rate. Counted before the body is read. */
const challengeLimits = {
  merchant: { name: "device-challenge", limit: 120, windowSeconds: 60 },
  publishableIp: { name: "device-challenge-ip", limit: 30, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;

const app = createFunctionApp("device-challenge");

app.use(noStore);

app.post(
  "/",
  documented({
    summary: "Issue a challenge for a device to sign with a capture",
    success: { status: 200, description: "The challenge, shown once", schema: deviceChallengeAnswerSchema },
  }),
  apiKeyAuth("publishable", { replay: true }),
  rateLimit<AppEnv & KeyAuthenticated>((c) => ({ rule: challengeLimits.merchant, identifier: tenantBudget(c.var.principal) })),
  rateLimit<AppEnv & KeyAuthenticated>((c) => {
    const { principal } = c.var;
    if (principal.keyKind !== "publishable") return null;
    return { rule: challengeLimits.publishableIp, identifier: `${tenantBudget(principal)}:ip:${clientIp(c)}` };
  }),
  input("json", deviceChallengeSchema),
  async (c) => c.json(await issueDeviceChallenge(depsOf(c.var), c.var.principal, c.var.input.purpose)),
);

export default app;
