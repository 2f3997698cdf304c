/**
 * mandate-consume under real concurrency: every request below is in flight at the same time over
 * HTTP (Promise.all over `call`), each with its own connection to the database, and the counts
 * asserted are exact. The mandate row lock is the only thing that serialises them.
 */
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { testDb } from "../harness/factories";
import { type CallResult, call } from "../harness/http";
import { consume, mandateFixture } from "../harness/mandates";

const REQUESTS = 200;
const AMOUNT = 7;
const CEILING = 700;
/** A burst of 200 to 400 requests answers in a few seconds; the margin is for a loaded machine. */
const TIMEOUT = 60_000;

/** How many answers said what: `allowed`, or the refusal reason (non-200 answers by status and code). */
function tally(results: CallResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) {
    const what = r.status !== 200 ? `HTTP ${r.status} ${r.body?.code ?? r.text.slice(0, 80)}` : r.body.allowed ? "allowed" : r.body.reason;
    counts[what] = (counts[what] ?? 0) + 1;
  }
  return counts;
}

async function ledger(mandateId: string) {
  const id = mandateId.slice(4);
  const [row] = await testDb()`
    select (select coalesce(sum(amount), 0)::int from private.mandate_consumptions where mandate_id = ${id}::uuid) as sum,
           (select count(*)::int from private.mandate_consumptions where mandate_id = ${id}::uuid) as count,
           (select jsonb_agg('cns_' || replace(id::text, '-', '')) from private.mandate_consumptions where mandate_id = ${id}::uuid) as ids,
           (select status from private.mandates where id = ${id}::uuid) as status,
           (select count(*)::int from private.outbox_events where data ->> 'mandate_id' = ${mandateId} and type = 'mandate.consumed') as consumed_events,
           (select count(*)::int from private.outbox_events where data ->> 'mandate_id' = ${mandateId} and type = 'mandate.at_limit') as at_limit_events`;
  return row as { sum: number; count: number; ids: string[] | null; status: string; consumed_events: number; at_limit_events: number };
}

const multiples = (n: number) => Array.from({ length: n }, (_, i) => i * AMOUNT);

