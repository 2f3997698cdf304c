/**
 * POST /functions/v1/revoke-consent: revokes a disclosure by its consent token (its fetch turns into
 * 403) or withdraws a person's consent with the merchant by subject_ref (shared/consent/revoke.ts).
 * Secret key only.
 */
import { revokeConsent, revokeConsentSchema } from "../../shared/consent/revoke";
import { createFunctionApp, depsOf } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { input } from "../../shared/platform/input";

const app = createFunctionApp("revoke-consent");

app.post("/", apiKeyAuth("secret"), input("json", revokeConsentSchema), async (c) => {
  return c.json(await revokeConsent(depsOf(c.var), c.var.principal, c.var.input));
});

export default app;
