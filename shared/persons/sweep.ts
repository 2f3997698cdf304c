/**
 * The minute cron's sweep of the person's page's sign-ins (docs/decisions.md, D-610, D-702), in a
 * module of its own so that the cron worker bundles only this, not the sign-in's ceremony.
 */
import type { Statements } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type {} from "./rpc";

/**
 * Deletes the passkey sign-in's challenges that expired, its refusals recorded, and the person's
 * sign-ins (by presence or passkey) that stopped counting (used, or their hosted session over), more
 * than a day before `at` (none can count any more: ./passkey.ts, ./session.ts). Answers how many of each.
 */
export async function sweepPasskeySignIns(sql: Statements, at: Date): Promise<{ challenges: number; refusals: number; sign_ins: number }> {
  return rpc(sql, "person_passkey_sweep", { now: at.toISOString() });
}
