/**
 * POST /functions/v1/mandate-issue (spec 4.7): records what a verified person authorises an agent
 * to do, against a capture of that person at most five minutes old. Server key; replay guard.
 * The assurance level is the capture's; the mandate is immutable afterwards.
 */

import { issueRequest } from "../../shared/mandates/issue";
import { moneyScopes, type Scope, scopeLabel } from "../../shared/mandates/scopes";
import { createFunctionApp } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { rpc } from "../../shared/platform/db/client";
import { replayGuard } from "../../shared/platform/replay-guard";
import { readJson } from "../../shared/platform/validation";

/** Rule 1: a capture older than this is no proof. */
const PROOF_MAX_AGE_SECONDS = 300;

const app = createFunctionApp("mandate-issue");

app.post("/", apiKeyAuth("secret"), replayGuard(), async (c) => {
  const input = issueRequest(await readJson(c), c.var.now);
  const principal = c.var.principal!;
  const mandate = await rpc<Record<string, unknown> & { scopes: Scope[] }>(c.var.db(), "mandate_issue", {
    id: crypto.randomUUID(),
    merchant_id: principal.merchantId,
    environment: principal.environment,
    now: c.var.now.toISOString(),
    granted_by_ref: input.granted_by,
    granted_to: input.granted_to,
    granted_to_kind: input.granted_to_kind,
    agent_display_name: input.agent_display_name,
    agent_descriptor: input.agent_descriptor,
    scopes: input.scopes,
    money_scopes: moneyScopes,
    constraints: input.constraints ?? {},
    ceiling: input.ceiling,
    expires_at: new Date(input.expires_at).toISOString(),
    step_up_of: input.step_up_of,
    capture_id: input.proof.capture_id,
    proof_max_age_seconds: PROOF_MAX_AGE_SECONDS,
  });
  c.header("content-language", c.var.locale);
  return c.json({ ...mandate, scope_labels: mandate.scopes.map((scope) => ({ scope, label: scopeLabel(scope, c.var.locale) })) }, 201);
});

export default app;
