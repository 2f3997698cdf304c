/**
 * POST /functions/v1/revoke-consent: revokes a disclosure by its consent token (its fetch turns into
 * 403) or withdraws a person's consent with the merchant by subject_ref (shared/consent/revoke.ts).
 * Secret key only.
 */
import { revokeConsent, revokeConsentSchema, revokedConsentSchema } from "../../shared/consent/revoke";
import { afterAnswer } from "../../shared/edge/after-answer";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth, type KeyAuthenticated } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { deliverSoon } from "../../shared/webhooks/run";

/** Per merchant and environment (docs/decisions.md, D-267). */
const REVOKE_LIMIT: RateLimitRule = { name: "revoke-consent", limit: 600, windowSeconds: 60 };

const app = createFunctionApp("revoke-consent");

app.post(
  "/",
  documented({
    summary: "Revoke a disclosure or withdraw a consent",
    success: { status: 200, description: "Revoked", schema: revokedConsentSchema },
    answers: ["not_found"],
  }),
  apiKeyAuth("secret"),
  rateLimit<AppEnv & KeyAuthenticated>((c) => ({ rule: REVOKE_LIMIT, identifier: tenantBudget(c.var.principal) })),
  input("json", revokeConsentSchema),
  async (c) => {
    const revoked = await revokeConsent(depsOf(c.var), c.var.principal, c.var.input);
    afterAnswer(c, "webhooks", deliverSoon(c.var.principal));
    return c.json(revoked);
  },
);

export default app;
