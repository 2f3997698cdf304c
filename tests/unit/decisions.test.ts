/**
 * docs/decisions.md is a log of addressable records (its own opening says how one is written):
 * the index matches the records and links to their headings, every record says its status, the
 * day it was decided and the code it governs (paths that exist, SQL functions the schema
 * defines), no record cites a migration file by name, and every `D-nnn` cited anywhere in the
 * tree is a record of the log.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const LOG = "docs/decisions.md";
const log = readFileSync(join(ROOT, LOG), "utf8");
const ID = /\bD-\d{3}\b/g;

/** GitHub's heading anchor: lowercase, punctuation dropped (hyphens and underscores kept), spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "")
    .replace(/ /g, "-");

interface Entry {
  id: string;
  title: string;
  meta: string;
}

const records: Entry[] = [...log.matchAll(/^### (D-\d{3}) (.+)\n\n(.*)$/gm)].map(([, id, title, meta]) => ({ id, title, meta }));
const index: (Entry & { anchor: string })[] = [...log.matchAll(/^\| \[(D-\d{3})\]\(#([^)]+)\) \| (.+) \| (.+) \|$/gm)].map(
  ([, id, anchor, title, status]) => ({ id, anchor, title: title.replace(/\\\|/g, "|"), meta: status }),
);
const ids = new Set(records.map((record) => record.id));

/** The metadata line: `Status: … · Date: … · Code: … [· SQL: …]`. */
function metaOf(record: Entry) {
  const fields = Object.fromEntries(
    record.meta.split(" · ").map((part) => {
      const colon = part.indexOf(": ");
      return [part.slice(0, colon), part.slice(colon + 2)];
    }),
  );
  const names = (list?: string) => [...(list ?? "").matchAll(/`([^`]+)`/g)].map((match) => match[1]);
  return {
    status: fields.Status as string | undefined,
    date: fields.Date as string | undefined,
    code: names(fields.Code),
    sql: names(fields.SQL),
  };
}

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ["node_modules", "dist", ".git"].includes(entry.name) ? [] : files(path);
    return /\.(ts|md|sql|toml|ya?ml|json|css|html|sh)$/.test(entry.name) || entry.name === "run" ? [path] : [];
  });
}

describe(LOG, () => {
  it("has records, each id once", () => {
    expect(records.length).toBeGreaterThan(250);
    expect(ids.size).toBe(records.length);
  });

  it("indexes every record once, in id order, linking to its heading with its title and status", () => {
    expect(index.map((row) => row.id)).toEqual(records.map((record) => record.id).sort());
    for (const row of index) {
      const record = records.find((candidate) => candidate.id === row.id);
      expect(row.anchor, row.id).toBe(anchorOf(`${record?.id} ${record?.title}`));
      expect(row.title, row.id).toBe(record?.title);
      expect(row.meta, row.id).toBe(record && metaOf(record).status);
    }
  });

  it("gives every record its status, date and code", () => {
    const sqlText = files("supabase")
      .filter((file) => file.endsWith(".sql"))
      .map((file) => readFileSync(join(ROOT, file), "utf8"))
      .join("\n");
    const problems: string[] = [];
    for (const record of records) {
      const { status, date, code, sql } = metaOf(record);
      const at = `${record.id}:`;
      if (!status || !/^(current|current, amended by D-\d{3}(, D-\d{3})*|superseded by D-\d{3}(, D-\d{3})*)$/.test(status)) {
        problems.push(`${at} status ${status}`);
      }
      for (const other of status?.match(ID) ?? []) if (!ids.has(other) || other === record.id) problems.push(`${at} names ${other}`);
      if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(date) || date < "2026-11-21" || date > new Date().toISOString().slice(0, 10)) {
        problems.push(`${at} date ${date}`);
      }
      if (code.length === 0) problems.push(`${at} no code`);
      for (const path of code) if (!existsSync(join(ROOT, path))) problems.push(`${at} ${path} does not exist`);
      for (const name of sql) {
        const [schema, fn] = name.includes(".") ? name.split(".") : ["public", name];
        if (!new RegExp(`create\\s+(or\\s+replace\\s+)?function\\s+${schema}\\.${fn}\\s*\\(`, "i").test(sqlText))
          problems.push(`${at} SQL ${name} is not defined`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("cites no migration file by name (they are renamed when migrations are folded)", () => {
    expect(log.match(/\d{14}_\w+\.sql/g) ?? []).toEqual([]);
  });

  it("holds every decision the tree cites by id", () => {
    const cited = ["shared", "functions", "client", "scripts", "tests", "docs", "supabase", ".ci"]
      .filter((dir) => existsSync(join(ROOT, dir)))
      .flatMap(files)
      .concat(["README.md", "wrangler.toml"])
      .flatMap((file) => [...readFileSync(join(ROOT, file), "utf8").matchAll(ID)].map((match) => `${file}: ${match[0]}`));
    expect(cited.filter((citation) => !ids.has(citation.slice(-5)))).toEqual([]);
  });
});
