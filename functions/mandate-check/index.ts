/**
 * POST /functions/v1/mandate-check (spec 4.8): would this action be inside the mandate right now?
 * Advisory: no lock, nothing reserved or debited, and a false positive is possible under
 * concurrency — only mandate-consume authorises. Server key; replay guard; rate limited.
 */

import { checkDecision, decisionRequest } from "../../shared/mandates/decision";
import { createFunctionApp } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { enforceRateLimit } from "../../shared/platform/rate-limit";
import { replayGuard } from "../../shared/platform/replay-guard";

/** Per merchant key; the spec leaves the figure open (docs/decisions.md). */
const CHECK_LIMIT = { name: "mandate-check", limit: 600, windowSeconds: 60 };

const app = createFunctionApp("mandate-check");

app.post("/", apiKeyAuth("secret"), replayGuard(), async (c) => {
  const principal = c.var.principal!;
  await enforceRateLimit(c, CHECK_LIMIT, principal.kind === "merchant_key" ? principal.keyId : principal.merchantId);
  const request = await decisionRequest(c);
  c.header("content-language", c.var.locale);
  return c.json(await checkDecision(c, request));
});

export default app;
