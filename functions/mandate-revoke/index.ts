/**
 * POST /functions/v1/mandate-revoke (spec 4.11): ends a mandate at once. Callable by the granting
 * human (first-party user JWT), the issuing merchant (its secret key) or the service role; never
 * by the agent holding it (shared/mandates/revoke.ts).
 */

import { afterAnswer } from "../../shared/edge/after-answer";
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { secretKeyOrUserAuth, serviceRoleOr } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { revokedMandateSchema } from "../../shared/mandates/answers";
import { revokeMandate, revokeSchema } from "../../shared/mandates/revoke";
import { personDeliveryScope } from "../../shared/persons/consents";
import { deliverSoon } from "../../shared/webhooks/run";

const app = createFunctionApp("mandate-revoke");

app.post(
  "/",
  documented({
    summary: "Revoke a mandate",
    success: { status: 200, description: "Revoked, or already so", schema: revokedMandateSchema },
    answers: ["not_found"],
  }),
  serviceRoleOr(secretKeyOrUserAuth()),
  input("json", revokeSchema),
  async (c) => {
    const revoker = c.var.servicePrincipal ?? c.var.principal!;
    const revoked = await revokeMandate(depsOf(c.var), revoker, c.var.input);
    // the merchant hears of it at once; the service role names no merchant, so its revocations wait for the cron
    if (revoker.kind === "user")
      afterAnswer(
        c,
        "webhooks",
        deliverSoon((sql) => personDeliveryScope(sql, revoker)),
      );
    else if (revoker.kind !== "service") afterAnswer(c, "webhooks", deliverSoon(revoker));
    return c.json(revoked);
  },
);

export default app;
