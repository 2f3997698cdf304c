/**
 * POST /functions/v1/mandate-check (spec 4.8): would this action be inside the mandate right now?
 * Advisory: no lock, nothing reserved or debited, and a false positive is possible under
 * concurrency — only mandate-consume authorises. Server key; replay guard; rate limited per merchant.
 * Key, nonce and decision are one RPC.
 */

import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuthInOperation, type CredentialPresented } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { keyBudget, rateLimit } from "../../shared/edge/rate-limit";
import { decisionAnswerSchema } from "../../shared/mandates/answers";
import { checkMandate, decisionSchema } from "../../shared/mandates/decision";

/**
 * Per merchant and environment (the key's merchant, as this isolate learnt it; the key itself on a
 * cold isolate); the spec leaves the figure open (docs/decisions.md, D-105).
 */
const CHECK_LIMIT = { name: "mandate-check", limit: 600, windowSeconds: 60 };

const app = createFunctionApp("mandate-check");

app.post(
  "/",
  documented({
    summary: "Would this act be inside the mandate now? (advisory)",
    description: "A refusal is 200 with allowed false and a reason.",
    success: { status: 200, description: "The decision", schema: decisionAnswerSchema },
  }),
  apiKeyAuthInOperation("secret"),
  rateLimit<AppEnv & CredentialPresented>((c) => ({ rule: CHECK_LIMIT, identifier: keyBudget(c.var.credential.keyHash) })),
  input("json", decisionSchema),
  async (c) => {
    const decision = await checkMandate(depsOf(c.var), c.var, c.var.input);
    c.header("content-language", c.var.locale);
    return c.json(decision);
  },
);

export default app;
