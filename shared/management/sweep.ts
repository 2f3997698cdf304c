/**
 * The minute cron's sweep of the console's sign-ins and sessions (docs/decisions.md, D-730), in a
 * module of its own so that the cron worker bundles only this, not the console's sign-in.
 */
import type { Statements } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type {} from "./rpc";

/**
 * Deletes the console's sign-ins that stopped counting (used, or their hosted session over) and its
 * sessions that are over (signed out, idle or past their end), more than a day before `at`: none can
 * sign anyone in any more (./owner-sessions.ts). Answers how many of each.
 */
export async function sweepConsoleSignIns(sql: Statements, at: Date): Promise<{ sign_ins: number; sessions: number }> {
  return rpc(sql, "owner_console_sweep", { now: at.toISOString() });
}
