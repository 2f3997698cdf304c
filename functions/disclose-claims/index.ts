/**
 * POST /functions/v1/disclose-claims (spec 4.5): discloses the requested fields of a person who
 * just proved presence, as an SD-JWT, with the consent token that opens what was put behind it
 * (shared/consent/disclose.ts). POST /functions/v1/disclose-claims/fetch `{consent_token}`: what
 * the token unlocks, `403` once revoked. Secret key only.
 */
import { discloseClaims, discloseSchema, fetchDisclosure, fetchSchema } from "../../shared/consent/disclose";
import { createFunctionApp, depsOf } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { serviceBaseUrl } from "../../shared/platform/config";
import { input } from "../../shared/platform/input";
import { signingKeysOf } from "../../shared/platform/keys";

const app = createFunctionApp("disclose-claims");

app.post("/", apiKeyAuth("secret"), input("json", discloseSchema), async (c) => {
  c.header("cache-control", "no-store");
  const issuer = { keys: await signingKeysOf(c.var.config), baseUrl: serviceBaseUrl(c.var.config, c.req.url) };
  return c.json(await discloseClaims(depsOf(c.var), issuer, c.var.principal, c.var.input));
});

app.post("/fetch", apiKeyAuth("secret"), input("json", fetchSchema), async (c) => {
  c.header("cache-control", "no-store");
  return c.json(await fetchDisclosure(depsOf(c.var), c.var.principal, c.var.input));
});

export default app;
