/**
 * SQL-level tests of the mandate RPCs (the pgTAP equivalent): each test seeds its own merchant,
 * identity, capture and mandates with SQL inside a transaction that is rolled back at the end, and
 * drives public.mandate_* with explicit `now` values, so time is exact and nothing outlives a test.
 */
import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Queryable } from "../../shared/kernel/db/client";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { type Ceiling, type Grantor, issueMandate, type MandateOptions, seedGrantor } from "../fixtures/mandate-seed";
import { ROLLBACK, rolledBack, testDb } from "../harness/factories";

type Answer = Record<string, any>;

const T0 = new Date("2027-03-01T09:00:00Z");
const iso = (at: string | Date) => (typeof at === "string" ? new Date(at) : at).toISOString();
/** An instant as the API prints it (with offset), normalised for comparison. */
const instant = (value: unknown) => (value == null ? value : new Date(value as string).toISOString());
const publicId = (prefix: string, id: string) => `${prefix}${id.replace(/-/g, "")}`;
const requestHash = (action: unknown) => createHash("sha256").update(JSON.stringify(action)).digest("hex");

interface Action {
  scope?: string;
  amount?: number;
  currency?: string;
  action_ref?: string;
  context?: Record<string, string>;
}

/** One mandate in one transaction, with the RPCs bound to its merchant and environment. */
async function mandateIn(db: Queryable, options: MandateOptions & { grantor?: Grantor; thresholdPercent?: number } = {}) {
  const grantor = options.grantor ?? (await seedGrantor(db, { at: T0, thresholdPercent: options.thresholdPercent }));
  const { id, mandate } = await issueMandate(db, grantor, options);
  const base = { mandate_id: id, merchant_id: grantor.merchantId, environment: grantor.environment };
  const money = options.ceiling?.kind === "amount" || options.ceiling?.kind === "both" || options.ceiling === undefined;
  const defaults: Action = money
    ? { scope: "purchase", currency: options.ceiling?.currency ?? "USD" }
    : { scope: options.scopes?.[0] ?? "purchase" };
  const params = (at: string | Date, action: Action) => ({ ...base, now: iso(at), ...defaults, ...action });
  return {
    id,
    mandate,
    grantor,
    publicId: publicId("mdt_", id),
    consume: (at: string | Date, action: Action = {}, key = `idem-${randomUUID()}`) =>
      rawRpc<Answer>(db, "mandate_consume", {
        ...params(at, action),
        idempotency_key: key,
        request_hash: requestHash({ ...defaults, ...action }),
      }),
    check: (at: string | Date, action: Action = {}) => rawRpc<Answer>(db, "mandate_check", params(at, action)),
    get: (at: string | Date) => rawRpc<Answer>(db, "mandate_get", { ...base, now: iso(at) }),
    revoke: (
      at: string | Date,
      by: Record<string, unknown> = { by: "issuing_merchant", merchant_id: grantor.merchantId, environment: "test" },
    ) => rawRpc<Answer | null>(db, "mandate_revoke", { mandate_id: id, now: iso(at), reason: "test", ...by }),
    consumptions: () =>
      db.unsafe(`select amount, created_at from private.mandate_consumptions where mandate_id = $1 order by created_at`, [id]),
    events: (type?: string) =>
      db.unsafe(
        `select type, data, merchant_id, environment, created_at from private.outbox_events
         where data ->> 'mandate_id' = $1 and ($2::text is null or type = $2) order by created_at, data ->> 'consumption_id'`,
        [publicId("mdt_", id), type ?? null],
      ),
  };
}

function list(db: Queryable, grantor: Grantor, status: string, at: string | Date) {
  return rawRpc<Answer[]>(db, "mandate_list", { merchant_id: grantor.merchantId, environment: "test", status, now: iso(at), limit: 200 });
}

