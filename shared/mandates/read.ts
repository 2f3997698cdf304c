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
import type {} from "./rpc";

/**
 * How many mandates a status listing may hold. The surface has no cursor, so a listing answers every
 * mandate in the status or, past this many, `422 LIST_TOO_LARGE`: never a silently cut list.
 */
export const LIST_LIMIT = 1000;

const mandateStatuses = ["active", "consumed", "exhausted", "expired", "revoked"] as const;

/** `id` for one mandate, or `status` for a listing. */
export const mandateQuerySchema = v.union([
  v.strictObject({ id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) }),
  v.strictObject({ status: v.picklist(mandateStatuses) }),
]);

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

/** All of this tenant's mandates in one effective status, newest first, each with `stored_status`. */
export async function listMandates(deps: Deps, tenant: Tenant, status: (typeof mandateStatuses)[number]) {
  const mandates = await rpc(deps.sql, "mandate_list", { ...tenantAt(deps, tenant), status, limit: LIST_LIMIT + 1 });
  if (mandates.length > LIST_LIMIT) throw new ApiError("LIST_TOO_LARGE", { limit: LIST_LIMIT });
  return { mandates };
}
