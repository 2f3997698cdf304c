/**
 * docs/spec-coverage.md stays true (issue 29): every code and field it lists from the spec is named
 * by a test under tests/, every row has a status it allows, and its counts are its rows'.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const COVERAGE = readFileSync("docs/spec-coverage.md", "utf8");
const ROW = /^\| `([^`]+)` \| (code|field) \| ([^|]+) \|$/gm;
const STATUSES = ["implemented, tested", "deviating", "partial"];

/** Every test source's text (this file's own excepted, or every name would be named by it). */
function testSources(dir = "tests"): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testSources(path);
    return path.endsWith(".ts") && !path.endsWith("spec-coverage.test.ts") ? [readFileSync(path, "utf8")] : [];
  });
}

/** The name as a test would write it: a field's last segment; a header in any case. */
function namedIn(text: string, lowered: string, name: string): boolean {
  const leaf = name.split(".").at(-1)?.replace("[]", "") ?? name;
  if (/^[A-Z][A-Za-z]*-/.test(leaf)) return lowered.includes(leaf.toLowerCase());
  return new RegExp(`(?<![A-Za-z0-9_])${leaf.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9_])`).test(text);
}

describe("docs/spec-coverage.md", () => {
  const rows = [...COVERAGE.matchAll(ROW)].map(([, name, kind, status]) => ({ name, kind, status: status.trim() }));
  const text = testSources().join("\n");
  const lowered = text.toLowerCase();

  it("lists the spec's codes and fields", () => {
    expect(rows.length).toBeGreaterThan(200);
    expect(rows.filter((row) => row.kind === "code").map((row) => row.name)).toEqual(
      expect.arrayContaining(["DOCUMENT_REQUIRED", "FACE_MATCH_BELOW_THRESHOLD", "ALIAS_RESERVED", "rate_limited", "ceiling_exceeded"]),
    );
  });

  it("has a test naming every code and field it lists", () => {
    expect(rows.filter((row) => !namedIn(text, lowered, row.name)).map((row) => `${row.kind} ${row.name}`)).toEqual([]);
  });

  it("gives every row a status it allows, and counts its rows by status", () => {
    expect(rows.filter((row) => !STATUSES.some((status) => row.status.startsWith(status))).map((row) => row.name)).toEqual([]);
    const counts =
      /\*\*Counts\.\*\* (\d+) codes and fields listed; (\d+) named by a test; (\d+) implemented and tested, (\d+) deviating, (\d+) partial\./.exec(
        COVERAGE,
      );
    const withStatus = (status: string) => rows.filter((row) => row.status.startsWith(status)).length;
    expect(counts?.slice(1).map(Number)).toEqual([
      rows.length,
      rows.length,
      withStatus("implemented, tested"),
      withStatus("deviating"),
      withStatus("partial"),
    ]);
  });

  it("counts the sections' notes by kind, and reasons every deviation by a decision", () => {
    const notes = [...COVERAGE.matchAll(/^- (Implemented|Deviating|Partial)\b(.*)$/gm)].map(([, kind, text]) => ({ kind, text }));
    const counts =
      /Notes under the sections: (\d+) implemented, (\d+) deviating \(each with the decision that reasons it\), (\d+) partial\./.exec(
        COVERAGE,
      );
    const ofKind = (kind: string) => notes.filter((note) => note.kind === kind).length;
    expect(counts?.slice(1).map(Number)).toEqual([ofKind("Implemented"), ofKind("Deviating"), ofKind("Partial")]);
    expect(notes.filter((note) => note.kind === "Deviating" && !/D-\d{3}/.test(note.text)).map((note) => note.text)).toEqual([]);
  });
});
