/**
 * POST /functions/v1/agent-verification-request (spec 4.14): an owner of the merchant, with their
 * first-party session, mints a verification card; its `url` opens the hosted capture screen once
 * (shared/agents/verifications.ts). A merchant key is `401 USER_TOKEN_REQUIRED`. Agents mint cards
 * through the MCP tool of the same name, with their OAuth bearer.
 */
import { requestSchema, requestVerification } from "../../shared/agents/verifications";
import { createFunctionApp, depsOf } from "../../shared/platform/app";
import { userTokenAuth } from "../../shared/platform/auth";
import { serviceBaseUrl } from "../../shared/platform/config";
import { input } from "../../shared/platform/input";

const app = createFunctionApp("agent-verification-request");

app.post("/", userTokenAuth(), input("json", requestSchema), async (c) => {
  c.header("cache-control", "no-store");
  const context = { serviceBaseUrl: serviceBaseUrl(c.var.config, c.req.url), agentName: null };
  return c.json(await requestVerification(depsOf(c.var), c.var.principal, c.var.input, context));
});

export default app;
