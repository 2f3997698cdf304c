/**
 * GET /functions/v1/mandate-scopes (spec 4.6): the closed scope vocabulary, public and cacheable.
 * Only `label` and `description` follow Accept-Language; ids and field names stay English.
 */

import { createFunctionApp } from "../../shared/edge/app";
import { documented } from "../../shared/edge/openapi";
import { scopeCatalogue, scopeCatalogueSchema } from "../../shared/mandates/scopes";

const app = createFunctionApp("mandate-scopes");

app.get(
  "/",
  documented({ summary: "The scope vocabulary", success: { status: 200, description: "The catalogue", schema: scopeCatalogueSchema } }),
  (c) => {
    c.header("cache-control", "public, max-age=3600");
    c.header("vary", "accept-language");
    c.header("content-language", c.var.locale);
    return c.json(scopeCatalogue(c.var.locale));
  },
);

export default app;
