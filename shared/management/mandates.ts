/**
 * A merchant's mandates as its owner manages them in the console (docs/decisions.md, D-624): read
 * through the resource API's own reads (shared/mandates/page.ts), revoked as their issuer, as
 * `POST /v1/mandates/{id}/revoke` revokes, with an audit event naming the owner.
 */
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { mandateUuid } from "../mandates/ids";
import { type ManagementCaller, writeOf } from "./caller";
import type {} from "./rpc";

/** Revokes one of the caller's mandates at once; a repeat answers `already_revoked`; another merchant's is `404 not_found`. */
export async function revokeMandateAsOwner(deps: Deps, caller: ManagementCaller, id: string, reason?: string) {
  const mandateId = mandateUuid(id);
  const result = mandateId
    ? await rpc(deps.sql, "management_mandate_revoke", {
        ...writeOf(caller, deps.now),
        mandate_id: mandateId,
        ...(reason ? { reason } : {}),
      })
    : null;
  if (!result) throw new ApiError("not_found");
  return result;
}
