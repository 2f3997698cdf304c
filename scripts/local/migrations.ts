import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type postgres from "postgres";
import type { Sql } from "../../shared/kernel/db/client";

export const MIGRATIONS_DIR = join(import.meta.dirname, "../../supabase/migrations");
export const DOMAINS_DIR = join(import.meta.dirname, "../../supabase/domains");

/**
 * The migrations of commit 7ad62db, the last tree whose migrations also defined the functions. They
 * were folded into the migrations up to FOLDED_INTO (tables, indexes, views, domains, comments) and
 * supabase/domains (functions and triggers). A database built from them has every one recorded and
 * the schema the folded files build, so it records those as applied instead of running them.
 */
const FOLDED_AT_7AD62DB = [
  "20261121000100_platform.sql",
  "20261121000200_themes.sql",
  "20261121000300_aliases.sql",
  "20261121000400_replay_idempotency.sql",
  "20261121000500_identity.sql",
  "20261121000600_captures_receipts.sql",
  "20261121000700_receipt_anchoring.sql",
  "20261121000800_outbox.sql",
  "20261121000900_mandates.sql",
  "20261121001000_webhooks.sql",
  "20261121009100_mandate_usage.sql",
  "20261121009200_hosted_sessions.sql",
  "20261121009300_merchant_owners.sql",
  "20261121009400_resource_api.sql",
  "20261124010100_hosted_session_completion.sql",
  "20261124020100_agent_verifications.sql",
  "20261124030100_agent_presence_sign_in.sql",
  "20261124040100_billing.sql",
  "20261124040200_identity_claims.sql",
  "20261124040300_claim_session_billing.sql",
  "20261124050100_resource_sessions.sql",
  "20261124050200_resource_mandates.sql",
  "20261124060100_document_evidence.sql",
  "20261124070100_consent_ledger.sql",
  "20261124070200_disclosures.sql",
  "20261124070300_consent_retention.sql",
  "20261124070400_handoffs.sql",
  "20261124090000_identity_resolve_birth_date.sql",
];
/** The last migration the history above was folded into; later ones run on such a database as on any. */
const FOLDED_INTO = "20261127002400_handoffs.sql";

/** The migrations' bookkeeping table, as every runner since the first has made it. */
export const SCHEMA_MIGRATIONS_TABLE = `
    create schema if not exists private;
    create table if not exists private.schema_migrations (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    );
    comment on table private.schema_migrations is 'Migrations already applied, by file name.';
    comment on column private.schema_migrations.name is 'File name in supabase/migrations.';
    comment on column private.schema_migrations.checksum is 'SHA-256 of the file as applied; a later edit of an applied migration is refused.';
    comment on column private.schema_migrations.applied_at is 'When it was applied.';
`;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

async function sqlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((f) => f.endsWith(".sql")).sort();
}

/**
 * Applies the schema inside `tx`, a transaction the caller owns: every migration in
 * supabase/migrations not yet recorded in private.schema_migrations, in file-name order; then, when a
 * migration ran or a file in supabase/domains is new or changed, every domain file (function bodies
 * unchecked at creation, as pg_dump restores them, so only a trigger's function must come first: the
 * kernel's files go first),
 * and last every function of the service that no domain file (re)defined in this transaction is
 * dropped, so a body deleted from a domain file never lingers. Returns what it applied.
 */
