/**
 * The schema is defined once (supabase/migrations for tables and data, supabase/domains for functions
 * and triggers), and it is the schema the history built. A database built from the migrations of
 * 7ad62db (tests/fixtures/migrations-7ad62db.ts) has exactly the schema a fresh database gets from
 * the runner; the runner upgrades it in place (recording the folded migrations, applying the domain
 * files) to that same schema, and a re-run is a no-op. A function defined by no domain file is
 * dropped. Scratch databases; needs a real Postgres.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { applyMigrations } from "../../scripts/local/migrations";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { applyAs7ad62db, migrationsAt7ad62db } from "../fixtures/migrations-7ad62db";
import { schemaDifference, schemaSnapshot } from "./schema-snapshot";

const realPostgres = Boolean(process.env.DATABASE_URL);

/** Runs `body` against a scratch database, dropped afterwards. */
async function withScratch<T>(label: string, body: (db: Sql) => Promise<T>): Promise<T> {
  const admin = connect(inject("databaseUrl"));
  const name = `hauth_${label}_${randomBytes(4).toString("hex")}`;
  await admin.unsafe(`create database ${name}`);
  const db = connect(Object.assign(new URL(inject("databaseUrl")), { pathname: `/${name}` }).toString());
  try {
    return await body(db);
  } finally {
    await db.end();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

describe.skipIf(!realPostgres)("the schema against its history (7ad62db)", () => {
  it("the old migrations alone build exactly the schema of a fresh database; the runner upgrades them to it in place", {
    timeout: 180_000,
  }, async () => {
    const fresh = await withScratch("fresh", async (db) => {
      const applied = await applyMigrations(db);
      expect(applied).toEqual(expect.arrayContaining(["20261127000100_platform.sql", "domains/identity.sql"]));
      expect(applied.filter((a) => a.startsWith("dropped "))).toEqual([]);
      return schemaSnapshot(db);
    });
    expect(fresh.length).toBeGreaterThan(500);

    await withScratch("upgrade", async (db) => {
      const old = migrationsAt7ad62db();
      expect(old.map((m) => m.name)).toHaveLength(28);
      await db.begin((tx) => applyAs7ad62db(tx, old));
      // the refold changed nothing: each line is one object (or one of its comments, grants, bodies)
      expect(schemaDifference(await schemaSnapshot(db), fresh)).toEqual({ onlyFirst: [], onlySecond: [] });

      const applied = await applyMigrations(db);
      expect(applied.filter((a) => !a.startsWith("domains/"))).toEqual([]);
      expect(schemaDifference(await schemaSnapshot(db), fresh)).toEqual({ onlyFirst: [], onlySecond: [] });
      const recorded = (await db`select name from private.schema_migrations order by name`).map((r) => r.name);
      expect(recorded.some((n) => old.some((m) => m.name === n))).toBe(false);
      expect(await applyMigrations(db)).toEqual([]);
    });
  });

  it("drops a function no domain file defines, and refuses a database with only part of 7ad62db's migrations", {
    timeout: 120_000,
  }, async () => {
    await withScratch("stale", async (db) => {
      await applyMigrations(db);
      await db.unsafe(`create function private.left_behind() returns int language sql set search_path = '' as $$ select 1 $$;
                       update private.schema_domain_files set checksum = 'changed' where name = 'identity.sql'`);
      expect(await applyMigrations(db)).toContain("dropped private.left_behind()");
      expect((await db`select to_regprocedure('private.left_behind()') as f`)[0].f).toBeNull();
      expect(await schemaSnapshot(db)).toEqual(expect.arrayContaining([expect.stringContaining("public.identity_resolve(p jsonb)")]));
    });
    await withScratch("partial", async (db) => {
      await db.begin((tx) => applyAs7ad62db(tx, migrationsAt7ad62db().slice(0, 3)));
      await expect(applyMigrations(db)).rejects.toThrow(/3 of the 28 migrations of 7ad62db/);
    });
  });
});
