import type { Sql } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type {} from "./rpc";

/**
 * Hosted-session expiry, the first half of each session-expiry-and-webhooks tick: sessions that
 * expired unfinished are stored as expired and get their `session.expired` event, which the same
 * tick then delivers.
 * Reads never wait for this: they derive the expiry from `expires_at`. Answers how many expired.
 */
export async function expireSessions(sql: Sql, at: Date): Promise<number> {
  return (await rpc(sql, "hosted_sessions_expire", { now: at.toISOString() })).expired;
}
