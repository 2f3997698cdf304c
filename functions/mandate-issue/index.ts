/**
 * POST /functions/v1/mandate-issue (spec 4.7): records what a verified person authorises an agent
 * to do, against a capture of that person at most five minutes old. Server key; replay guard.
 */

import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { issuedMandateSchema } from "../../shared/mandates/answers";
import { issueActCodes, issueMandate, issueRuleCodes, issueSchema } from "../../shared/mandates/issue";

const app = createFunctionApp("mandate-issue");

app.post(
  "/",
  documented({
    summary: "Issue a mandate",
    success: { status: 201, description: "The mandate, issued", schema: issuedMandateSchema },
    answers: [...issueRuleCodes, ...issueActCodes],
  }),
  apiKeyAuth("secret", { replay: true }),
  input("json", issueSchema),
  async (c) => {
    const mandate = await issueMandate(depsOf(c.var), c.var.principal, c.var.input);
    c.header("content-language", c.var.locale);
    return c.json(mandate, 201);
  },
);

export default app;
