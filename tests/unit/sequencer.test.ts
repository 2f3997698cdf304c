/**
 * The run's order (D-806): a file tagged @long-running starts before the others, which keep
 * vitest's order (on a clean clone, the largest first).
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification } from "vitest/node";
import LongRunningFirst, { isLongRunning } from "../harness/sequencer";

const ROOT = join(import.meta.dirname, "../..");

/** Every test file, as vitest hands them to a sequencer: with no timings (a clean clone), only sizes. */
function specifications(): TestSpecification[] {
  const files = (readdirSync(join(ROOT, "tests"), { recursive: true }) as string[])
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join(ROOT, "tests", f));
  return files.map((moduleId) => ({ moduleId, project: { name: "any" } }) as unknown as TestSpecification);
}

const cleanClone = {
  config: { root: ROOT },
  cache: {
    getFileTestResults: () => undefined,
    getFileStats: (key: string) => ({ size: statSync(join(ROOT, key.slice("any:".length))).size }),
  },
};

describe("the test sequencer", () => {
  it("finds the tag only at the start of a line of the opening comment", () => {
    expect(isLongRunning(join(ROOT, "tests/platform/smoke.test.ts"))).toBe(true);
    // This file names the tag in its opening comment, not at a line's start.
    expect(isLongRunning(import.meta.filename)).toBe(false);
  });

  it("starts the tagged files first, then the rest largest first, as vitest would", async () => {
    const sorted = await new LongRunningFirst(cleanClone as never).sort(specifications());
    const tagged = sorted.filter((s) => isLongRunning(s.moduleId));
    expect(tagged.map((s) => s.moduleId.slice(ROOT.length + 1)).sort()).toEqual([
      "tests/platform/quickstart.test.ts",
      "tests/platform/smoke.test.ts",
    ]);
    expect(sorted.slice(0, tagged.length)).toEqual(expect.arrayContaining(tagged));
    const rest = sorted.slice(tagged.length).map((s) => statSync(s.moduleId).size);
    expect(rest).toEqual([...rest].sort((a, b) => b - a));
  });
});
