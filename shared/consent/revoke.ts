/**
 * revoke-consent (spec 2.6, 4.5): with a `consent_token`, revokes that disclosure: its fetch turns
 * into `403 CONSENT_REVOKED` at once and the documents behind it are deleted. With a `subject_ref`,
 * the person withdraws their consent with the merchant: face-identify and the transaction sink stop
 * answering for them, every disclosure's fetch turns into 403, and the consent-retention cron erases
 * what the consent covered. Both are consent ledger entries; repeats answer `already_revoked: true`.
 */
import * as v from "valibot";
import { isSubjectRef } from "../identity/subject-ref";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { jsonObject } from "../kernel/validation";
import { consentTokenHash, disclosureId } from "./disclose";
import type {} from "./rpc";

export const revokeConsentSchema = v.pipe(
  jsonObject,
  v.strictObject({
    consent_token: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
    subject_ref: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
    reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))),
  }),
  v.check((body) => (body.consent_token === undefined) !== (body.subject_ref === undefined), "exactly one of consent_token, subject_ref"),
);

/** Revokes a disclosure or withdraws a consent; anything the merchant does not hold is `404 not_found`. */
export async function revokeConsent(deps: Deps, tenant: Tenant, body: v.InferOutput<typeof revokeConsentSchema>) {
  const common = { merchant_id: tenant.merchantId, environment: tenant.environment, now: deps.now.toISOString(), reason: body.reason };
  if (body.consent_token !== undefined) {
    const hash = await consentTokenHash(body.consent_token);
    if (!hash) throw new ApiError("not_found");
    const revoked = await rpc(deps.sql, "consent_revoke", { ...common, consent_token_hash: hash });
    return { ...revoked, disclosure_id: disclosureId(revoked.disclosure_id!) };
  }
  if (!isSubjectRef(body.subject_ref!)) throw new ApiError("not_found");
  return rpc(deps.sql, "consent_revoke", { ...common, subject_ref: body.subject_ref! });
}

/** revoke-consent's answer: revoked (now or before), naming what was revoked. */
export const revokedConsentSchema = v.object({
  revoked: v.literal(true),
  already_revoked: described(v.boolean(), "True when it was revoked before this request."),
  revoked_at: described(v.pipe(v.string(), v.isoTimestamp()), "When it was revoked."),
  consent_token: v.optional(v.string()),
  subject_ref: v.optional(v.string()),
});
