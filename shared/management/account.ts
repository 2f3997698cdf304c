/**
 * The account's own settings (docs/management.md, "Account"): its name, pinned version and the
 * mandate.at_limit threshold (docs/webhooks.md, "The at_limit threshold"), which a key with
 * management.write may set.
 */
import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { type ManagementCaller, writeOf } from "./caller";
import type {} from "./rpc";

export const updateAccountSchema = v.pipe(
  v.strictObject({
    at_limit_threshold_percent: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(99)),
  }),
  v.examples([{ at_limit_threshold_percent: 20 }]),
);

export async function readAccount(deps: Deps, tenant: Tenant) {
  const account = await rpc(deps.sql, "management_account", { merchant_id: tenant.merchantId, environment: tenant.environment });
  if (!account) throw new ApiError("not_found");
  return account;
}

export function updateAccount(deps: Deps, caller: ManagementCaller, input: v.InferOutput<typeof updateAccountSchema>) {
  return rpc(deps.sql, "management_account_update", { ...writeOf(caller, deps.now), ...input });
}
