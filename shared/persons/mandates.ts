/**
 * The person's mandates at every merchant, and their revocation (docs/decisions.md, D-467): one
 * mandate, or every standing mandate of one agent at one merchant. Each revocation is mandate-revoke's
 * by the granting human (public.mandate_revoke: the row lock orders it against consumes, the agent's
 * next request is refused, `mandate.revoked` goes to the merchant); nothing else of the person reaches
 * that merchant.
 */
import * as v from "valibot";
import { type RpcResult, rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { jsonObject } from "../kernel/validation";
import { canonicalUuid } from "../lib/uuid";
import { mandateUuid } from "../mandates/ids";
import { isScope, scopeLabel } from "../mandates/scopes";
import type { PersonSession } from "./session";

const personAt = (deps: Deps, session: PersonSession) => ({
  identity_id: session.identityId,
  environment: session.environment,
  now: deps.now.toISOString(),
});

/** Every mandate the person granted, newest first, each scope with its label in the request's locale. */
export async function listPersonMandates(deps: Deps, session: PersonSession) {
  const mandates = await rpc(deps.sql, "person_mandates", personAt(deps, session));
  return {
    mandates: mandates.map((mandate) => ({
      ...mandate,
      scope_labels: mandate.scopes.map((scope) => (isScope(scope) ? scopeLabel(scope, deps.locale) : scope)),
    })),
  };
}

/** One mandate by its id, or every standing mandate of one agent (`granted_to`) at one merchant. */
export const revokeSchema = v.pipe(
  jsonObject,
  v.union([
    v.strictObject({
      mandate_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
      reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))),
    }),
    v.strictObject({
      merchant_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
      granted_to: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
      reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))),
    }),
  ]),
);

/**
 * Revokes as the granting human. A mandate that is not the person's (or no mandate), and an agent
 * that holds none of theirs at that merchant, are the same `404 not_found`.
 */
export async function revokePersonMandates(deps: Deps, session: PersonSession, body: v.InferOutput<typeof revokeSchema>) {
  const at = { ...personAt(deps, session), ...(body.reason === undefined ? {} : { reason: body.reason }) };
  let result: RpcResult<"person_mandate_revoke"> = null;
  if ("mandate_id" in body) {
    const mandateId = mandateUuid(body.mandate_id);
    if (mandateId) result = await rpc(deps.sql, "person_mandate_revoke", { ...at, mandate_id: mandateId });
  } else {
    const merchantId = canonicalUuid(body.merchant_id);
    if (merchantId) result = await rpc(deps.sql, "person_mandate_revoke", { ...at, merchant_id: merchantId, granted_to: body.granted_to });
  }
  if (!result) throw new ApiError("not_found");
  return result;
}
