/**
 * SQL-level tests of the per-bucket running totals (private.mandate_usage) that mandate_consume
 * reads instead of summing the ledger: after mixed consumes across bucket boundaries the totals
 * equal the ledger's sums, every read answers from them, the backfill recomputes them from the
 * ledger, and a database that applied the migrations before this one is upgraded in place with the
 * same answers. Rolled-back transactions on the database under test, as in mandate-rpcs.test.ts;
 * the upgrade uses a scratch database and needs a real Postgres.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { applyMigrations } from "../../scripts/local/migrations";
import type { Queryable } from "../../shared/kernel/db/client";
import { connect } from "../../shared/kernel/db/client";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { type Ceiling, type Grantor, issueMandate, seedGrantor } from "../fixtures/mandate-seed";
import { applyAs7ad62db, migrationsAt7ad62db } from "../fixtures/migrations-7ad62db";
import { rolledBack, testDb } from "../harness/factories";
import { grantReport } from "./grant-rules";

type Answer = Record<string, any>;

const receiptCode = () =>
  `RCPT-${randomBytes(6)
    .toString("hex")
    .toUpperCase()
    .replace(/(.{4})(.{4})(.{4})/, "$1-$2-$3")}`;
const USAGE_MIGRATION = "20261121009100_mandate_usage.sql";
/** The last migration 7ad62db had, as it is named today: every later one is new to a database upgraded from there. */
const LAST_AT_7AD62DB = "20261127002400_handoffs.sql";

const T0 = new Date("2027-03-01T09:00:00Z");
const DAY = 86_400_000;
const LIFETIME = "-infinity";
/** A uuid[] parameter as Postgres reads it (the clients run without type fetching, so arrays go as text). */
const uuids = (ids: string[]) => `{${ids.join(",")}}`;

/** The UTC start of the bucket containing `at`, computed here independently of the SQL. */
function bucketStart(period: Ceiling["period"], at: Date): string {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  switch (period) {
    case "lifetime":
      return LIFETIME;
    case "daily":
      return new Date(Date.UTC(y, m, d)).toISOString();
    case "weekly":
      return new Date(Date.UTC(y, m, d - ((at.getUTCDay() + 6) % 7))).toISOString();
    case "monthly":
      return new Date(Date.UTC(y, m, 1)).toISOString();
  }
}

/** A deterministic pseudo-random sequence (mulberry32), so a failure is reproducible. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Subject {
  id: string;
  ceiling: Ceiling;
  grantor: Grantor;
}

const actionFor = (s: Subject, amount: number) =>
  s.ceiling.kind === "amount" || s.ceiling.kind === "both"
    ? { scope: "purchase", amount, currency: s.ceiling.currency ?? "USD" }
    : { scope: "login" };

function consume(db: Queryable, s: Subject, at: Date, action: Record<string, unknown>, key = `idem-${randomUUID()}`) {
  const hash = createHash("sha256").update(JSON.stringify(action)).digest("hex");
  return rawRpc<Answer>(db, "mandate_consume", {
    mandate_id: s.id,
    merchant_id: s.grantor.merchantId,
    environment: "test",
    now: at.toISOString(),
    idempotency_key: key,
    request_hash: hash,
    ...action,
  });
}

function check(db: Queryable, s: Subject, at: Date, action: Record<string, unknown>) {
  return rawRpc<Answer>(db, "mandate_check", {
    mandate_id: s.id,
    merchant_id: s.grantor.merchantId,
    environment: "test",
    now: at.toISOString(),
    ...action,
  });
}

/** Issues one mandate of each kind and period the ceiling allows, on one grantor. */
async function subjects(db: Queryable, grantor: Grantor): Promise<Subject[]> {
  const ceilings: Ceiling[] = [
    { kind: "amount", amount: 1_000, currency: "USD", period: "daily" },
    { kind: "count", count: 6, period: "weekly" },
    { kind: "both", amount: 2_000, currency: "EUR", count: 9, period: "monthly" },
    { kind: "amount", amount: 5_000, currency: "USD", period: "lifetime" },
    { kind: "count", count: 40, period: "lifetime" },
    { kind: "none", period: "lifetime" },
    { kind: "none", period: "daily" },
  ];
  const out: Subject[] = [];
  for (const ceiling of ceilings) {
    const scopes = ceiling.kind === "amount" || ceiling.kind === "both" ? ["purchase"] : ["login"];
    const { id } = await issueMandate(db, grantor, { scopes, ceiling, expiresAt: new Date(T0.getTime() + 500 * DAY) });
    out.push({ id, ceiling, grantor });
  }
  return out;
}

