/**
 * The consent ledger's upkeep: checking every person's hash chain (the CLI's `consent verify`) and
 * the retention pass of the consent-retention cron (supabase/migrations/…_consent_ledger.sql and
 * …_consent_retention.sql hold the rules).
 */
import type { Sql } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type {} from "./rpc";

/** Recomputes the chain of every person's entries (or one person's) and lists where it breaks. */
export function verifyConsentLedger(sql: Sql, identityId?: string) {
  return rpc(sql, "consent_ledger_verify", identityId ? { identity_id: identityId } : {});
}

/**
 * One retention pass at `at`: consents whose `retention_days` ran out are ended in the ledger, and
 * what every ended consent covered is erased; null when there was nothing to do.
 */
export async function sweepConsentRetention(sql: Sql, at: Date) {
  const summary = await rpc(sql, "consent_retention_sweep", { now: at.toISOString() });
  return Object.values(summary).some((count) => count > 0) ? summary : null;
}
