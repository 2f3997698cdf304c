/**
 * Grants. Every function, table, sequence and view in the service's schemas, enumerated from the
 * catalog, against the one rule of the platform migration (tests/sql/grant-rules.ts states it): the
 * database under test follows it; an object a later migration adds follows it without writing a
 * grant; the check reports each kind of wrong grant; no migration but the platform one writes a
 * grant; and on a database shaped like Supabase's (anon, authenticated, service_role and their
 * default privileges) the same rule holds. Rolled-back transactions; the Supabase-shaped database is
 * a scratch database and needs a real Postgres.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type postgres from "postgres";
import { describe, expect, inject, it } from "vitest";
import { applySchema, DOMAINS_DIR, MIGRATIONS_DIR } from "../../scripts/local/migrations";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { testDb } from "../harness/factories";
import { grantReport } from "./grant-rules";

type Tx = postgres.TransactionSql;

const ROLLBACK = new Error("rollback");
const PLATFORM_MIGRATION = "20261127000100_platform.sql";

/** Runs `body` in a transaction on `db` that is always rolled back. */
async function rolledBack(db: Sql, body: (tx: Tx) => Promise<void>): Promise<void> {
  try {
    await db.begin(async (tx) => {
      await body(tx);
      throw ROLLBACK;
    });
  } catch (error) {
    if (error !== ROLLBACK) throw error;
  }
}

/** A role of its own per test (roles are shared by every database of the server). */
const probeRole = () => `grants_probe_${randomBytes(4).toString("hex")}`;

/** What a later migration might add: an RPC, a helper, a table and a sequence, with no grant written. */
async function createLaterObjects(tx: Tx) {
  await tx.unsafe(`
    create function public.grants_probe_rpc(p jsonb) returns jsonb
    language sql security definer set search_path = '' as $$ select p $$;
    create function private.grants_probe_helper() returns int language sql set search_path = '' as $$ select 1 $$;
    create table private.grants_probe_table (id int primary key);
    create sequence private.grants_probe_seq;
  `);
}

/** SQLSTATE of `statement` run inside a savepoint, or "allowed". */
async function outcome(tx: Tx, statement: string): Promise<string> {
  return tx
    .savepoint(async (sp) => sp.unsafe(statement))
    .then(
      () => "allowed",
      (error: { code?: string }) => error.code ?? "error",
    );
}

