/**
 * GET /functions/v1/mandate-scopes (spec 4.6): the closed scope vocabulary, public and cacheable.
 * Only `label` and `description` follow Accept-Language; ids and field names stay English.
 */
import { createFunctionApp } from "../../shared/app";
import { scopeCatalogue } from "../../shared/scopes";

const app = createFunctionApp("mandate-scopes");

app.get("/", (c) => {
  c.header("cache-control", "public, max-age=3600");
  c.header("vary", "accept-language");
  c.header("content-language", c.var.locale);
  return c.json(scopeCatalogue(c.var.locale));
});

export default app;
