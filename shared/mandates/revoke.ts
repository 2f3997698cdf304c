/**
 * mandate-revoke (spec 4.11): ends a mandate at once — the next consume fails, nothing is cached.
 * Callable by the granting human (first-party user), the issuing merchant or the service role;
 * never by the agent holding it (an MCP agent revokes as its merchant, and the tool refuses a mandate
 * granted to itself: functions/mcp/tools.ts). Repeats answer `already_revoked: true`. Anything else, and an
 * unknown mandate, is the same `404 not_found`.
 */
import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { AgentPrincipal, Principal, ServicePrincipal } from "../kernel/principal";
import { mandateUuid } from "./ids";
import type {} from "./rpc";

export const revokeSchema = v.strictObject({
  mandate_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))),
});

export async function revokeMandate(
  deps: Deps,
  revoker: Principal | AgentPrincipal | ServicePrincipal,
  body: v.InferOutput<typeof revokeSchema>,
) {
  const mandateId = mandateUuid(body.mandate_id);
  const by =
    revoker.kind === "service"
      ? { by: "service_role" as const }
      : revoker.kind === "user"
        ? { by: "granting_human" as const, identity_id: revoker.identityId, environment: revoker.environment }
        : { by: "issuing_merchant" as const, merchant_id: revoker.merchantId, environment: revoker.environment };
  const result = mandateId
    ? await rpc(deps.sql, "mandate_revoke", { ...by, mandate_id: mandateId, reason: body.reason, now: deps.now.toISOString() })
    : null;
  if (!result) throw new ApiError("not_found");
  return result;
}