// ---------------------------------------------------------------------------------------------
describe("period buckets", () => {
  const cases: [period: string, at: string, start: string | null, resets: string | null][] = [
    ["daily", "2027-03-10T23:59:59.999Z", "2027-03-10T00:00:00.000Z", "2027-03-11T00:00:00.000Z"],
    ["daily", "2027-03-11T00:00:00.000Z", "2027-03-11T00:00:00.000Z", "2027-03-12T00:00:00.000Z"],
    ["daily", "2027-12-31T23:59:59.999Z", "2027-12-31T00:00:00.000Z", "2028-01-01T00:00:00.000Z"],
    ["daily", "2028-02-28T12:00:00.000Z", "2028-02-28T00:00:00.000Z", "2028-02-29T00:00:00.000Z"],
    ["daily", "2027-02-28T12:00:00.000Z", "2027-02-28T00:00:00.000Z", "2027-03-01T00:00:00.000Z"],
    // ISO weeks: Sunday 2027-03-14 belongs to the week of Monday 2027-03-08
    ["weekly", "2027-03-08T00:00:00.000Z", "2027-03-08T00:00:00.000Z", "2027-03-15T00:00:00.000Z"],
    ["weekly", "2027-03-14T23:59:59.999Z", "2027-03-08T00:00:00.000Z", "2027-03-15T00:00:00.000Z"],
    ["weekly", "2027-03-15T00:00:00.000Z", "2027-03-15T00:00:00.000Z", "2027-03-22T00:00:00.000Z"],
    // the ISO week across New Year: Friday 2027-12-31 and Saturday 2028-01-01 share Monday 2027-12-27
    ["weekly", "2027-12-31T12:00:00.000Z", "2027-12-27T00:00:00.000Z", "2028-01-03T00:00:00.000Z"],
    ["weekly", "2028-01-01T12:00:00.000Z", "2027-12-27T00:00:00.000Z", "2028-01-03T00:00:00.000Z"],
    ["monthly", "2027-01-31T23:59:59.999Z", "2027-01-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z"],
    ["monthly", "2027-02-28T23:59:59.999Z", "2027-02-01T00:00:00.000Z", "2027-03-01T00:00:00.000Z"],
    ["monthly", "2027-03-01T00:00:00.000Z", "2027-03-01T00:00:00.000Z", "2027-04-01T00:00:00.000Z"],
    ["monthly", "2027-12-31T23:59:59.999Z", "2027-12-01T00:00:00.000Z", "2028-01-01T00:00:00.000Z"],
    ["monthly", "2028-01-01T00:00:00.000Z", "2028-01-01T00:00:00.000Z", "2028-02-01T00:00:00.000Z"],
    ["monthly", "2028-02-29T23:59:59.999Z", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"],
    ["monthly", "2028-03-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z", "2028-04-01T00:00:00.000Z"],
    // buckets that contain a daylight-saving change somewhere (New York: 14 March and 7 November 2027;
    // Lord Howe: half an hour on 4 April 2027)
    ["daily", "2027-03-14T12:00:00.000Z", "2027-03-14T00:00:00.000Z", "2027-03-15T00:00:00.000Z"],
    ["weekly", "2027-04-01T12:00:00.000Z", "2027-03-29T00:00:00.000Z", "2027-04-05T00:00:00.000Z"],
    ["monthly", "2027-04-15T00:00:00.000Z", "2027-04-01T00:00:00.000Z", "2027-05-01T00:00:00.000Z"],
    ["monthly", "2027-11-15T00:00:00.000Z", "2027-11-01T00:00:00.000Z", "2027-12-01T00:00:00.000Z"],
    ["lifetime", "2027-03-10T12:00:00.000Z", null, null],
  ];

  // The bucket is UTC whatever the session's time zone: Kolkata is +05:30 all year, New York and Lord
  // Howe change their offset inside some of the buckets above.
  for (const zone of ["UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]) {
    it(`private.mandate_period gives UTC buckets [start, resets_at) with the session in ${zone}`, async () => {
      await rolledBack(async (tx) => {
        await tx.unsafe(`select set_config('TimeZone', $1, true)`, [zone]);
        for (const [period, at, start, resets] of cases) {
          const [row] = await tx.unsafe(`select period_start, resets_at from private.mandate_period($1, $2::timestamptz)`, [period, at]);
          expect([period, at, row.period_start?.toISOString() ?? null, row.resets_at?.toISOString() ?? null]).toEqual([
            period,
            at,
            start,
            resets,
          ]);
        }
      });
    });
  }

  it("a daily count ceiling resets at midnight UTC; period_resets_at is the next midnight with an offset", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { scopes: ["login"], ceiling: { kind: "count", count: 2, period: "daily" } });
      const lastSecond = "2027-03-10T23:59:59.999Z";
      expect(await m.consume("2027-03-10T00:00:00.000Z")).toMatchObject({
        allowed: true,
        at_limit: false,
        remaining: { amount: null, currency: null, count: 1 },
      });
      const second = await m.consume(lastSecond);
      expect(second).toMatchObject({ allowed: true, at_limit: true, remaining: { count: 0 } });
      expect(second.period_resets_at).toMatch(/^2027-03-11T00:00:00(\.0+)?(\+00:00|Z)$/);
      const refused = await m.consume(lastSecond);
      expect(refused).toMatchObject({ allowed: false, reason: "mandate_exhausted", remaining: { count: 0 } });
      expect(instant(refused.period_resets_at)).toBe("2027-03-11T00:00:00.000Z");
      expect(await m.get(lastSecond)).toMatchObject({ status: "exhausted", stored_status: "active" });
      expect(await m.get("2027-03-11T00:00:00.000Z")).toMatchObject({ status: "active", stored_status: "active" });
      const next = await m.consume("2027-03-11T00:00:00.000Z");
      expect(next).toMatchObject({ allowed: true, remaining: { count: 1 } });
      expect(instant(next.period_resets_at)).toBe("2027-03-12T00:00:00.000Z");
    });
  });

  it("a weekly amount ceiling spans Monday 00:00 to Sunday 23:59:59.999 and resets on Monday", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { ceiling: { kind: "amount", amount: 100, currency: "EUR", period: "weekly" } });
      expect(await m.consume("2027-03-08T00:00:00.000Z", { amount: 40 })).toMatchObject({
        allowed: true,
        remaining: { amount: 60, currency: "EUR" },
      });
      expect(await m.consume("2027-03-14T23:59:59.999Z", { amount: 61 })).toMatchObject({
        allowed: false,
        reason: "ceiling_exceeded",
        remaining: { amount: 60 },
      });
      const sunday = await m.consume("2027-03-14T23:59:59.999Z", { amount: 60 });
      expect(sunday).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0, currency: "EUR" } });
      expect(instant(sunday.period_resets_at)).toBe("2027-03-15T00:00:00.000Z");
      expect(await m.consume("2027-03-14T23:59:59.999Z", { amount: 1 })).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
      const monday = await m.consume("2027-03-15T00:00:00.000Z", { amount: 100 });
      expect(monday).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0 } });
      expect(instant(monday.period_resets_at)).toBe("2027-03-22T00:00:00.000Z");
      // the week before is untouched by Monday's consumption
      expect(await m.check("2027-03-01T00:00:00.000Z", { amount: 100 })).toMatchObject({ allowed: true, remaining: { amount: 100 } });
    });
  });

  it("a monthly ceiling rolls over from December to January", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, {
        ceiling: { kind: "amount", amount: 500, currency: "USD", period: "monthly" },
        expiresAt: new Date("2029-01-01T00:00:00Z"),
      });
      const december = await m.consume("2027-12-31T23:59:59.999Z", { amount: 500 });
      expect(december).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0 } });
      expect(instant(december.period_resets_at)).toBe("2028-01-01T00:00:00.000Z");
      expect(await m.consume("2027-12-31T23:59:59.999Z", { amount: 1 })).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
      const january = await m.consume("2028-01-01T00:00:00.000Z", { amount: 500 });
      expect(january).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0 } });
      expect(instant(january.period_resets_at)).toBe("2028-02-01T00:00:00.000Z");
    });
  });

  it("February is one bucket to its last millisecond, 28 days in 2027 and 29 in 2028", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, {
        scopes: ["login"],
        ceiling: { kind: "count", count: 2, period: "monthly" },
        expiresAt: new Date("2029-01-01T00:00:00Z"),
      });
      for (const [first, last, next] of [
        ["2027-02-01T00:00:00.000Z", "2027-02-28T23:59:59.999Z", "2027-03-01T00:00:00.000Z"],
        ["2028-02-01T00:00:00.000Z", "2028-02-29T23:59:59.999Z", "2028-03-01T00:00:00.000Z"],
      ]) {
        expect(await m.consume(first)).toMatchObject({ allowed: true, remaining: { count: 1 } });
        const atLast = await m.consume(last);
        expect(atLast).toMatchObject({ allowed: true, at_limit: true, remaining: { count: 0 } });
        expect(instant(atLast.period_resets_at)).toBe(next);
        expect(await m.consume(last)).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
        expect(await m.consume(next)).toMatchObject({ allowed: true, remaining: { count: 1 } });
      }
      expect(await m.check("2028-02-28T23:59:59.999Z")).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
    });
  });

  it("counts a consumption only in the bucket of its own created_at, even when a later bucket's committed first", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { scopes: ["login"], ceiling: { kind: "count", count: 1, period: "daily" } });
      // two requests either side of midnight; the later-stamped one takes the lock first
      expect(await m.consume("2027-03-11T00:00:00.100Z")).toMatchObject({ allowed: true, at_limit: true });
      expect(await m.check("2027-03-10T23:59:59.900Z")).toMatchObject({ allowed: true, remaining: { count: 1 } });
      expect(await m.get("2027-03-10T23:59:59.900Z")).toMatchObject({ status: "active" });
      expect(await m.consume("2027-03-10T23:59:59.900Z")).toMatchObject({ allowed: true, at_limit: true, remaining: { count: 0 } });
      expect(await m.consume("2027-03-11T00:00:00.200Z")).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
      expect(await m.consume("2027-03-10T23:59:59.950Z")).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
    });
  });

  it("reports period_resets_at in UTC whatever the session time zone", async () => {
    await rolledBack(async (tx) => {
      await tx.unsafe(`select set_config('TimeZone', 'America/New_York', true)`);
      const monthly = await mandateIn(tx, { ceiling: { kind: "amount", amount: 500, currency: "USD", period: "monthly" } });
      expect(instant((await monthly.consume("2027-03-15T12:00:00Z", { amount: 1 })).period_resets_at)).toBe("2027-04-01T00:00:00.000Z");
      const weekly = await mandateIn(tx, { scopes: ["login"], ceiling: { kind: "count", count: 5, period: "weekly" } });
      expect(instant((await weekly.consume("2027-03-14T12:00:00Z")).period_resets_at)).toBe("2027-03-15T00:00:00.000Z");
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("ceilings", () => {
  it("amount: refuses past the ceiling with what remains, flags the last unit, and a lifetime ceiling at zero reads exhausted, stored active", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { ceiling: { kind: "amount", amount: 700, currency: "USD", period: "lifetime" } });
      const at = "2027-03-02T10:00:00Z";
      expect(await m.consume(at, { amount: undefined, currency: undefined })).toEqual({ allowed: false, reason: "amount_required" });
      expect(await m.consume(at, { amount: 300 })).toMatchObject({
        allowed: true,
        at_limit: false,
        remaining: { amount: 400, currency: "USD", count: null },
        period_resets_at: null,
      });
      expect(await m.consume(at, { amount: 401 })).toEqual({
        allowed: false,
        reason: "ceiling_exceeded",
        remaining: { amount: 400, currency: "USD", count: null },
        period_resets_at: null,
      });
      expect(await m.get(at)).toMatchObject({ status: "active", stored_status: "active" });
      expect(await m.consume(at, { amount: 400 })).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0 } });
      const [row] = await tx.unsafe(`select status, updated_at from private.mandates where id = $1`, [m.id]);
      expect(row.status).toBe("active");
      expect(await m.consume(at, { amount: 1 })).toEqual({
        allowed: false,
        reason: "mandate_exhausted",
        remaining: { amount: 0, currency: "USD", count: null },
        period_resets_at: null,
      });
      expect(await m.get(at)).toMatchObject({ status: "exhausted", stored_status: "active" });
      expect((await m.consumptions()).map((c) => Number(c.amount)).sort()).toEqual([300, 400]);
    });
  });

  it("count: a lifetime count ceiling is exhausted after its last use", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { scopes: ["login"], ceiling: { kind: "count", count: 3, period: "lifetime" } });
      const at = "2027-03-02T10:00:00Z";
      const answers = [await m.consume(at), await m.consume(at), await m.consume(at)];
      expect(answers.map((a) => [a.allowed, a.remaining.count, a.at_limit])).toEqual([
        [true, 2, false],
        [true, 1, false],
        [true, 0, true],
      ]);
      expect(await m.consume(at)).toMatchObject({ allowed: false, reason: "mandate_exhausted", period_resets_at: null });
      expect(await m.get(at)).toMatchObject({ status: "exhausted", stored_status: "active" });
    });
  });

  it("both: whichever of count and amount runs out first decides; a periodic ceiling is exhausted", async () => {
    await rolledBack(async (tx) => {
      const ceiling: Ceiling = { kind: "both", amount: 1000, currency: "USD", count: 3, period: "daily" };
      const at = "2027-03-02T10:00:00Z";
      const byCount = await mandateIn(tx, { ceiling });
      expect(await byCount.consume(at, { amount: 100 })).toMatchObject({ allowed: true, remaining: { amount: 900, count: 2 } });
      expect(await byCount.consume(at, { amount: 100 })).toMatchObject({ allowed: true, remaining: { amount: 800, count: 1 } });
      expect(await byCount.consume(at, { amount: 100 })).toMatchObject({
        allowed: true,
        at_limit: true,
        remaining: { amount: 700, currency: "USD", count: 0 },
      });
      expect(await byCount.consume(at, { amount: 1 })).toMatchObject({
        allowed: false,
        reason: "mandate_exhausted",
        remaining: { amount: 700, count: 0 },
      });
      expect(await byCount.get(at)).toMatchObject({ status: "exhausted", stored_status: "active" });

      const byAmount = await mandateIn(tx, { ceiling, grantor: byCount.grantor });
      expect(await byAmount.consume(at, { amount: 600 })).toMatchObject({
        allowed: true,
        at_limit: false,
        remaining: { amount: 400, count: 2 },
      });
      expect(await byAmount.consume(at, { amount: 500 })).toMatchObject({
        allowed: false,
        reason: "ceiling_exceeded",
        remaining: { amount: 400, count: 2 },
      });
      expect(await byAmount.consume(at, { amount: 400 })).toMatchObject({
        allowed: true,
        at_limit: true,
        remaining: { amount: 0, count: 1 },
      });
      expect(await byAmount.consume(at, { amount: 0 })).toMatchObject({
        allowed: false,
        reason: "mandate_exhausted",
        remaining: { amount: 0, count: 1 },
      });
      expect(await byAmount.get(at)).toMatchObject({ status: "exhausted", stored_status: "active" });
      expect(await byAmount.consume("2027-03-03T00:00:00Z", { amount: 1000 })).toMatchObject({
        allowed: true,
        at_limit: true,
        remaining: { amount: 0, count: 2 },
      });
    });
  });

  it("none: every consume is allowed, with no remaining, no reset and no at_limit", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { scopes: ["login"], ceiling: { kind: "none", period: "lifetime" } });
      for (let i = 0; i < 25; i++) {
        expect(await m.consume(new Date(T0.getTime() + i * 1000))).toMatchObject({
          allowed: true,
          at_limit: false,
          remaining: { amount: null, currency: null, count: null },
          period_resets_at: null,
        });
      }
      expect(await m.get(T0)).toMatchObject({
        status: "active",
        stored_status: "active",
        ceiling: { kind: "none", amount: null, count: null },
      });
      expect(await m.events("mandate.consumed")).toHaveLength(25);
      expect(await m.events("mandate.at_limit")).toHaveLength(0);
    });
  });

  it("a step-up mandate's consumption never touches its parent's balance", async () => {
    await rolledBack(async (tx) => {
      const parent = await mandateIn(tx, { ceiling: { kind: "amount", amount: 700, currency: "USD", period: "lifetime" } });
      const child = await mandateIn(tx, {
        grantor: parent.grantor,
        stepUpOf: parent.id,
        ceiling: { kind: "amount", amount: 300, currency: "USD", period: "lifetime" },
      });
      expect(child.mandate.step_up_of).toBe(parent.publicId);
      expect(await child.consume(T0, { amount: 300 })).toMatchObject({ allowed: true, at_limit: true });
      expect(await parent.check(T0, { amount: 700 })).toMatchObject({ allowed: true, remaining: { amount: 700 } });
      expect(await parent.get(T0)).toMatchObject({ status: "active", stored_status: "active", consumptions: [] });
      expect(await child.get(T0)).toMatchObject({ status: "exhausted" });
    });
  });

  it("mandate_check decides the same way and writes nothing", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { ceiling: { kind: "amount", amount: 700, currency: "USD", period: "daily" } });
      expect(await m.check(T0, { amount: 700 })).toEqual({
        allowed: true,
        remaining: { amount: 700, currency: "USD", count: null },
        period_resets_at: expect.any(String),
      });
      expect(await m.check(T0, { amount: 701 })).toMatchObject({ allowed: false, reason: "ceiling_exceeded" });
      expect(await m.consumptions()).toHaveLength(0);
      expect(await m.events("mandate.consumed")).toHaveLength(0);
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("expiry", () => {
  it("expires_at == now is expired; a millisecond before is not", async () => {
    await rolledBack(async (tx) => {
      const expiresAt = new Date("2027-06-01T12:00:00.000Z");
      const before = new Date(expiresAt.getTime() - 1);
      const m = await mandateIn(tx, { expiresAt });
      expect(await m.consume(before, { amount: 100 })).toMatchObject({ allowed: true });
      expect(await m.check(expiresAt, { amount: 1 })).toEqual({ allowed: false, reason: "mandate_expired" });
      expect(await m.consume(expiresAt, { amount: 1 })).toEqual({ allowed: false, reason: "mandate_expired" });
      expect(await m.get(before)).toMatchObject({ status: "active", stored_status: "active" });
      expect(await m.get(expiresAt)).toMatchObject({ status: "expired", stored_status: "active", expires_at: expect.any(String) });
      expect((await list(tx, m.grantor, "expired", expiresAt)).map((x) => x.mandate_id)).toEqual([m.publicId]);
      expect(await list(tx, m.grantor, "active", expiresAt)).toEqual([]);
      expect((await list(tx, m.grantor, "active", before)).map((x) => x.mandate_id)).toEqual([m.publicId]);
      expect(await m.consumptions()).toHaveLength(1);
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("revocation", () => {
  it("revokes once with an outbox event, repeats answer already_revoked with the first revoked_at, and every later use is refused", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx);
      const at = "2027-03-05T08:00:00.000Z";
      const first = await m.revoke(at);
      expect(first).toEqual({
        revoked: true,
        already_revoked: false,
        mandate_id: m.publicId,
        status: "revoked",
        revoked_at: expect.any(String),
      });
      expect(instant(first!.revoked_at)).toBe(at);
      const again = await m.revoke("2027-03-06T08:00:00.000Z", { by: "service_role" });
      expect(again).toEqual({ ...first, already_revoked: true });
      const events = await m.events("mandate.revoked");
      expect(events).toHaveLength(1);
      expect(events[0].data).toMatchObject({ mandate_id: m.publicId, revoked_by: "issuing_merchant", reason: "test" });
      expect(await m.consume(at, { amount: 1 })).toEqual({ allowed: false, reason: "mandate_revoked" });
      expect(await m.check(at, { amount: 1 })).toEqual({ allowed: false, reason: "mandate_revoked" });
      // revoked outranks expired
      expect(await m.get("2030-01-01T00:00:00Z")).toMatchObject({ status: "revoked", stored_status: "revoked" });
      expect(await m.consumptions()).toHaveLength(0);
    });
  });

  it("answers null for anyone but the issuing merchant, the granting human and the service role", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx);
      const other = await seedGrantor(tx, { at: T0 });
      const at = "2027-03-05T08:00:00Z";
      expect(await m.revoke(at, { by: "issuing_merchant", merchant_id: other.merchantId, environment: "test" })).toBeNull();
      expect(await m.revoke(at, { by: "issuing_merchant", merchant_id: m.grantor.merchantId, environment: "live" })).toBeNull();
      expect(await m.revoke(at, { by: "granting_human", identity_id: other.identityId, environment: "test" })).toBeNull();
      expect(await m.revoke(at, { by: "agent", merchant_id: m.grantor.merchantId, environment: "test" })).toBeNull();
      expect(await rawRpc(tx, "mandate_revoke", { mandate_id: randomUUID(), now: at, by: "service_role" })).toBeNull();
      expect(await m.get(at)).toMatchObject({ status: "active" });
      expect(await m.revoke(at, { by: "granting_human", identity_id: m.grantor.identityId, environment: "test" })).toMatchObject({
        revoked: true,
        already_revoked: false,
      });
      const [row] = await tx.unsafe(`select revoked_by from private.mandates where id = $1`, [m.id]);
      expect(row.revoked_by).toBe("granting_human");
    });
  });

  it("the database refuses un-revoking, rewriting a revocation, a stored consumed, and any change to an immutable column", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { constraints: { merchant_allowlist: ["acme"] } });
      const refused = (statement: string) =>
        expect(
          tx.savepoint((sp) => sp.unsafe(statement, [m.id])),
          statement,
        ).rejects.toMatchObject({ code: "HA423" });
      for (const set of [
        "merchant_id = gen_random_uuid()",
        "environment = 'live'",
        "granted_to = 'someone_else'",
        "granted_to_kind = 'robot'",
        "granted_by_ref = 'sub_' || repeat('0', 48)",
        "agent_display_name = 'Renamed'",
        "scopes = array['purchase', 'payment']",
        "constraints = '{}'::jsonb",
        "ceiling_kind = 'none', ceiling_amount = null, ceiling_currency = null",
        "ceiling_amount = 70000",
        "ceiling_currency = 'EUR'",
        "ceiling_period = 'daily'",
        "assurance_level = 'face'",
        "expires_at = expires_at + interval '1 day'",
        "created_at = created_at - interval '1 day'",
        "step_up_of = id",
      ]) {
        await refused(`update private.mandates set ${set} where id = $1`);
      }
      await m.revoke("2027-03-05T08:00:00Z");
      await refused(
        `update private.mandates set status = 'active', revoked_at = null, revoked_reason = null, revoked_by = null where id = $1`,
      );
      await refused(`update private.mandates set status = 'active', revoked_at = null where id = $1`);
      await refused(`update private.mandates set revoked_at = revoked_at + interval '1 hour' where id = $1`);
      await refused(`update private.mandates set revoked_reason = 'rewritten', updated_at = now() where id = $1`);

      const spent = await mandateIn(tx, {
        scopes: ["login"],
        ceiling: { kind: "count", count: 1, period: "lifetime" },
        grantor: m.grantor,
      });
      await spent.consume(T0);
      // A used-up lifetime ceiling is derived (exhausted), never stored: `consumed` is no stored status any more.
      expect(await spent.get(T0)).toMatchObject({ status: "exhausted", stored_status: "active" });
      await expect(
        tx.savepoint((sp) => sp.unsafe(`update private.mandates set status = 'consumed' where id = $1`, [spent.id])),
      ).rejects.toMatchObject({ code: "23514" });
      await expect(
        tx.savepoint((sp) => sp.unsafe(`update private.mandate_consumptions set amount = 0 where mandate_id = $1`, [spent.id])),
      ).rejects.toMatchObject({ code: "HA423" });
      await expect(
        tx.savepoint((sp) => sp.unsafe(`delete from private.mandate_consumptions where mandate_id = $1`, [spent.id])),
      ).rejects.toMatchObject({ code: "HA423" });
      expect(await spent.consumptions()).toHaveLength(1);
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("effective status (mandate_get, mandate_list)", () => {
  it("reports revoked > expired > exhausted > active (a lifetime ceiling at zero too), with the stored status beside it", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const expiresAt = new Date("2027-04-01T00:00:00Z");
      const ceiling: Ceiling = { kind: "count", count: 1, period: "daily" };
      const make = (options: MandateOptions) => mandateIn(tx, { grantor, scopes: ["login"], expiresAt, ...options });
      const active = await make({ ceiling });
      const exhausted = await make({ ceiling });
      const spent = await make({ ceiling: { ...ceiling, period: "lifetime" } });
      const revoked = await make({ ceiling });
      const expiresSooner = await make({ ceiling, expiresAt: new Date("2027-03-20T00:00:00Z") });
      const at = "2027-03-10T12:00:00Z";
      await exhausted.consume(at);
      await spent.consume(at);
      await revoked.revoke(at);

      const expected: [typeof active, string, string][] = [
        [active, "active", "active"],
        [exhausted, "exhausted", "active"],
        [spent, "exhausted", "active"],
        [revoked, "revoked", "revoked"],
        [expiresSooner, "active", "active"],
      ];
      for (const [m, status, stored] of expected) expect(await m.get(at), status).toMatchObject({ status, stored_status: stored });
      for (const status of ["active", "exhausted", "consumed", "revoked", "expired"]) {
        const ids = (await list(tx, grantor, status, at)).map((x) => x.mandate_id).sort();
        expect(ids, status).toEqual(
          expected
            .filter(([, s]) => s === status)
            .map(([m]) => m.publicId)
            .sort(),
        );
      }
      // past every expiry: revoked wins, everything else is expired; nothing reads consumed
      const later = "2027-05-01T00:00:00Z";
      expect((await list(tx, grantor, "expired", later)).map((x) => x.mandate_id).sort()).toEqual(
        [active, exhausted, spent, expiresSooner].map((m) => m.publicId).sort(),
      );
      expect(await list(tx, grantor, "consumed", later)).toEqual([]);
      expect((await list(tx, grantor, "revoked", later)).map((x) => x.mandate_id)).toEqual([revoked.publicId]);
      expect(await exhausted.get("2027-03-11T00:00:00Z")).toMatchObject({ status: "active" });
      expect(await exhausted.get("2027-03-10T12:00:00Z")).toMatchObject({
        consumptions: [{ consumption_id: expect.stringMatching(/^cns_[0-9a-f]{32}$/) }],
      });
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("idempotency", () => {
  it("a replayed key returns the stored response, flagged with the mandate's status now, and debits once; after a revocation it refuses", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx);
      const key = `idem-${randomUUID()}`;
      const first = await m.consume("2027-03-02T10:00:00Z", { amount: 100, action_ref: "order-1" }, key);
      expect(first).toMatchObject({ allowed: true, idempotent_replay: false, remaining: { amount: 600 } });
      const replay = await m.consume("2027-03-02T11:00:00Z", { amount: 100, action_ref: "order-1" }, key);
      expect(replay).toEqual({ ...first, idempotent_replay: true, mandate_status: "active" });
      const [stored] = await tx.unsafe(`select response from private.mandate_consumptions where mandate_id = $1`, [m.id]);
      expect(stored.response).toEqual(first);
      await m.revoke("2027-03-02T12:00:00Z");
      expect(await m.consume("2027-03-02T13:00:00Z", { amount: 100, action_ref: "order-1" }, key)).toEqual({
        ...first,
        allowed: false,
        reason: "mandate_revoked",
        idempotent_replay: true,
        mandate_status: "revoked",
      });
      expect(await m.consumptions()).toHaveLength(1);
      expect(await m.events("mandate.consumed")).toHaveLength(1);
    });
  });

  it("the same key with another body raises HA422 and writes nothing; the same key on another mandate is its own consumption", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx);
      const key = `idem-${randomUUID()}`;
      await m.consume(T0, { amount: 100 }, key);
      await expect(
        tx.savepoint((sp) =>
          rawRpc(sp, "mandate_consume", {
            mandate_id: m.id,
            merchant_id: m.grantor.merchantId,
            environment: "test",
            now: iso(T0),
            scope: "purchase",
            amount: 200,
            currency: "USD",
            idempotency_key: key,
            request_hash: requestHash({ amount: 200 }),
          }),
        ),
      ).rejects.toMatchObject({ code: "HA422" });
      expect(await m.consumptions()).toHaveLength(1);
      const other = await mandateIn(tx, { grantor: m.grantor });
      expect(await other.consume(T0, { amount: 100 }, key)).toMatchObject({
        allowed: true,
        idempotent_replay: false,
        remaining: { amount: 600 },
      });
      expect(await other.consumptions()).toHaveLength(1);
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("outbox", () => {
  it("writes mandate.consumed with what remains, and mandate.at_limit exactly when at_limit is true", async () => {
    await rolledBack(async (tx) => {
      const m = await mandateIn(tx, { ceiling: { kind: "amount", amount: 700, currency: "USD", period: "daily" } });
      const answers: Answer[] = [];
      for (const [i, amount] of [300, 400, 1, 700].entries()) {
        const day = i < 3 ? "2027-03-02" : "2027-03-03";
        answers.push(await m.consume(`${day}T10:00:0${i}Z`, { amount, action_ref: `ref-${i}` }));
      }
      expect(answers.map((a) => a.allowed && a.at_limit)).toEqual([false, true, false, true]);
      const consumed = await m.events("mandate.consumed");
      expect(consumed).toHaveLength(3);
      expect(consumed[0]).toMatchObject({ merchant_id: m.grantor.merchantId, environment: "test" });
      expect(consumed[0].created_at.toISOString()).toBe("2027-03-02T10:00:00.000Z");
      expect(consumed[0].data).toEqual({
        mandate_id: m.publicId,
        consumption_id: answers[0].consumption_id,
        scope: "purchase",
        amount: 300,
        currency: "USD",
        action_ref: "ref-0",
        remaining: { amount: 400, currency: "USD", count: null },
        period_resets_at: answers[0].period_resets_at,
        at_limit: false,
      });
      expect(consumed[1].data).toMatchObject({ consumption_id: answers[1].consumption_id, remaining: { amount: 0 }, at_limit: true });
      const atLimit = await m.events("mandate.at_limit");
      expect(atLimit.map((e) => e.data)).toEqual(
        [answers[1], answers[3]].map((a) => ({
          mandate_id: m.publicId,
          consumption_id: a.consumption_id,
          remaining: { amount: 0, currency: "USD", count: null },
          period_resets_at: a.period_resets_at,
          threshold_percent: 0,
        })),
      );
    });
  });

  it("with at_limit_threshold_percent = 20, mandate.at_limit fires once on crossing 20% and again at zero", async () => {
    await rolledBack(async (tx) => {
      const amount = await mandateIn(tx, {
        thresholdPercent: 20,
        ceiling: { kind: "amount", amount: 1000, currency: "USD", period: "lifetime" },
      });
      const steps = [500, 300, 100, 100];
      const answers: Answer[] = [];
      for (const [i, value] of steps.entries()) answers.push(await amount.consume(new Date(T0.getTime() + i * 1000), { amount: value }));
      expect(answers.map((a) => [a.remaining.amount, a.at_limit])).toEqual([
        [500, false],
        [200, false],
        [100, false],
        [0, true],
      ]);
      const fired = await amount.events("mandate.at_limit");
      expect(fired.map((e) => [e.data.consumption_id, e.data.remaining.amount, e.data.threshold_percent])).toEqual([
        [answers[1].consumption_id, 200, 20],
        [answers[3].consumption_id, 0, 20],
      ]);

      // jumping from 25% to 15% crosses once; going further down does not fire again until zero
      const jump = await mandateIn(tx, {
        grantor: amount.grantor,
        ceiling: { kind: "amount", amount: 1000, currency: "USD", period: "lifetime" },
      });
      const jumps: Answer[] = [];
      for (const [i, value] of [750, 100, 100].entries())
        jumps.push(await jump.consume(new Date(T0.getTime() + i * 1000), { amount: value }));
      expect((await jump.events("mandate.at_limit")).map((e) => e.data.consumption_id)).toEqual([jumps[1].consumption_id]);

      // the same for a count ceiling: 10 uses, fires when 2 remain (20%) and when none remain
      const count = await mandateIn(tx, {
        grantor: amount.grantor,
        scopes: ["login"],
        ceiling: { kind: "count", count: 10, period: "daily" },
      });
      const uses: Answer[] = [];
      for (let i = 0; i < 10; i++) uses.push(await count.consume(new Date(T0.getTime() + i * 1000)));
      expect((await count.events("mandate.at_limit")).map((e) => e.data.consumption_id)).toEqual([
        uses[7].consumption_id,
        uses[9].consumption_id,
      ]);
      expect(uses.filter((u) => u.at_limit).map((u) => u.remaining.count)).toEqual([0]);
    });
  });

  it("a consumption whose transaction rolls back leaves neither a consumption nor an outbox event", async () => {
    const db = testDb();
    // committed seed (fresh ids): the rollback under test must be a real top-level one
    const grantor = await seedGrantor(db, { at: T0 });
    const { id } = await issueMandate(db, grantor, { ceiling: { kind: "amount", amount: 700, currency: "USD", period: "lifetime" } });
    const params = {
      mandate_id: id,
      merchant_id: grantor.merchantId,
      environment: "test",
      now: iso(T0),
      scope: "purchase",
      amount: 700,
      currency: "USD",
    };
    const counts = async () => {
      const [row] = await db.unsafe(
        `select (select count(*)::int from private.mandate_consumptions where mandate_id = $1) as consumptions,
                (select count(*)::int from private.outbox_events where data ->> 'mandate_id' = $2 and type <> 'mandate.granted') as events,
                (select status from private.mandates where id = $1) as status`,
        [id, publicId("mdt_", id)],
      );
      return row;
    };
    let inside: unknown;
    await expect(
      db.begin(async (tx) => {
        const answer = await rawRpc(tx, "mandate_consume", { ...params, idempotency_key: "idem-rolled-back", request_hash: "h1" });
        expect(answer).toMatchObject({ allowed: true, at_limit: true });
        inside = await tx.unsafe(
          `select (select count(*)::int from private.mandate_consumptions where mandate_id = $1) as consumptions,
                  (select count(*)::int from private.outbox_events where data ->> 'mandate_id' = $2 and type <> 'mandate.granted') as events`,
          [id, publicId("mdt_", id)],
        );
        throw ROLLBACK;
      }),
    ).rejects.toBe(ROLLBACK);
    expect(inside).toEqual([{ consumptions: 1, events: 2 }]);
    expect(await counts()).toEqual({ consumptions: 0, events: 0, status: "active" });
    // the same key then consumes for real, once
    expect(await rawRpc(db, "mandate_consume", { ...params, idempotency_key: "idem-rolled-back", request_hash: "h1" })).toMatchObject({
      allowed: true,
      idempotent_replay: false,
    });
    expect(await counts()).toEqual({ consumptions: 1, events: 2, status: "active" });
  });
});
