/**
 * POST /functions/v1/mandate-consume (spec 4.9): the only call that moves a ceiling. One RPC locks
 * the mandate, replays a known Idempotency-Key, decides, and appends the consumption with its
 * outbox events. Consumed and refused are both HTTP 200. Server key; replay guard.
 */

import { consumeDecision, decisionRequest, IDEMPOTENCY_KEY } from "../../shared/mandates/decision";
import { refusal } from "../../shared/mandates/refusals";
import { createFunctionApp } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { replayGuard } from "../../shared/platform/replay-guard";

const app = createFunctionApp("mandate-consume");

app.post("/", apiKeyAuth("secret"), replayGuard(), async (c) => {
  const request = await decisionRequest(c);
  const key = c.req.header("idempotency-key");
  c.header("content-language", c.var.locale);
  if (!key || !IDEMPOTENCY_KEY.test(key)) return c.json(refusal("idempotency_key_required", c.var.locale));
  return c.json(await consumeDecision(c, request, key));
});

export default app;