export async function applySchema(tx: postgres.TransactionSql): Promise<string[]> {
  await tx`select pg_advisory_xact_lock(hashtext('schema_migrations'))`;
  await tx.unsafe(SCHEMA_MIGRATIONS_TABLE);
  await tx.unsafe(`
    create table if not exists private.schema_domain_files (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    );
    comment on table private.schema_domain_files is 'The domain files (functions and triggers) as last applied; a changed or new one re-applies them all.';
    comment on column private.schema_domain_files.name is 'Path under supabase/domains.';
    comment on column private.schema_domain_files.checksum is 'SHA-256 of the file as applied.';
    comment on column private.schema_domain_files.applied_at is 'When it was applied.';
  `);
  const migrations = await sqlFiles(MIGRATIONS_DIR);
  const applied: string[] = [];
  let done = new Map((await tx`select name, checksum from private.schema_migrations`).map((r) => [r.name as string, r.checksum as string]));

  const folded = FOLDED_AT_7AD62DB.filter((name) => done.has(name));
  if (folded.length > 0 && folded.length < FOLDED_AT_7AD62DB.length)
    throw new Error(
      `this database has ${folded.length} of the ${FOLDED_AT_7AD62DB.length} migrations of 7ad62db; migrate it with that commit first`,
    );
  if (folded.length) {
    for (const file of migrations.filter((f) => f <= FOLDED_INTO)) {
      const checksum = sha256(await readFile(join(MIGRATIONS_DIR, file), "utf8"));
      await tx`insert into private.schema_migrations (name, checksum) values (${file}, ${checksum})`;
    }
    await tx`delete from private.schema_migrations where name in ${tx(FOLDED_AT_7AD62DB)}`;
    done = new Map((await tx`select name, checksum from private.schema_migrations`).map((r) => [r.name, r.checksum]));
  }

  for (const file of migrations) {
    const text = await readFile(join(MIGRATIONS_DIR, file), "utf8");
    const checksum = sha256(text);
    if (done.has(file)) {
      if (done.get(file) !== checksum) throw new Error(`migration ${file} was edited after it was applied; add a new migration instead`);
      continue;
    }
    await tx.unsafe(text);
    await tx`insert into private.schema_migrations (name, checksum) values (${file}, ${checksum})`;
    applied.push(file);
  }

  // The kernel's files first: a domain's trigger may run a kernel function (private.refuse_change), and a
  // trigger needs its function to exist; function bodies are not checked, so nothing else is ordered.
  const kernelFirst = (await sqlFiles(DOMAINS_DIR)).sort(
    (a, b) => Number(!a.startsWith("kernel/")) - Number(!b.startsWith("kernel/")) || a.localeCompare(b),
  );
  const domainFiles = await Promise.all(
    kernelFirst.map(async (file) => {
      const text = await readFile(join(DOMAINS_DIR, file), "utf8");
      return { name: relative(DOMAINS_DIR, join(DOMAINS_DIR, file)), text, checksum: sha256(text) };
    }),
  );
  const recorded = new Map(
    (await tx`select name, checksum from private.schema_domain_files`).map((r) => [r.name as string, r.checksum as string]),
  );
  const unchanged =
    recorded.size === domainFiles.length && domainFiles.every((f) => recorded.get(f.name) === f.checksum) && !applied.length;
  if (unchanged || !domainFiles.length) return applied;

  await tx`set local check_function_bodies = off`;
  for (const file of domainFiles) await tx.unsafe(file.text);
  // A function whose catalog row this transaction did not write is one no domain file defines (any
  // create or replace rewrites the row, same body or not); pgvector's functions, in public, are the
  // extension's and stay.
  const stale = await tx`
    select format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) as signature
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname in ('public', 'private')
      and p.xmin::text <> (txid_current() % 4294967296)::text
      and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`;
  for (const { signature } of stale) await tx.unsafe(`drop function ${signature}`);
  await tx`delete from private.schema_domain_files`;
  for (const file of domainFiles)
    await tx`insert into private.schema_domain_files (name, checksum) values (${file.name}, ${file.checksum})`;
  applied.push(...domainFiles.map((f) => `domains/${f.name}`), ...stale.map((s) => `dropped ${s.signature}`));
  return applied;
}

/**
 * Applies the schema (applySchema) in one transaction, under an advisory lock so concurrent starters
 * (dev server, tests, CLI) never apply anything twice. Re-running is a no-op.
 */
export async function applyMigrations(sql: Sql): Promise<string[]> {
  return (await sql.begin((tx) => applySchema(tx))) as string[];
}
