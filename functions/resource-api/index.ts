/**
 * The resource API, mounted at /v1 (resource API; docs/resource-api.md): a file per resource, each
 * route an adapter over the domain operations the functions call. Lowercase error codes, dated
 * versions (version.ts), bearer secret keys with token-bucket limits (auth.ts, limits.ts) and the
 * Idempotency-Key store on the writes.
 */
import { createFunctionApp } from "../../shared/edge/app";
import { documented } from "../../shared/edge/openapi";
import { mountReference } from "../../shared/edge/reference";
import { mountOf } from "../../shared/kernel/registry";
import { consents, disclosures } from "./consents";
import { identity } from "./identity";
import { announceEveryBudget } from "./limits";
import {
  account,
  apiKeys,
  auditEvents,
  owners,
  themeAssets,
  themes,
  usage,
  webhookDeliveries,
  webhookEndpoints,
  webhookEvents,
} from "./management";
import { mandates } from "./mandates";
import { resourceApiDocument } from "./openapi";
import { receipts } from "./receipts";
import { sessions } from "./sessions";
import { stampCurrentVersion } from "./version";

const app = createFunctionApp("resource-api", { lowercaseCodes: true });

app.use(stampCurrentVersion);
app.use(announceEveryBudget);

app.route("/identity", identity);
app.route("/mandates", mandates);
app.route("/receipts", receipts);
app.route("/sessions", sessions);
app.route("/consents", consents);
app.route("/disclosures", disclosures);
// The account's management (docs/management.md; D-445).
app.route("/api_keys", apiKeys);
app.route("/webhook_endpoints", webhookEndpoints);
app.route("/webhook_deliveries", webhookDeliveries);
app.route("/webhook_events", webhookEvents);
app.route("/audit_events", auditEvents);
app.route("/account", account);
app.route("/owners", owners);
app.route("/usage", usage);
app.route("/themes", themes);
app.route("/theme_assets", themeAssets);

app.get("/openapi.json", documented({ summary: "This document" }), (c) => {
  c.header("cache-control", "public, max-age=300");
  return c.json(resourceApiDocument(app));
});
mountReference(app, {
  functionName: "resource-api",
  title: "Resource API reference",
  documentUrl: `${mountOf("resource-api")}/openapi.json`,
});

export default app;