/** Instants that sit on and either side of day, ISO-week, month and year boundaries (UTC), and some in between. */
function boundaryInstants(): Date[] {
  const edges = [
    "2027-03-08T00:00:00.000Z",
    "2027-03-31T23:59:59.999Z",
    "2027-04-01T00:00:00.000Z",
    "2027-12-31T23:59:59.999Z",
    "2028-01-01T00:00:00.000Z",
    "2028-02-29T12:00:00.000Z",
    "2028-03-01T00:00:00.000Z",
  ];
  const out: Date[] = [];
  for (const edge of edges) {
    const t = new Date(edge).getTime();
    out.push(new Date(t - 1), new Date(t), new Date(t + 1));
  }
  for (let i = 0; i < 20; i++) out.push(new Date(T0.getTime() + i * 9.5 * 3_600_000));
  return out;
}

/** The totals table as rows, per mandate and bucket (ISO strings; -infinity for lifetime). */
async function totals(db: Queryable, ids: string[]) {
  const rows = await db.unsafe(
    `select mandate_id::text as mandate_id, case when period_start = '-infinity' then '-infinity' else to_char(period_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end as period_start,
            used_amount::bigint::text as used_amount, used_count
     from private.mandate_usage where mandate_id = any ($1::uuid[]) order by 1, 2`,
    [uuids(ids)],
  );
  return rows.map((r) => ({
    mandate_id: r.mandate_id,
    period_start: r.period_start,
    used_amount: Number(r.used_amount),
    used_count: r.used_count,
  }));
}

/** The same figures grouped here from the ledger rows, with buckets computed in TypeScript. */
async function ledgerSums(db: Queryable, subjectsById: Map<string, Subject>) {
  const rows = await db.unsafe(
    `select mandate_id::text as mandate_id, amount, created_at from private.mandate_consumptions where mandate_id = any ($1::uuid[])`,
    [uuids([...subjectsById.keys()])],
  );
  const sums = new Map<string, { mandate_id: string; period_start: string; used_amount: number; used_count: number }>();
  for (const r of rows) {
    const period_start = bucketStart(subjectsById.get(r.mandate_id)!.ceiling.period, r.created_at as Date);
    const key = `${r.mandate_id} ${period_start}`;
    const sum = sums.get(key) ?? { mandate_id: r.mandate_id, period_start, used_amount: 0, used_count: 0 };
    sum.used_amount += Number(r.amount ?? 0);
    sum.used_count += 1;
    sums.set(key, sum);
  }
  return [...sums.values()].sort((a, b) =>
    a.mandate_id === b.mandate_id ? (a.period_start < b.period_start ? -1 : 1) : a.mandate_id < b.mandate_id ? -1 : 1,
  );
}

/** What mandate_check must report as remaining at `at`, from the ledger sums of that instant's bucket. */
function expectedRemaining(s: Subject, sums: Awaited<ReturnType<typeof ledgerSums>>, at: Date) {
  const used = sums.find((x) => x.mandate_id === s.id && x.period_start === bucketStart(s.ceiling.period, at)) ?? {
    used_amount: 0,
    used_count: 0,
  };
  return {
    amount: s.ceiling.amount == null ? null : Math.max(s.ceiling.amount - used.used_amount, 0),
    currency: s.ceiling.currency ?? null,
    count: s.ceiling.count == null ? null : Math.max(s.ceiling.count - used.used_count, 0),
  };
}

