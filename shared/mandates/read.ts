/**
 * mandate-get (spec 4.10): one mandate with its last 100 consumptions and `stored_status`, or the
 * merchant's mandates by effective status. A mandate that is unknown and one that belongs to
 * another tenant answer the same `404 not_found`, byte for byte.
 */
import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { mandateUuid } from "./ids";
import { mandateStatuses } from "./page";
import type {} from "./rpc";

/**
 * How many mandates one status listing answers. The surface has no cursor (spec section 9), so a
 * longer list is read on with `issued_before`: the same question about the mandates issued before
 * the last one answered, a filter the merchant states with a mandate id it holds.
 */
export const LIST_LIMIT = 1000;

const mandateId = v.pipe(v.string(), v.minLength(1), v.maxLength(64));

/** `id` for one mandate, or `status` (with `issued_before` to read on past a full answer) for a listing. */
export const mandateQuerySchema = v.union([
  v.strictObject({ id: mandateId }),
  v.strictObject({ status: v.picklist(mandateStatuses), issued_before: v.optional(mandateId) }),
]);

type ListQuery = { status: (typeof mandateStatuses)[number]; issued_before?: string };

function tenantAt(deps: Deps, tenant: Tenant) {
  return { merchant_id: tenant.merchantId, environment: tenant.environment, now: deps.now.toISOString() };
}

/** One mandate of this tenant by its id (`mdt_…` or a uuid). */
export async function getMandate(deps: Deps, tenant: Tenant, id: string) {
  const mandateId = mandateUuid(id);
  const mandate = mandateId ? await rpc(deps.sql, "mandate_get", { ...tenantAt(deps, tenant), mandate_id: mandateId }) : null;
  if (!mandate) throw new ApiError("not_found");
  return mandate;
}

/**
 * This tenant's mandates in one effective status, newest first, each with `stored_status`: at most
 * `LIST_LIMIT`, with `has_more` when others follow; with `issued_before` only those issued before
 * that mandate (one of this tenant's, else `404 not_found` as a read of it would be).
 */
export async function listMandates(deps: Deps, tenant: Tenant, query: ListQuery) {
  const before = query.issued_before === undefined ? undefined : mandateUuid(query.issued_before);
  if (before === null) throw new ApiError("not_found");
  const listed = await rpc(deps.sql, "mandate_list", {
    ...tenantAt(deps, tenant),
    status: query.status,
    limit: LIST_LIMIT + 1,
    ...(before ? { issued_before: before } : {}),
  });
  if (!listed) throw new ApiError("not_found");
  return { mandates: listed.slice(0, LIST_LIMIT), has_more: listed.length > LIST_LIMIT };
}
