/**
 * SQL-level tests of the hosted-session RPCs: the row lock that makes a token single use and a
 * session's completion single. A second exchange waits for the first and is then refused, which
 * only the lock guarantees (without it, the second would overwrite the first); a completion holds
 * its session for its whole transaction, and anything else that would move it is refused at once. The expiry pass is
 * global, so it is tested on an instance of its own (tests/functions/hosted-session-events.test.ts).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Queryable } from "../../shared/kernel/db/client";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";

const realPostgres = Boolean(process.env.DATABASE_URL);
const T0 = new Date("2027-05-01T10:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();

/** A committed session of a fresh merchant, created at T0 with `ttl` seconds. */
async function seedSession(ttl = 60) {
  const merchant = await merchantFactory();
  const id = randomUUID();
  const token = `hst_${randomUUID()}`;
  await rawRpc(testDb(), "hosted_session_create", {
    id,
    merchant_id: merchant.merchant_id,
    environment: "test",
    token_hash: await sha256Hex(token),
    action: "login",
    metadata: { k: "v" },
    ttl_seconds: ttl,
    now: at(0),
  });
  const exchange = async (db: Queryable, seconds: number) =>
    rawRpc<Record<string, any>>(db, "hosted_session_consume", {
      token_hash: await sha256Hex(token),
      now: at(seconds),
      opened_by: "service",
      capture_nonce: `hcn_${randomUUID()}`,
      screen_token_hash: await sha256Hex(`hsc_${randomUUID()}`),
    });
  return { id, merchant, exchange, stored: async () => (await testDb()`select * from private.hosted_sessions where id = ${id}::uuid`)[0] };
}

/** Waits until a backend is blocked on a lock while running `rpc`. */
async function blockedOn(rpc: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [row] = await testDb()`select count(*)::int as n from pg_stat_activity
      where wait_event_type = 'Lock' and query like ${`%public.${rpc}(%`}`;
    if (row.n > 0) return;
    if (Date.now() > deadline) throw new Error(`nothing blocked on ${rpc}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Runs `first` in a transaction held open until a second call (`second`, on another connection) is
 * blocked on its lock, then commits; answers how the second call ended.
 */
async function whileHeld(rpc: string, first: (tx: Queryable) => Promise<unknown>, second: () => Promise<unknown>) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started!: () => void;
  const firstDone = new Promise<void>((resolve) => {
    started = resolve;
  });
  const transaction = testDb().begin(async (tx) => {
    await first(tx);
    started();
    await held;
  });
  await firstDone;
  const outcome = second().then(
    (value) => ({ ok: true as const, value }),
    (error) => ({ ok: false as const, code: (error as { code?: string }).code }),
  );
  await blockedOn(rpc);
  release();
  await transaction;
  return outcome;
}

describe.skipIf(!realPostgres)("hosted session RPCs: the row lock", () => {
  it("an exchange waits for a concurrent exchange to commit, then is refused (HA701): single use", async () => {
    const session = await seedSession();
    const second = await whileHeld(
      "hosted_session_consume",
      (tx) => session.exchange(tx, 1),
      () => session.exchange(testDb(), 1),
    );
    expect(second).toEqual({ ok: false, code: "HA701" });
    expect((await session.stored()).state).toBe("opened");
  });

  it("a completion holds the session for its transaction: another completion and a cancel are refused at once (HA704); rolled back, the session is opened again", async () => {
    const session = await seedSession();
    await session.exchange(testDb(), 1);
    const screenTokenHash = (await session.stored()).screen_token_hash as string;
    const begin = (db: Queryable) => rawRpc(db, "hosted_session_complete_begin", { screen_token_hash: screenTokenHash, now: at(2) });
    const cancel = (db: Queryable) =>
      rawRpc(db, "hosted_session_cancel", { screen_token_hash: screenTokenHash, now: at(3), reason: "person_cancelled" });
    const rollback = new Error("rollback");
    await testDb()
      .begin(async (tx) => {
        await begin(tx);
        await expect(begin(testDb())).rejects.toMatchObject({ code: "HA704" });
        await expect(cancel(testDb())).rejects.toMatchObject({ code: "HA704" });
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    expect((await session.stored()).state).toBe("opened");
    await expect(begin(testDb())).resolves.toMatchObject({ session_id: session.id });
  });
});
