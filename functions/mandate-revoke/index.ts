/**
 * POST /functions/v1/mandate-revoke (spec 4.11): ends a mandate at once — the next consume fails,
 * nothing is cached. Callable by the granting human (first-party user JWT), the issuing merchant
 * (its secret key) or the service role; never by the agent holding it. Repeats answer
 * `already_revoked: true`. Anything else, and an unknown mandate, is the same 404.
 */
import * as v from "valibot";
import { mandateUuid } from "../../shared/mandates/ids";
import { createFunctionApp } from "../../shared/platform/app";
import { secretKeyOrUserAuth, serviceRoleOr } from "../../shared/platform/auth";
import { rpc } from "../../shared/platform/db/client";
import { ApiError } from "../../shared/platform/errors";
import { validJson } from "../../shared/platform/validation";

const revokeSchema = v.strictObject({
  mandate_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))),
});

const app = createFunctionApp("mandate-revoke");

app.post("/", serviceRoleOr(secretKeyOrUserAuth()), async (c) => {
  const input = await validJson(c, revokeSchema);
  const principal = c.var.principal;
  const revoker = c.var.servicePrincipal
    ? { by: "service_role" }
    : principal?.kind === "user"
      ? { by: "granting_human", identity_id: principal.identityId, environment: principal.environment }
      : { by: "issuing_merchant", merchant_id: principal!.merchantId, environment: principal!.environment };
  const mandateId = mandateUuid(input.mandate_id);
  const result = mandateId
    ? await rpc<object | null>(c.var.db(), "mandate_revoke", {
        ...revoker,
        mandate_id: mandateId,
        reason: input.reason,
        now: c.var.now.toISOString(),
      })
    : null;
  if (!result) throw new ApiError("not_found");
  return c.json(result);
});

export default app;
