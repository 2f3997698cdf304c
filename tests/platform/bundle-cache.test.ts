import { mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundle } from "../../scripts/local/build";
import { DIST_DIR } from "../../scripts/local/functions";

/**
 * The bundle cache (scripts/local/build.ts, `bundle`): a bundle is taken from the cache only while
 * every file esbuild read for it is unchanged, by content; any change to any of them builds it again.
 * The entry lives under dist/ (inside the repository, where the cache applies), in a folder of its own.
 */
const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function workspace() {
  const dir = await mkdtemp(join(DIST_DIR, "bundle-cache-test-"));
  made.push(dir);
  await writeFile(
    join(dir, "entry.ts"),
    `import { greeting } from "./dependency";\nexport default { fetch: () => new Response(greeting) };\n`,
  );
  await writeFile(join(dir, "dependency.ts"), `export const greeting = "first";\n`);
  return dir;
}

describe("the bundle cache", () => {
  it("copies an unchanged bundle and rebuilds when any file it read changes, even a file it imports", async () => {
    const dir = await workspace();
    const entry = join(dir, "entry.ts");
    const out = (n: number) => join(dir, `out${n}`, "worker.js");

    expect(await bundle(entry, out(1))).toBe("built");
    expect(await bundle(entry, out(2))).toBe("cached");
    expect(await readFile(out(2), "utf8")).toBe(await readFile(out(1), "utf8"));

    // The same size and the same modification time, different content: still a change.
    const dependency = join(dir, "dependency.ts");
    const before = await stat(dependency);
    await writeFile(dependency, `export const greeting = "other";\n`);
    await utimes(dependency, before.atime, before.mtime);
    expect(await bundle(entry, out(3))).toBe("built");
    expect(await readFile(out(3), "utf8")).toContain('"other"');
    expect(await readFile(out(3), "utf8")).not.toContain('"first"');
    expect(await bundle(entry, out(4))).toBe("cached");
    expect(await readFile(out(4), "utf8")).toContain('"other"');
  });

  it("keeps builds with and without source maps apart", async () => {
    const dir = await workspace();
    const entry = join(dir, "entry.ts");
    expect(await bundle(entry, join(dir, "plain", "worker.js"))).toBe("built");
    expect(await bundle(entry, join(dir, "mapped", "worker.js"), { sourcemaps: true })).toBe("built");
    expect(await readFile(join(dir, "mapped", "worker.js.map"), "utf8")).toContain("dependency.ts");
    expect(await bundle(entry, join(dir, "mapped", "worker.js"), { sourcemaps: true })).toBe("cached");
    expect(await readFile(join(dir, "mapped", "worker.js.map"), "utf8")).toContain("dependency.ts");
  });
});
