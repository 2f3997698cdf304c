/**
 * GET /functions/v1/mandate-get (spec 4.10): one mandate by `id`, with its last 100 consumptions
 * and `stored_status`, or this merchant's mandates by effective `status`. Server key. A mandate
 * that is unknown and one that belongs to someone else answer the same 404, byte for byte.
 */
import * as v from "valibot";
import { mandateUuid } from "../../shared/mandates/ids";
import { createFunctionApp } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { rpc } from "../../shared/platform/db/client";
import { ApiError } from "../../shared/platform/errors";
import { validQuery } from "../../shared/platform/validation";

/** How many mandates a status listing returns at most, newest first (the surface has no cursor). */
const LIST_LIMIT = 200;

const querySchema = v.union([
  v.strictObject({ id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) }),
  v.strictObject({ status: v.picklist(["active", "consumed", "exhausted", "expired", "revoked"]) }),
]);

const app = createFunctionApp("mandate-get");

app.get("/", apiKeyAuth("secret"), async (c) => {
  const query = validQuery(c, querySchema);
  const principal = c.var.principal!;
  const scope = { merchant_id: principal.merchantId, environment: principal.environment, now: c.var.now.toISOString() };
  c.header("cache-control", "no-store");
  if ("status" in query) {
    const mandates = await rpc<unknown[]>(c.var.db(), "mandate_list", { ...scope, status: query.status, limit: LIST_LIMIT });
    return c.json({ mandates });
  }
  const id = mandateUuid(query.id);
  const mandate = id ? await rpc<object | null>(c.var.db(), "mandate_get", { ...scope, mandate_id: id }) : null;
  if (!mandate) throw new ApiError("not_found");
  return c.json(mandate);
});

export default app;