describe("mandate-consume under concurrency", () => {
  it(
    `${REQUESTS} concurrent consumes of ${AMOUNT} against a lifetime ceiling of ${CEILING}: exactly 100 allowed, the rest mandate_exhausted, ${CEILING} in the ledger`,
    async () => {
      const { merchant, mandate } = await mandateFixture({
        ceiling: { kind: "amount", amount: CEILING, currency: "USD", period: "lifetime" },
      });
      const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: AMOUNT, currency: "USD" };
      const results = await Promise.all(Array.from({ length: REQUESTS }, () => consume(merchant.keys.sk_test, action)));

      // The lock serialises them: the 100th allowed one takes the remainder to 0, so every later one
      // is refused as mandate_exhausted (never ceiling_exceeded: nothing is left).
      expect(tally(results)).toEqual({ allowed: 100, mandate_exhausted: 100 });
      const allowed = results.filter((r) => r.body.allowed).map((r) => r.body);
      expect(allowed.map((a) => a.remaining.amount).sort((a, b) => a - b)).toEqual(multiples(100));
      expect(allowed.filter((a) => a.at_limit)).toHaveLength(1);
      expect(allowed.find((a) => a.at_limit)!.remaining.amount).toBe(0);
      const book = await ledger(mandate.mandate_id);
      expect(book).toMatchObject({ sum: CEILING, count: 100, status: "active", consumed_events: 100, at_limit_events: 2 }); // the default threshold (20 %), then zero
      expect(new Set(book.ids)).toEqual(new Set(allowed.map((a) => a.consumption_id)));
    },
    TIMEOUT,
  );

  it(
    `${REQUESTS} concurrent consumes of ${AMOUNT} against a daily ceiling of ${CEILING + 3}: exactly 100 allowed, the rest ceiling_exceeded with 3 remaining`,
    async () => {
      const { merchant, mandate } = await mandateFixture({
        ceiling: { kind: "amount", amount: CEILING + 3, currency: "USD", period: "daily" },
      });
      const now = new Date();
      const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: AMOUNT, currency: "USD" };
      const results = await Promise.all(Array.from({ length: REQUESTS }, () => consume(merchant.keys.sk_test, action, { now })));

      expect(tally(results)).toEqual({ allowed: 100, ceiling_exceeded: 100 });
      for (const r of results.filter((r) => !r.body.allowed)) expect(r.body.remaining).toEqual({ amount: 3, currency: "USD", count: null });
      const allowed = results.filter((r) => r.body.allowed).map((r) => r.body);
      expect(allowed.map((a) => a.remaining.amount - 3).sort((a, b) => a - b)).toEqual(multiples(100));
      expect(allowed.filter((a) => a.at_limit)).toHaveLength(0);
      expect(await ledger(mandate.mandate_id)).toMatchObject({
        sum: CEILING,
        count: 100,
        status: "active",
        consumed_events: 100,
        // The default threshold (20 %) warns once, before the first refusal; nothing reached zero.
        at_limit_events: 1,
      });
    },
    TIMEOUT,
  );

  it(
    "50 racing replays of one Idempotency-Key: one consumption, 50 equal answers but for idempotent_replay and mandate_status",
    async () => {
      const { merchant, mandate } = await mandateFixture();
      const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: AMOUNT, currency: "USD", action_ref: "order-1" };
      const idempotencyKey = `idem-${crypto.randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 50 }, () => consume(merchant.keys.sk_test, action, { idempotencyKey })));

      expect(tally(results)).toEqual({ allowed: 50 });
      const originals = results.filter((r) => r.body.idempotent_replay === false);
      expect(originals).toHaveLength(1);
      const original = originals[0].body;
      expect(original).toMatchObject({ allowed: true, remaining: { amount: CEILING - AMOUNT, currency: "USD" }, at_limit: false });
      for (const r of results) {
        const { mandate_status, ...answer } = r.body;
        expect({ ...answer, idempotent_replay: false }).toEqual(original);
        // A replay also says the mandate's status now (issue 11).
        expect(mandate_status).toBe(r.body.idempotent_replay ? "active" : undefined);
      }
      expect(await ledger(mandate.mandate_id)).toMatchObject({ sum: AMOUNT, count: 1, ids: [original.consumption_id], consumed_events: 1 });
    },
    TIMEOUT,
  );

  it(
    "consumes racing a revoke: none commits after the revoke has, and every consume sent after its answer is refused",
    async () => {
      const { merchant, mandate } = await mandateFixture({
        ceiling: { kind: "amount", amount: 1_000_000, currency: "USD", period: "lifetime" },
      });
      const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: AMOUNT, currency: "USD" };
      const timed = async () => {
        const sentAt = performance.now();
        const result = await consume(merchant.keys.sk_test, action);
        return { sentAt, arrivedAt: performance.now(), result };
      };

      // the revoke goes out once the first 20 consumes have answered, with the other 180 still in flight
      let answered = 0;
      let startRevoke!: () => void;
      const twentyAnswered = new Promise<void>((resolve) => (startRevoke = resolve));
      const racing = Array.from({ length: REQUESTS }, () =>
        timed().then((t) => {
          if (++answered === 20) startRevoke();
          return t;
        }),
      );
      const revoke = twentyAnswered.then(async () => {
        const result = await call("mandate-revoke", {
          key: merchant.keys.sk_test,
          body: { mandate_id: mandate.mandate_id, reason: "race" },
        });
        const arrivedAt = performance.now();
        // everything committed before the revoke's commit is visible now; nothing may be added later
        const committed = (await ledger(mandate.mandate_id)).count;
        return { result, arrivedAt, committed };
      });
      const [consumes, revoked] = await Promise.all([Promise.all(racing), revoke]);
      const after = await Promise.all(Array.from({ length: 20 }, timed));

      expect(revoked.result.status, revoked.result.text).toBe(200);
      expect(revoked.result.body).toMatchObject({ revoked: true, already_revoked: false, status: "revoked" });
      const results = consumes.map((c) => c.result);
      const counts = tally(results);
      expect(Object.keys(counts).sort()).toEqual(["allowed", "mandate_revoked"].filter((k) => counts[k]));
      expect(counts.allowed).toBeGreaterThanOrEqual(20);
      expect(tally(after.map((c) => c.result))).toEqual({ mandate_revoked: 20 });
      for (const c of consumes.filter((c) => c.sentAt > revoked.arrivedAt)) expect(c.result.body.reason).toBe("mandate_revoked");

      const book = await ledger(mandate.mandate_id);
      expect(book.count).toBe(revoked.committed);
      expect(book.count).toBe(counts.allowed);
      expect(book.sum).toBe(counts.allowed * AMOUNT);
      expect(book.status).toBe("revoked");
      expect(new Set(book.ids)).toEqual(new Set(results.filter((r) => r.body.allowed).map((r) => r.body.consumption_id)));
    },
    TIMEOUT,
  );

  it(
    `${REQUESTS} consumes either side of midnight UTC against a daily ceiling of ${CEILING}, half of each day already spent: exactly ${CEILING} in each day`,
    async () => {
      const midnight = new Date();
      midnight.setUTCHours(24, 0, 0, 0);
      const { merchant, mandate } = await mandateFixture({
        ceiling: { kind: "amount", amount: CEILING, currency: "USD", period: "daily" },
        expires_at: new Date(midnight.getTime() + 2 * 86_400_000).toISOString(),
      });
      const before = new Date(midnight.getTime() - 500);
      const after = new Date(midnight.getTime() + 500);
      const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: AMOUNT, currency: "USD" };
      // half of each day's ceiling is spent first, so that each side of the race (100 requests) has
      // room for exactly 50 of them
      for (const now of [before, after]) {
        expect((await consume(merchant.keys.sk_test, { ...action, amount: CEILING / 2 }, { now })).body).toMatchObject({
          allowed: true,
          remaining: { amount: CEILING / 2 },
        });
      }
      const nows = Array.from({ length: REQUESTS }, (_, i) => (i % 2 ? after : before));
      const results = await Promise.all(nows.map((now) => consume(merchant.keys.sk_test, action, { now })));

      for (const [side, resets] of [
        [before, midnight],
        [after, new Date(midnight.getTime() + 86_400_000)],
      ] as const) {
        const answers = results.filter((_, i) => nows[i] === side);
        expect(tally(answers), side.toISOString()).toEqual({ allowed: 50, mandate_exhausted: 50 });
        const allowed = answers.filter((r) => r.body.allowed).map((r) => r.body);
        expect(allowed.map((a) => a.remaining.amount).sort((a, b) => a - b)).toEqual(multiples(50));
        for (const a of allowed) expect(new Date(a.period_resets_at).getTime()).toBe(resets.getTime());
      }

      const id = mandate.mandate_id.slice(4);
      const days = await testDb()`
      select created_at < ${midnight} as before_midnight, sum(amount)::int as sum, count(*)::int as count
      from private.mandate_consumptions where mandate_id = ${id}::uuid group by 1 order by 1 desc`;
      expect(days).toEqual([
        { before_midnight: true, sum: CEILING, count: 51 },
        { before_midnight: false, sum: CEILING, count: 51 },
      ]);
    },
    TIMEOUT,
  );
});
