/**
 * POST /functions/v1/agent-verification-request (spec 4.14): an owner of the merchant, with their
 * first-party session, mints a verification card; its `url` opens the hosted capture screen once
 * (shared/agents/verifications.ts). A merchant key is `401 USER_TOKEN_REQUIRED`. Agents mint cards
 * through the MCP tool of the same name, with their OAuth bearer.
 */
import { cardAnswerSchema, requestSchema, requestVerification } from "../../shared/agents/verifications";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { type UserAuthenticated, userTokenAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { serviceBaseUrl } from "../../shared/kernel/config";

/** Each card is a hosted session and a screen someone may open: per merchant and environment (docs/decisions.md, D-267). */
const CARD_LIMIT: RateLimitRule = { name: "agent-verification-request", limit: 60, windowSeconds: 60 };

const app = createFunctionApp("agent-verification-request");

app.post(
  "/",
  documented({
    summary: "Mint a verification card",
    success: { status: 200, description: "The card", schema: cardAnswerSchema },
    answers: ["NOT_MERCHANT_OWNER", "ACCESS_REVOKED"],
  }),
  noStore,
  userTokenAuth(),
  rateLimit<AppEnv & UserAuthenticated>((c) => ({ rule: CARD_LIMIT, identifier: tenantBudget(c.var.principal) })),
  input("json", requestSchema),
  async (c) => {
    const context = { serviceBaseUrl: serviceBaseUrl(c.var.config, c.req.url), agentName: null };
    return c.json(await requestVerification(depsOf(c.var), c.var.principal, c.var.input, context));
  },
);

export default app;
