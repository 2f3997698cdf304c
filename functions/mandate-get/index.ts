/**
 * GET /functions/v1/mandate-get (spec 4.10): one mandate by `id`, with its last 100 consumptions
 * and `stored_status`, or this merchant's mandates by effective `status`, a thousand at a time
 * (`has_more`; read on with `issued_before`, the last mandate answered). Server key. A mandate
 * that is unknown and one that belongs to someone else answer the same 404, byte for byte.
 */

import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { mandateReadSchema } from "../../shared/mandates/answers";
import { getMandate, listMandates, mandateQuerySchema } from "../../shared/mandates/read";

const app = createFunctionApp("mandate-get");

app.get(
  "/",
  documented({
    summary: "Read a mandate, or list them",
    success: { status: 200, description: "The mandate with its consumptions, or the list", schema: mandateReadSchema },
    answers: ["not_found"],
  }),
  noStore,
  apiKeyAuth("secret"),
  input("query", mandateQuerySchema),
  async (c) => {
    const query = c.var.input;
    const deps = depsOf(c.var);
    return c.json("status" in query ? await listMandates(deps, c.var.principal, query) : await getMandate(deps, c.var.principal, query.id));
  },
);

export default app;
