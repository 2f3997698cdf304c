/**
 * The merchants that hold the person and the consents they gave each, the hash-chained consent
 * ledger in readable form with its verification, and withdrawing consent at one merchant
 * (docs/decisions.md, D-468): exactly revoke-consent's effect, and the merchant hears of it.
 */
import * as v from "valibot";
import type { Statements } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { jsonObject } from "../kernel/validation";
import { canonicalUuid } from "../lib/uuid";
import type { DeliveryScope } from "../webhooks/rpc";
import type { PersonSession } from "./session";

/**
 * The merchants that hold the person, in the person's environment, as the scope of the quick webhook
 * pass after an act of theirs (shared/webhooks/run.ts `deliverSoon`): a revocation, a device, an
 * erasure writes its events to these merchants. Read before an erasure, which ends them.
 */
export async function personDeliveryScope(
  sql: Statements,
  person: Pick<PersonSession, "identityId" | "environment">,
): Promise<DeliveryScope[]> {
  const merchants = await rpc(sql, "person_merchants", { identity_id: person.identityId, environment: person.environment });
  return merchants.map((merchant) => ({ merchant_id: merchant.merchant_id, environment: person.environment }));
}

/** Each merchant that holds the person, oldest first, with its consents. */
export async function listPersonMerchants(deps: Deps, session: PersonSession) {
  return { merchants: await rpc(deps.sql, "person_merchants", { identity_id: session.identityId, environment: session.environment }) };
}

/** The person's consent ledger, entry by entry, and whether its hash chain holds. */
export function readConsentLedger(deps: Deps, session: PersonSession) {
  return rpc(deps.sql, "person_consent_ledger", { identity_id: session.identityId });
}

/**
 * `confirm: true` says the person was shown what withdrawing means (the page states it before the
 * button, docs/functions.md#me): without it the request is `400 INVALID_INPUT`.
 */
export const withdrawSchema = v.pipe(
  jsonObject,
  v.strictObject({
    merchant_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
    confirm: v.literal(true),
    reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))),
  }),
);

/** Withdraws the person's consent with one merchant; a merchant that does not hold them is `404 not_found`. */
export async function withdrawConsent(deps: Deps, session: PersonSession, body: v.InferOutput<typeof withdrawSchema>) {
  const merchantId = canonicalUuid(body.merchant_id);
  const withdrawn = merchantId
    ? await rpc(deps.sql, "person_consent_withdraw", {
        identity_id: session.identityId,
        environment: session.environment,
        merchant_id: merchantId,
        now: deps.now.toISOString(),
        ...(body.reason === undefined ? {} : { reason: body.reason }),
      })
    : null;
  if (!withdrawn) throw new ApiError("not_found");
  return withdrawn;
}
