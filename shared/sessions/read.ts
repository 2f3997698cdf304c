/**
 * A merchant's read of one hosted session (hosted-session-get): the fields of 2.7 (never the
 * token), the effective state and the outcome. Unknown, malformed and another tenant's ids are the
 * same `404 not_found`.
 */
import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type {} from "./rpc";
import { sessionUuid } from "./tokens";

export const getSessionSchema = v.strictObject({ session_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

export function getSession(deps: Deps, tenant: Tenant, id: string) {
  return readSession(deps, tenant, id, "hosted_session_get");
}

/** One session of the tenant through `reader` (the function API's view or /v1's); none is `404 not_found`. */
export async function readSession<R extends "hosted_session_get" | "mode_session_get">(deps: Deps, tenant: Tenant, id: string, reader: R) {
  const sessionId = sessionUuid(id);
  const session = sessionId
    ? await rpc(deps.sql, reader, {
        merchant_id: tenant.merchantId,
        environment: tenant.environment,
        now: deps.now.toISOString(),
        session_id: sessionId,
      })
    : null;
  if (!session) throw new ApiError("not_found");
  return session as NonNullable<typeof session>;
}