/** Random consumes (allowed, refused, replayed) at random instants, in an order that is not time order. */
async function mixedConsumes(db: Queryable, all: Subject[], seed: number, rounds: number) {
  const next = random(seed);
  const instants = boundaryInstants();
  const keys: { s: Subject; at: Date; action: Record<string, unknown>; key: string }[] = [];
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < rounds; i++) {
    let call: (typeof keys)[number];
    if (keys.length && next() < 0.1) call = keys[Math.floor(next() * keys.length)];
    else {
      const s = all[Math.floor(next() * all.length)];
      call = {
        s,
        at: instants[Math.floor(next() * instants.length)],
        action: actionFor(s, 1 + Math.floor(next() * 400)),
        key: `idem-${randomUUID()}`,
      };
      keys.push(call);
    }
    const answer = await consume(db, call.s, call.at, call.action, call.key);
    const outcome = answer.idempotent_replay ? "replay" : answer.allowed ? "allowed" : String(answer.reason);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  return outcomes;
}

// ---------------------------------------------------------------------------------------------
describe("mandate usage totals", () => {
  it("equal the ledger's sums per bucket after mixed consumes across day, week, month and year boundaries", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const all = await subjects(tx, grantor);
      const byId = new Map(all.map((s) => [s.id, s]));
      const outcomes = await mixedConsumes(tx, all, 20261121, 260);
      // the mix did exercise what it is meant to
      expect(outcomes.allowed).toBeGreaterThan(100);
      expect(outcomes.replay).toBeGreaterThan(5);
      expect((outcomes.mandate_exhausted ?? 0) + (outcomes.ceiling_exceeded ?? 0)).toBeGreaterThan(5);

      const sums = await ledgerSums(tx, byId);
      expect(await totals(tx, [...byId.keys()])).toEqual(sums);
      // the same figures with the ledger summed in SQL over [period_start, resets_at), as before the totals
      const [{ mismatches }] = await tx.unsafe(
        `select count(*)::int as mismatches from private.mandate_usage u join private.mandates m on m.id = u.mandate_id
         cross join lateral (select coalesce(sum(c.amount), 0) as amount, count(*)::int as n from private.mandate_consumptions c
                             where c.mandate_id = u.mandate_id and (u.period_start = '-infinity'
                               or (c.created_at >= u.period_start and c.created_at < (private.mandate_period(m.ceiling_period, u.period_start)).resets_at))) l
         where u.mandate_id = any ($1::uuid[]) and (u.used_amount <> l.amount or u.used_count <> l.n)`,
        [uuids([...byId.keys()])],
      );
      expect(mismatches).toBe(0);

      // every read answers from the same totals: check's remaining, and get's and list's effective status
      for (const s of all) {
        for (const at of boundaryInstants()) {
          const answer = await check(tx, s, at, actionFor(s, 1));
          if (s.ceiling.kind === "none") {
            expect(answer, `${s.ceiling.kind} ${s.ceiling.period} ${at.toISOString()}`).toMatchObject({
              allowed: true,
              remaining: { amount: null, count: null },
            });
            continue;
          }
          const remaining = expectedRemaining(s, sums, at);
          const gone = remaining.amount === 0 || remaining.count === 0;
          // A ceiling at zero, lifetime or periodic, is exhausted (resource API 3.1); the stored status stays active.
          const stored = "active";
          expect(answer.remaining, `${s.ceiling.kind} ${s.ceiling.period} ${at.toISOString()}`).toEqual(remaining);
          const status = gone ? "exhausted" : "active";
          expect(
            await rawRpc(tx, "mandate_get", {
              mandate_id: s.id,
              merchant_id: grantor.merchantId,
              environment: "test",
              now: at.toISOString(),
            }),
          ).toMatchObject({ status, stored_status: stored });
          const listed = await rawRpc<Answer[]>(tx, "mandate_list", {
            merchant_id: grantor.merchantId,
            environment: "test",
            status,
            now: at.toISOString(),
            limit: 200,
          });
          expect(listed.map((m) => m.mandate_id)).toContain(`mdt_${s.id.replace(/-/g, "")}`);
        }
      }
    });
  });

  it("a consume through mandate_transaction adds to the same total once, and its replay adds nothing", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const s: Subject = { grantor, ceiling: { kind: "both", amount: 900, currency: "USD", count: 3, period: "daily" }, id: "" };
      s.id = (await issueMandate(tx, grantor, { ceiling: s.ceiling })).id;
      const at = new Date(T0.getTime() + 60_000);
      const transaction = (key: string) => {
        const captureId = randomUUID();
        return rawRpc<Answer>(tx, "mandate_transaction", {
          identity_id: grantor.identityId,
          consume: {
            mandate_id: s.id,
            merchant_id: grantor.merchantId,
            environment: "test",
            now: at.toISOString(),
            idempotency_key: key,
            request_hash: "h",
            scope: "purchase",
            amount: 250,
            currency: "USD",
          },
          capture: {
            id: captureId,
            merchant_id: grantor.merchantId,
            environment: "test",
            action: "ACTION_PAYMENT",
            service_hash: `svc:${captureId}`,
            amount_minor: 250,
            currency: "USD",
            capture_nonce: `n-${captureId}`,
            assurance_level: "face_voice_doc",
            engine_version: "test",
            created_at: at.toISOString(),
          },
          receipt: { id: randomUUID(), code: receiptCode(), jws: "x.y.z", seal: randomBytes(32).toString("hex") },
        });
      };
      expect((await transaction("idem-transaction-1")).decision).toMatchObject({ allowed: true, remaining: { amount: 650, count: 2 } });
      expect((await transaction("idem-transaction-1")).decision).toMatchObject({ allowed: true, idempotent_replay: true });
      expect(await consume(tx, s, at, { scope: "purchase", amount: 100, currency: "USD" })).toMatchObject({
        allowed: true,
        remaining: { amount: 550, count: 1 },
      });
      expect(await totals(tx, [s.id])).toEqual([
        { mandate_id: s.id, period_start: "2027-03-01T00:00:00.000Z", used_amount: 350, used_count: 2 },
      ]);
    });
  });

  it("are consistent with the ledger across the whole database (every committed bucket, one snapshot)", async () => {
    const [row] = await testDb().unsafe(
      `with ledger as (
         select c.mandate_id, private.mandate_usage_bucket(m.ceiling_period, c.created_at) as period_start,
                coalesce(sum(c.amount), 0) as used_amount, count(*)::int as used_count
         from private.mandate_consumptions c join private.mandates m on m.id = c.mandate_id group by 1, 2)
       select count(*)::int as mismatches from ledger l full join private.mandate_usage u using (mandate_id, period_start)
       where l.used_amount is distinct from u.used_amount or l.used_count is distinct from u.used_count`,
    );
    expect(row.mismatches).toBe(0);
  });

  it("cannot be read, and the backfill cannot be run, by any role but the owner", async () => {
    const outcomes: string[] = [];
    await rolledBack(async (tx) => {
      await tx`create role usage_probe_role nologin`;
      await tx`set local role usage_probe_role`;
      for (const statement of [`select count(*) from private.mandate_usage`, `select private.mandate_usage_backfill(null)`]) {
        await tx
          .savepoint(async (sp) => sp.unsafe(statement))
          .then(
            () => outcomes.push("allowed"),
            (error: { code?: string }) => outcomes.push(error.code ?? "error"),
          );
      }
    });
    expect(outcomes).toEqual(["42501", "42501"]);
  });
});

