/**
 * Each function is defined once, by its domain: under supabase/, only the files of supabase/domains
 * create functions or triggers, each name at most once across them all (public and private are two
 * names), always with `create or replace` so a re-application replaces it; no migration creates,
 * replaces or alters one (a migration may drop a function whose signature changed: it runs before the
 * domain files).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DOMAINS_DIR, MIGRATIONS_DIR } from "../../scripts/local/migrations";

const withoutComments = (sql: string) => sql.replace(/--[^\n]*/g, "");
const CREATES =
  /\bcreate\s+(or\s+replace\s+)?(function|procedure|trigger)\s+([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)(?:\s+[\s\S]*?\bon\s+([a-z_.]+))?/gi;

async function sources(dir: string): Promise<{ file: string; sql: string }[]> {
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".sql")).sort();
  return Promise.all(files.map(async (file) => ({ file, sql: withoutComments(await readFile(join(dir, file), "utf8")) })));
}

describe("where the SQL is defined", () => {
  it("no migration creates or alters a function, procedure or trigger", async () => {
    const found = (await sources(MIGRATIONS_DIR)).flatMap(({ file, sql }) =>
      [...sql.matchAll(/\b(create\s+(or\s+replace\s+)?(function|procedure|trigger)|alter\s+function)\s+[a-z_.]+/gi)].map(
        (m) => `${file}: ${m[0]}`,
      ),
    );
    expect(found).toEqual([]);
  });

  it("every function and trigger is created once, with create or replace, in one domain file", async () => {
    const domainFiles = await sources(DOMAINS_DIR);
    expect(domainFiles.map((f) => f.file)).toEqual(expect.arrayContaining(["identity.sql", "mandates.sql", "kernel/outbox.sql"]));
    const where = new Map<string, string[]>();
    const plain: string[] = [];
    for (const { file, sql } of domainFiles) {
      for (const m of sql.matchAll(CREATES)) {
        const [, orReplace, kind, name, table] = m;
        const key = kind.toLowerCase() === "trigger" ? `trigger ${name} on ${table}` : `function ${name.toLowerCase()}`;
        where.set(key, [...(where.get(key) ?? []), file]);
        if (!orReplace) plain.push(`${file}: ${key}`);
      }
    }
    expect([...where.keys()].filter((k) => k.startsWith("function ")).length).toBeGreaterThan(120);
    expect([...where].filter(([, files]) => files.length > 1)).toEqual([]);
    expect(plain).toEqual([]);
  });
});
