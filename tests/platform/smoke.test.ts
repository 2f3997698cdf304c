import { type ChildProcessByStdio, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { childEnv, cli, ROOT } from "../harness/spawn";

/**
 * The embedded default end to end: `npm start`'s script with no DATABASE_URL and no Redis, on a
 * fresh data directory, then the CLI against the database it serves, then SIGTERM. tsx is started
 * directly (not through npm or npx, whose shell does not pass SIGTERM on).
 */
describe("smoke: npm start on the embedded database", () => {
  let server: ChildProcessByStdio<null, Readable, Readable> | undefined;
  let dataDir: string | undefined;
  let output = "";

  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("serves mandate-scopes, serves its database to the CLI, and stops on SIGTERM", { timeout: 90_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), "smoke-"));
    const port = await freePort();
    const pgPort = await freePort();
    const env = childEnv({
      DATABASE_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: undefined,
      PORT: String(port),
      PGPORT_EMBEDDED: String(pgPort),
      PGLITE_DATA_DIR: dataDir,
    }) as NodeJS.ProcessEnv;
    const started = spawn(join(ROOT, "node_modules/.bin/tsx"), ["scripts/dev.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    server = started;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      started.once("exit", (code, signal) => resolve({ code, signal })),
    );
    started.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));

    const url = await new Promise<string>((resolve, reject) => {
      let stdout = "";
      started.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        output += chunk;
        const ready = /^.*\bready\b.*?(http:\/\/\S+)/m.exec(stdout);
        if (ready) resolve(ready[1]);
      });
      exited.then(({ code, signal }) => reject(new Error(`server exited (${code ?? signal}) before ready:\n${output}`)));
      setTimeout(() => reject(new Error(`no ready line within 60 s:\n${output}`)), 60_000);
    });
    expect(url).toBe(`http://127.0.0.1:${port}`);

    const scopes = await fetch(`${url}/functions/v1/mandate-scopes`);
    expect(scopes.status).toBe(200);
    expect((await scopes.json()).scopes).toHaveLength(8);

    const created = await cli(["merchant", "create", "--name", "Smoke merchant", "--json"], {
      DATABASE_URL: undefined,
      PGPORT_EMBEDDED: String(pgPort),
    });
    expect(created.code, created.stderr).toBe(0);
    const merchant = JSON.parse(created.stdout);
    expect(merchant.merchant_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(merchant.keys.sk_test).toMatch(/^sk_test_[0-9A-Za-z]{32,}$/);

    expect(started.kill("SIGTERM")).toBe(true);
    const exit = await Promise.race([exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))]);
    expect(exit, `still running 20 s after SIGTERM:\n${output}`).not.toBeNull();
    expect(exit).toEqual({ code: 0, signal: null });
    // Everything it served is gone with it.
    await expect(fetch(`${url}/functions/v1/mandate-scopes`)).rejects.toThrow();
  });
});