describe("mandate usage backfill", () => {
  it("recomputes lost or wrong totals from the ledger, bucket by bucket", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const all = await subjects(tx, grantor);
      const byId = new Map(all.map((s) => [s.id, s]));
      await mixedConsumes(tx, all, 7, 120);
      const ids = [...byId.keys()];
      const sums = await ledgerSums(tx, byId);
      expect(sums.length).toBeGreaterThan(10);

      // lose half the buckets and falsify the rest (the table has no guard: it is never written but by the trigger)
      await tx.unsafe(`delete from private.mandate_usage where mandate_id = any ($1::uuid[]) and used_count % 2 = 0`, [uuids(ids)]);
      await tx.unsafe(
        `update private.mandate_usage set used_amount = used_amount + 13, used_count = used_count + 1 where mandate_id = any ($1::uuid[])`,
        [uuids(ids)],
      );
      expect(await totals(tx, ids)).not.toEqual(sums);

      const [{ written }] = await tx.unsafe(`select private.mandate_usage_backfill($1::uuid[]) as written`, [uuids(ids)]);
      expect(written).toBe(sums.length);
      expect(await totals(tx, ids)).toEqual(sums);
      // a second run changes nothing
      await tx.unsafe(`select private.mandate_usage_backfill($1::uuid[])`, [uuids(ids)]);
      expect(await totals(tx, ids)).toEqual(sums);
    });
  });

  it("touches only the mandates it is given", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const [a, b] = await subjects(tx, grantor);
      await consume(tx, a, T0, actionFor(a, 10));
      await consume(tx, b, T0, actionFor(b, 1));
      await tx.unsafe(`update private.mandate_usage set used_count = used_count + 5 where mandate_id = $1`, [b.id]);
      await tx.unsafe(`select private.mandate_usage_backfill($1::uuid[])`, [uuids([a.id])]);
      expect((await totals(tx, [b.id]))[0].used_count).toBe(6);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// The upgrade of a deployed database: every migration before this one applied (and recorded as
// scripts/local/migrations.ts records them), mandates consumed with the old summing code, then
// applyMigrations applies this one (and any after it), backfills, and every answer stays the same.
// ---------------------------------------------------------------------------------------------
const realPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!realPostgres)("mandate usage migration on a database that already holds consumptions", () => {
  it("applies after every earlier migration, backfills from the ledger, and answers exactly as the summing code did", {
    timeout: 120_000,
  }, async () => {
    const admin = connect(inject("databaseUrl"));
    const name = `hauth_usage_upgrade_${randomBytes(4).toString("hex")}`;
    await admin.unsafe(`create database ${name}`);
    const url = Object.assign(new URL(inject("databaseUrl")), { pathname: `/${name}` }).toString();
    const db = connect(url, { pooled: true });
    try {
      // the migrations of 7ad62db, where this one was still an upgrade of its own
      const old = migrationsAt7ad62db();
      const names = old.map((m) => m.name);
      // the ledger and the summing code come before it, with every other topic
      expect(names.indexOf("20261121000900_mandates.sql")).toBeGreaterThanOrEqual(0);
      expect(names.indexOf(USAGE_MIGRATION)).toBeGreaterThan(names.indexOf("20261121000900_mandates.sql"));
      await db.begin((tx) => applyAs7ad62db(tx, old.slice(0, names.indexOf(USAGE_MIGRATION))));
      expect((await db.unsafe(`select to_regclass('private.mandate_usage') as t`))[0].t).toBeNull();

      const grantor = await seedGrantor(db, { at: T0 });
      const all = await subjects(db, grantor);
      const byId = new Map(all.map((s) => [s.id, s]));
      await mixedConsumes(db, all, 42, 200);
      const answers = async () => {
        const out: Answer[] = [];
        for (const s of all) {
          for (const at of boundaryInstants()) {
            out.push(await check(db, s, at, actionFor(s, 1)));
            out.push(
              await rawRpc(db, "mandate_get", {
                mandate_id: s.id,
                merchant_id: grantor.merchantId,
                environment: "test",
                now: at.toISOString(),
              }),
            );
          }
        }
        return out;
      };
      const before = await answers();

      // this migration and every later one as 7ad62db applied them, then today's runner, which finds that history
      await db.begin((tx) => applyAs7ad62db(tx, old.slice(names.indexOf(USAGE_MIGRATION))));
      // only the domain files run (and drop the functions renamed since, tests/sql/schema-history.test.ts),
      // and the migrations written after 7ad62db (the last it had is LAST_AT_7AD62DB in today's names)
      const applied = (await applyMigrations(db)).filter((a) => !a.startsWith("domains/") && !a.startsWith("dropped "));
      expect(applied.filter((name) => name <= LAST_AT_7AD62DB)).toEqual([]);
      expect(await totals(db, [...byId.keys()])).toEqual(await ledgerSums(db, byId));
      expect(await answers()).toEqual(before);

      // and it goes on from there: one more consume per mandate keeps totals and ledger equal
      for (const s of all) await consume(db, s, new Date("2028-03-01T00:00:00.001Z"), actionFor(s, 1));
      expect(await totals(db, [...byId.keys()])).toEqual(await ledgerSums(db, byId));
      // the platform migration's grant rule holds for everything, what the upgrade created included
      const report = await grantReport(db);
      expect(report.relations).toContain("private.mandate_usage");
      expect(report.functions).toContain("private.mandate_usage_backfill(uuid[])");
      expect(report.violations).toEqual([]);
    } finally {
      await db.end();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
