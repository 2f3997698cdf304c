/**
 * POST /functions/v1/mandate-consume (spec 4.9): the only call that moves a ceiling. One RPC
 * authenticates the key, claims the nonce, locks the mandate, replays a known Idempotency-Key,
 * decides, and appends the consumption with its outbox events. Consumed and refused are both
 * HTTP 200. Server key; replay guard.
 */

import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuthInOperation } from "../../shared/edge/auth";
import { idempotencyKeyOf, markReplay } from "../../shared/edge/idempotency";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { decisionAnswerSchema } from "../../shared/mandates/answers";
import { consumeMandate, decisionSchema } from "../../shared/mandates/decision";

const app = createFunctionApp("mandate-consume");

app.post(
  "/",
  documented({
    summary: "Consume a mandate: the authoritative decision",
    description: "A refusal is 200 with allowed false and a reason.",
    success: { status: 200, description: "The decision", schema: decisionAnswerSchema },
    answers: ["IDEMPOTENCY_KEY_REUSED"],
  }),
  apiKeyAuthInOperation("secret"),
  input("json", decisionSchema),
  async (c) => {
    const idempotency = { key: idempotencyKeyOf(c.req.raw.headers), rawBody: c.var.rawBody ?? "{}" };
    const decision = await consumeMandate(depsOf(c.var), c.var, c.var.input, idempotency);
    markReplay(c, decision);
    c.header("content-language", c.var.locale);
    return c.json(decision);
  },
);

export default app;
