/**
 * The consent ledger's chain (supabase/domains/consent.sql; its tables in supabase/migrations/20261127002100_consent_ledger.sql): every way of
 * breaking it is found by consent_ledger_verify and by the CLI's `consent verify`; the enrolment
 * consents read through private.consents are the ledger's; writes through that view are chained.
 * Tampering needs the triggers off (session_replication_role = replica, a superuser's power), as an
 * attacker with the database's owner rights would do.
 */
import type postgres from "postgres";
import { describe, expect, inject, it } from "vitest";
import { verifyConsentLedger } from "../../shared/consent/ledger";
import { merchantFactory, rolledBack, testDb } from "../harness/factories";
import { cli } from "../harness/spawn";

type Tx = postgres.TransactionSql | postgres.Sql;

/** A person with a chain of `entries` consents (granted, then alternately withdrawn), through private.consents. */
async function personWithChain(tx: Tx, merchantId: string, entries: number): Promise<string> {
  const [{ id }] = await tx`insert into private.identities (environment, created_at) values ('test', now()) returning id::text`;
  for (let i = 0; i < entries; i++) {
    await tx`insert into private.consents (identity_id, merchant_id, version, retention_days, granted_at)
             values (${id}, ${merchantId}, ${`v${i}`}, 30, now() + make_interval(secs => ${i}))`;
  }
  return id;
}

const verify = (tx: Tx, identityId: string) => verifyConsentLedger(tx as never, identityId);

describe("consent ledger chain", () => {
  it("an untouched chain verifies; the view shows the ledger's consents", async () => {
    const m = await merchantFactory();
    await rolledBack(async (tx) => {
      const id = await personWithChain(tx, m.merchant_id, 3);
      expect(await verify(tx, id)).toEqual({ ok: true, identities: 1, entries: 3, breaks: [] });
      const consents = await tx`select version, revoked_at from private.consents where identity_id = ${id} order by granted_at`;
      expect(consents.map((c) => c.version)).toEqual(["v0", "v1", "v2"]);
      const chain = await tx`select seq::int, prev_hash, row_hash from private.consent_ledger where identity_id = ${id} order by seq`;
      expect(chain.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(chain[0].prev_hash).toBe("0".repeat(64));
      expect(chain[1].prev_hash).toBe(chain[0].row_hash);
      expect(chain[2].prev_hash).toBe(chain[1].row_hash);
    });
  });

  const tampers: [string, (tx: Tx, id: string) => Promise<unknown>, { seq: number; reason: string }[]][] = [
    [
      "an altered entry",
      (tx, id) =>
        tx`update private.consent_ledger set payload = payload || '{"retention_days": 3650}' where identity_id = ${id} and seq = 2`,
      [{ seq: 2, reason: "row_hash_mismatch" }],
    ],
    [
      "an altered entry whose own hash was recomputed",
      async (tx, id) => {
        await tx`update private.consent_ledger set payload = payload || '{"retention_days": 3650}' where identity_id = ${id} and seq = 2`;
        await tx`update private.consent_ledger l set row_hash = private.consent_entry_hash(l) where identity_id = ${id} and seq = 2`;
      },
      [{ seq: 3, reason: "prev_hash_mismatch" }],
    ],
    [
      "a removed entry",
      (tx, id) => tx`delete from private.consent_ledger where identity_id = ${id} and seq = 2`,
      [{ seq: 3, reason: "prev_hash_mismatch" }],
    ],
    [
      "a removed tail",
      (tx, id) => tx`delete from private.consent_ledger where identity_id = ${id} and seq = 4`,
      [{ seq: 4, reason: "head_mismatch" }],
    ],
  ];

  for (const [what, tamper, breaks] of tampers) {
    it(`finds ${what}`, async () => {
      const m = await merchantFactory();
      await rolledBack(async (tx) => {
        const id = await personWithChain(tx, m.merchant_id, 4);
        await tx`set local session_replication_role = replica`;
        await tamper(tx, id);
        await tx`set local session_replication_role = origin`;
        const report = await verify(tx, id);
        expect(report.ok).toBe(false);
        expect(report.breaks).toEqual(breaks.map((b) => ({ identity_id: id, ...b })));
      });
    });
  }

  it("consent verify (CLI) prints the breaks and exits 1 on a broken chain, 0 on a sound one", async () => {
    const m = await merchantFactory();
    const broken = await personWithChain(testDb(), m.merchant_id, 3);
    const sound = await personWithChain(testDb(), m.merchant_id, 2);
    await testDb().begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update private.consent_ledger set payload = payload || '{"version": "forged"}' where identity_id = ${broken} and seq = 1`;
    });
    const env = { DATABASE_URL: inject("databaseUrl") };
    const bad = await cli(["consent", "verify", "--identity", broken, "--json"], env);
    expect(bad.code, bad.stderr).toBe(1);
    expect(JSON.parse(bad.stdout)).toEqual({
      ok: false,
      identities: 1,
      entries: 3,
      breaks: [{ identity_id: broken, seq: 1, reason: "row_hash_mismatch" }],
    });
    const good = await cli(["consent", "verify", "--identity", sound, "--json"], env);
    expect(good.code, good.stderr).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, entries: 2, breaks: [] });
    const usage = await cli(["consent", "verify", "--identity", "nobody", "--json"], env);
    expect(usage.code).not.toBe(0);
    expect(usage.stdout).toBe("");
  });

  it("appends from parallel transactions line up behind the chain head's lock", async () => {
    const m = await merchantFactory();
    const id = await personWithChain(testDb(), m.merchant_id, 1);
    await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) =>
          testDb()`insert into private.consents (identity_id, merchant_id, version, retention_days, granted_at)
                 values (${id}, ${m.merchant_id}, ${`p${i}`}, 30, now())`,
      ),
    );
    expect(await verify(testDb(), id)).toMatchObject({ ok: true, entries: 11 });
  });
});
