/**
 * Usage and allowance, read (docs/management.md, "Usage"): the workspace's billed claims in a month,
 * the persons billed for life and the month's allowance, from the billing ledger (docs/resource-api.md,
 * "Billing"). Changing the allowance stays the operator's.
 */
import * as v from "valibot";
import type { BillingUsage } from "../billing/rpc";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { scopeOf } from "./caller";
import type {} from "./rpc";

export const usageQuerySchema = v.strictObject({
  month: v.optional(v.pipe(v.string(), v.regex(/^\d{4}-(0[1-9]|1[0-2])$/, "YYYY-MM"))),
});

export async function readUsage(deps: Deps, tenant: Tenant, query: v.InferOutput<typeof usageQuerySchema>) {
  const usage: BillingUsage = await rpc(deps.sql, "billing_usage", {
    merchant_id: tenant.merchantId,
    now: deps.now.toISOString(),
    ...(query.month ? { month: query.month } : {}),
  });
  return {
    object: "usage" as const,
    environment: tenant.environment,
    month: usage.month,
    period_start: usage.period_start,
    period_end: usage.period_end,
    ...usage.environments[tenant.environment],
  };
}

/** The console's overview (D-624): the last `days` days' checks per UTC day by outcome, and the five latest failures. */
export function checksByDay(deps: Deps, tenant: Tenant, days = 30) {
  return rpc(deps.sql, "management_checks_by_day", { ...scopeOf(tenant, deps.now), days });
}
