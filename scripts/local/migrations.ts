import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Sql } from "../../shared/kernel/db/client";

export const MIGRATIONS_DIR = join(import.meta.dirname, "../../supabase/migrations");

/**
 * Applies every migration in supabase/migrations not yet recorded in private.schema_migrations,
 * in file-name order, each in its own transaction, under an advisory lock so concurrent starters
 * (dev server, tests, CLI) never apply one twice. Re-running is a no-op.
 */
export async function applyMigrations(sql: Sql): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort();
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('schema_migrations'))`;
    await tx.unsafe(`
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
    `);
    const done = new Map(
      (await tx`select name, checksum from private.schema_migrations`).map((r) => [r.name as string, r.checksum as string]),
    );
    for (const file of files) {
      const text = await readFile(join(MIGRATIONS_DIR, file), "utf8");
      const checksum = createHash("sha256").update(text).digest("hex");
      if (done.has(file)) {
        if (done.get(file) !== checksum) throw new Error(`migration ${file} was edited after it was applied; add a new migration instead`);
        continue;
      }
      await tx.unsafe(text);
      await tx`insert into private.schema_migrations (name, checksum) values (${file}, ${checksum})`;
      applied.push(file);
    }
  });
  return applied;
}
