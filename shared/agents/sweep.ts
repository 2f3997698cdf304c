/**
 * The minute cron's sweep of the MCP authorization endpoint's sign-ins (docs/decisions.md, D-751), in a
 * module of its own so that the cron worker bundles only this, not the sign-in.
 */
import type { Statements } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type {} from "./rpc";

/**
 * Deletes the sign-ins by presence of the MCP authorization endpoint that stopped counting (used, or
 * their hosted session over) more than a day before `at`: none can sign anyone in any more
 * (./sign-in.ts). Answers how many.
 */
export async function sweepAgentSignIns(sql: Statements, at: Date): Promise<number> {
  return (await rpc(sql, "agent_sign_in_sweep", { now: at.toISOString() })).sign_ins;
}
