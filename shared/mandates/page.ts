/**
 * The resource API's mandate reads (resource API 2.3, 4.6, 4.7): one mandate, or a page of them
 * newest first, filtered by granter, holder and effective status, with an opaque keyset cursor.
 * Unknown ids and another tenant's mandates are the same `404 not_found`.
 */
import * as v from "valibot";
import { decodeCursor, nextCursor } from "../kernel/cursor";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { mandateUuid } from "./ids";
import type {} from "./rpc";

export const PAGE_SIZE = { min: 1, max: 100, default: 25 } as const;

/**
 * The effective statuses a filter may name: resource API 3.1 names three, revoked is the fourth, and
 * consumed is the function API's (4.10) which no mandate reads: a ceiling at zero, lifetime too, is exhausted.
 */
export const mandateStatuses = ["active", "expired", "exhausted", "consumed", "revoked"] as const;

/** The query of `GET /v1/mandates`: every field optional; `limit` a whole number from 1 to 100. */
export const mandatePageSchema = v.strictObject({
  granted_by: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  granted_to: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  status: v.optional(v.picklist(mandateStatuses)),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,3}$/), v.transform(Number), v.integer(), v.minValue(PAGE_SIZE.min), v.maxValue(PAGE_SIZE.max)),
    String(PAGE_SIZE.default),
  ),
});

type PageQuery = v.InferOutput<typeof mandatePageSchema>;

function tenantAt(deps: Deps, tenant: Tenant) {
  return { merchant_id: tenant.merchantId, environment: tenant.environment, now: deps.now.toISOString() };
}

/** A page of this tenant's mandates: `data` newest first, `next_cursor` null on the last page. */
export async function pageMandates(deps: Deps, tenant: Tenant, query: PageQuery) {
  const page = await rpc(deps.sql, "mandate_page", {
    ...tenantAt(deps, tenant),
    limit: query.limit,
    ...(query.granted_by !== undefined ? { granted_by: query.granted_by } : {}),
    ...(query.granted_to !== undefined ? { granted_to: query.granted_to } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.cursor !== undefined ? { after: decodeCursor(query.cursor) } : {}),
  });
  return { object: "list", data: page.data, next_cursor: nextCursor(page) };
}

/** One mandate of this tenant in the resource API's shape (`mdt_…` or a uuid). */
export async function readMandate(deps: Deps, tenant: Tenant, id: string) {
  const mandateId = mandateUuid(id);
  const page = mandateId ? await rpc(deps.sql, "mandate_page", { ...tenantAt(deps, tenant), limit: 1, mandate_id: mandateId }) : null;
  const mandate = page?.data[0];
  if (!mandate) throw new ApiError("not_found");
  return mandate;
}
