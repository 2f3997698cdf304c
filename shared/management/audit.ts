/**
 * The audit log (docs/management.md, "Audit log"): every management action, who took it (which key
 * or owner, from which address), what changed, before and after where it is safe to keep. Written
 * by each action's own RPC in its transaction; append-only. Listed in cursor pages, and exported
 * as JSON lines over a time range.
 */
import * as v from "valibot";
import { decodeCursor, nextCursor } from "../kernel/cursor";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import type {} from "./rpc";
import { pageLimit } from "./webhooks";

const action = v.pipe(v.string(), v.regex(/^[a-z_]+\.[a-z_]+$/), v.maxLength(64));
const instantField = v.pipe(v.string(), v.isoTimestamp());

export const auditPageSchema = v.strictObject({
  action: v.optional(action),
  from: v.optional(instantField),
  to: v.optional(instantField),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  limit: pageLimit,
});

export const auditExportSchema = v.strictObject({
  action: v.optional(action),
  from: v.optional(instantField),
  to: v.optional(instantField),
});

/** The most events one export holds; a longer log is exported in several ranges. */
export const AUDIT_EXPORT_MAX = 10_000;

function range(query: { action?: string; from?: string; to?: string }) {
  return {
    ...(query.action ? { action: query.action } : {}),
    ...(query.from ? { from: new Date(query.from).toISOString() } : {}),
    ...(query.to ? { to: new Date(query.to).toISOString() } : {}),
  };
}

/** A page of the tenant's audit events, newest first. */
export async function pageAudit(deps: Deps, tenant: Tenant, query: v.InferOutput<typeof auditPageSchema>) {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const page = await rpc(deps.sql, "management_audit_page", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    limit: query.limit,
    ...range(query),
    ...(after ? { after } : {}),
  });
  return {
    object: "list" as const,
    data: page.data,
    next_cursor: nextCursor(page),
  };
}

/**
 * The tenant's audit events of a range, newest first, at most AUDIT_EXPORT_MAX; `truncated` says
 * when the range holds more (export the older part with `to` set to the last event's instant).
 */
export async function exportAudit(deps: Deps, tenant: Tenant, query: v.InferOutput<typeof auditExportSchema>) {
  const page = await rpc(deps.sql, "management_audit_page", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    limit: AUDIT_EXPORT_MAX,
    ...range(query),
  });
  return { object: "audit_export" as const, data: page.data, truncated: page.more };
}
