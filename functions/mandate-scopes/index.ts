/**
 * GET /functions/v1/mandate-scopes (spec 4.6): the closed scope vocabulary, public and cacheable.
 * Only `label` and `description` follow Accept-Language; ids and field names stay English.
 */

import { scopeCatalogue } from "../../shared/mandates/scopes";
import { createFunctionApp } from "../../shared/platform/app";

const app = createFunctionApp("mandate-scopes");

app.get("/", (c) => {
  c.header("cache-control", "public, max-age=3600");
  c.header("vary", "accept-language");
  c.header("content-language", c.var.locale);
  return c.json(scopeCatalogue(c.var.locale));
});

export default app;