describe("grants", () => {
  it("every function, table, sequence and view in the service's schemas has exactly the grants of the rule", async () => {
    await rolledBack(testDb(), async (tx) => {
      const probe = probeRole();
      await tx.unsafe(`create role ${probe} nologin`);
      const report = await grantReport(tx);
      expect(report.violations).toEqual([]);
      // the enumeration saw the service: both schemas, RPCs and helpers of several migrations, an ordinary role
      expect(report.schemas).toEqual(expect.arrayContaining(["private", "public"]));
      expect(report.functions).toEqual(
        expect.arrayContaining([
          "public.merchant_create(jsonb)",
          "public.mandate_consume(jsonb)",
          "public.webhook_secrets_reseal(jsonb)",
          "private.outbox_emit(uuid, text, text, jsonb, timestamp with time zone)",
          "private.mandate_usage_backfill(uuid[])",
        ]),
      );
      expect(report.functions.filter((f) => f.startsWith("public.")).length).toBeGreaterThanOrEqual(40);
      expect(report.relations).toEqual(expect.arrayContaining(["private.merchants", "private.mandates", "private.mandate_usage"]));
      expect(report.roles).toContain(probe);
    });
  });

  it("a role without grants can execute no RPC and read no table", async () => {
    const { functions, relations } = await grantReport(testDb());
    const statements = [
      ...functions.filter((f) => f.startsWith("public.")).map((f) => `select ${f.replace(/\(jsonb\)$/, "")}('{}'::jsonb)`),
      ...relations.map((r) => `select 1 from ${r} limit 1`),
    ];
    const outcomes: Record<string, string> = {};
    await rolledBack(testDb(), async (tx) => {
      const probe = probeRole();
      await tx.unsafe(`create role ${probe} nologin`);
      await tx.unsafe(`set local role ${probe}`);
      for (const statement of statements) outcomes[statement] = await outcome(tx, statement);
    });
    expect(Object.keys(outcomes).length).toBeGreaterThan(60);
    expect(outcomes).toEqual(Object.fromEntries(statements.map((s) => [s, "42501"])));
  });

  it("an RPC, helper, table or sequence a later migration adds gets the rule without writing a grant", async () => {
    await rolledBack(testDb(), async (tx) => {
      await createLaterObjects(tx);
      const report = await grantReport(tx);
      expect(report.functions).toEqual(expect.arrayContaining(["public.grants_probe_rpc(jsonb)", "private.grants_probe_helper()"]));
      expect(report.relations).toEqual(expect.arrayContaining(["private.grants_probe_table", "private.grants_probe_seq"]));
      expect(report.violations).toEqual([]);
    });
  });

  it("reports every wrong grant, wrong RPC shape and loose search_path", async () => {
    await rolledBack(testDb(), async (tx) => {
      const probe = probeRole();
      await tx.unsafe(`create role ${probe} nologin`);
      await createLaterObjects(tx);
      const [{ service }] = await tx.unsafe(`select exists (select 1 from pg_roles where rolname = 'service_role') as service`);
      await tx.unsafe(`
        grant execute on function public.grants_probe_rpc(jsonb) to public;
        grant execute on function private.grants_probe_helper() to ${probe} with grant option;
        grant select on private.grants_probe_table to ${probe};
        grant update (id) on private.grants_probe_table to ${probe};
        grant usage on private.grants_probe_seq to ${probe};
        grant usage on schema private to ${probe};
        grant create on schema public to ${probe};
        create function public.grants_probe_plain(p int) returns int language sql set search_path = '' as $$ select p $$;
        create function private.grants_probe_loose() returns int language sql as $$ select 1 $$;
        create table public.grants_probe_exposed (id int);
      `);
      if (service) await tx.unsafe(`revoke execute on function public.grants_probe_rpc(jsonb) from service_role`);
      const { violations } = await grantReport(tx);
      const expected = [
        "function public.grants_probe_rpc(jsonb) grants EXECUTE to PUBLIC",
        `function private.grants_probe_helper() grants EXECUTE to ${probe} with grant option`,
        `role ${probe} can use function private.grants_probe_helper()`,
        `relation private.grants_probe_table grants SELECT to ${probe}`,
        `role ${probe} can use relation private.grants_probe_table`,
        `column private.grants_probe_table.id grants UPDATE to ${probe}`,
        `sequence private.grants_probe_seq grants USAGE to ${probe}`,
        `role ${probe} can use sequence private.grants_probe_seq`,
        `schema private grants USAGE to ${probe}`,
        `role ${probe} can use schema private`,
        `schema public grants CREATE to ${probe}`,
        `role ${probe} can use schema public`,
        "function public.grants_probe_plain(integer) is not an RPC: (p jsonb) returns jsonb, security definer",
        "function private.grants_probe_loose() does not fix search_path to ''",
        "relation public.grants_probe_exposed lives in public (tables live in private)",
        ...(service
          ? [
              "function public.grants_probe_rpc(jsonb) does not grant EXECUTE to service_role",
              "role service_role cannot use function public.grants_probe_rpc(jsonb)",
            ]
          : []),
      ];
      expect(violations).toEqual(expect.arrayContaining(expected));
      // and nothing else: each report is about one of the objects or grants made wrong here
      expect(violations.filter((v) => !/grants_probe_/.test(v))).toEqual([]);
    });
  });

  it("is written once: no migration but the platform one, and no domain file, grants, revokes or sets default privileges", async () => {
    const migrations = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
    expect(migrations[0]).toBe(PLATFORM_MIGRATION);
    const domainFiles = (await readdir(DOMAINS_DIR, { recursive: true })).filter((f) => f.endsWith(".sql"));
    expect(domainFiles.length).toBeGreaterThan(10);
    const files = [...migrations.map((f) => join(MIGRATIONS_DIR, f)), ...domainFiles.map((f) => join(DOMAINS_DIR, f))];
    const writers: string[] = [];
    for (const path of files) {
      const file = path.slice(path.indexOf("supabase/") + "supabase/".length).replace(/^migrations\//, "");
      const code = (await readFile(path, "utf8")).replace(/--[^\n]*/g, "");
      if (
        /\b(grant|revoke)\s+(all|execute|select|insert|update|delete|truncate|references|trigger|usage|create|connect|temporary)\b/i.test(
          code,
        )
      )
        writers.push(file);
      else if (/\balter\s+default\s+privileges\b/i.test(code)) writers.push(file);
    }
    expect(writers).toEqual([PLATFORM_MIGRATION]);
  });
});

// ---------------------------------------------------------------------------------------------
// On Supabase, the API roles exist before the first migration and the migrating role's default
// privileges give them everything created in public. The migrations applied to a scratch database
// in that state (roles created inside the transaction, so nothing outlives the test).
// ---------------------------------------------------------------------------------------------
const realPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!realPostgres)("grants on a database shaped like Supabase's", () => {
  it("anon and authenticated reach nothing; service_role executes every RPC, later ones too, and nothing else", {
    timeout: 120_000,
  }, async () => {
    const admin = connect(inject("databaseUrl"));
    const name = `hauth_grants_${randomBytes(4).toString("hex")}`;
    await admin.unsafe(`create database ${name}`);
    const db = connect(Object.assign(new URL(inject("databaseUrl")), { pathname: `/${name}` }).toString());
    try {
      await rolledBack(db, async (tx) => {
        for (const role of ["anon", "authenticated", "service_role"]) {
          const [{ found }] = await tx.unsafe(`select exists (select 1 from pg_roles where rolname = $1) as found`, [role]);
          if (!found) await tx.unsafe(`create role ${role} nologin`);
        }
        await tx.unsafe(`
          grant usage on schema public to anon, authenticated, service_role;
          alter default privileges in schema public grant all on functions to anon, authenticated, service_role;
          alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
          alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
        `);
        await applySchema(tx);

        const report = await grantReport(tx);
        expect(report.roles).toEqual(expect.arrayContaining(["anon", "authenticated", "service_role"]));
        expect(report.violations).toEqual([]);
        const [can] = await tx.unsafe(`
          select has_function_privilege('service_role', 'public.mandate_consume(jsonb)', 'execute') as service_rpc,
                 has_function_privilege('anon', 'public.mandate_consume(jsonb)', 'execute') as anon_rpc,
                 has_function_privilege('authenticated', 'public.request_authenticate(jsonb)', 'execute') as authenticated_rpc,
                 has_function_privilege('service_role', 'private.mandate_usage_backfill(uuid[])', 'execute') as service_helper,
                 has_table_privilege('service_role', 'private.api_keys', 'select') as service_table`);
        expect(can).toEqual({ service_rpc: true, anon_rpc: false, authenticated_rpc: false, service_helper: false, service_table: false });

        // an RPC added later is service_role's without a grant written; taking it away is reported
        await createLaterObjects(tx);
        expect((await grantReport(tx)).violations).toEqual([]);
        await tx.unsafe(`revoke execute on function public.grants_probe_rpc(jsonb) from service_role;
                         grant execute on function public.grants_probe_rpc(jsonb) to anon`);
        expect((await grantReport(tx)).violations).toEqual([
          "function public.grants_probe_rpc(jsonb) does not grant EXECUTE to service_role",
          "function public.grants_probe_rpc(jsonb) grants EXECUTE to anon",
          "role anon can use function public.grants_probe_rpc(jsonb)",
          "role service_role cannot use function public.grants_probe_rpc(jsonb)",
        ]);
      });
    } finally {
      await db.end();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
