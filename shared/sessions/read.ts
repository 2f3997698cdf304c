/**
 * A merchant's read of one hosted session (hosted-session-get): the fields of 2.7 (never the
 * token), the effective state and the outcome. Unknown, malformed and another tenant's ids are the
 * same `404 not_found`.
 */
import * as v from "valibot";
import { rpc } from "../platform/db/rpc";
import type { Deps } from "../platform/deps";
import { ApiError } from "../platform/errors";
import type { Tenant } from "../platform/principal";
import { sessionUuid } from "./tokens";

export const getSessionSchema = v.strictObject({ session_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

export async function getSession(deps: Deps, tenant: Tenant, id: string) {
  const sessionId = sessionUuid(id);
  const session = sessionId
    ? await rpc(deps.sql, "hosted_session_get", {
        merchant_id: tenant.merchantId,
        environment: tenant.environment,
        now: deps.now.toISOString(),
        session_id: sessionId,
      })
    : null;
  if (!session) throw new ApiError("not_found");
  return session;
}
