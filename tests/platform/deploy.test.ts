import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_BUNDLE_BYTES } from "../../scripts/local/build";
import { functionNames } from "../../shared/kernel/registry";
import { childEnv, ROOT, run } from "../harness/spawn";

/** No account, no token, no telemetry: a dry run must not need the network. */
const offline = childEnv({
  CLOUDFLARE_API_TOKEN: undefined,
  CLOUDFLARE_ACCOUNT_ID: undefined,
  CLOUDFLARE_API_KEY: undefined,
  CLOUDFLARE_EMAIL: undefined,
  WRANGLER_SEND_METRICS: "false",
});

// One file, run in order: the build and the dry run write the same bundles.
describe("build", () => {
  it("bundles every function under 1.5 MiB and lists each in the size table", { timeout: 90_000 }, async () => {
    const { code, stdout, stderr } = await run("npx", ["tsx", "scripts/build.ts"], { env: offline });
    expect(code, stderr).toBe(0);
    const rows = new Map(
      stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => line.trim().split(/\s+/))
        .map(([name, bytes, , path]) => [name, { bytes: Number(bytes), path }]),
    );
    const names = functionNames;
    expect(names.length).toBeGreaterThan(0);
    expect([...rows.keys()].sort()).toEqual(names);
    for (const name of names) {
      const row = rows.get(name)!;
      expect(row.path).toBe(`dist/functions/${name}.js`);
      expect(row.bytes).toBe(statSync(join(ROOT, row.path)).size);
      expect(row.bytes).toBeGreaterThan(0);
      expect(row.bytes).toBeLessThan(MAX_BUNDLE_BYTES);
    }
  });
});

describe("deploy", () => {
  it("dry-runs one function offline with wrangler", { timeout: 90_000 }, async () => {
    const { code, stdout, stderr } = await run("npx", ["tsx", "scripts/deploy.ts", "mandate-scopes", "--dry-run"], { env: offline });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain("--dry-run: exiting now");
    expect(existsSync(join(ROOT, "dist/deploy/mandate-scopes/mandate-scopes.js"))).toBe(true);
  });

  it("dry-runs the hosted screen with its static assets bound as ASSETS", { timeout: 120_000 }, async () => {
    const { code, stdout, stderr } = await run("npx", ["tsx", "scripts/deploy.ts", "hosted-capture", "--dry-run"], { env: offline });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain("env.ASSETS");
    expect(stdout).toMatch(/Read \d+ files from the assets directory .*dist\/deploy\/hosted-capture-assets/);
  });

  it("refuses an unknown function name with a clear message", async () => {
    const { code, stdout, stderr } = await run("npx", ["tsx", "scripts/deploy.ts", "no-such-function", "--dry-run"], { env: offline });
    expect(code).not.toBe(0);
    expect(stderr).toContain('unknown function "no-such-function"');
    expect(stderr).toContain("mandate-scopes");
    expect(stdout).toBe("");
  });

  it("refuses a missing name and an unknown option", async () => {
    const missing = await run("npx", ["tsx", "scripts/deploy.ts", "--dry-run"], { env: offline });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("a function name is required");
    const option = await run("npx", ["tsx", "scripts/deploy.ts", "mandate-scopes", "--force"], { env: offline });
    expect(option.code).not.toBe(0);
    expect(option.stderr).toContain("unknown option --force");
    expect(option.stdout).toBe("");
  });
});
