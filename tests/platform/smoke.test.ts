import type { ChildProcessByStdio } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { childEnv, cliProcess, npmStart } from "../harness/spawn";

/**
 * The embedded default end to end: `npm start` with no DATABASE_URL and no Redis, on a fresh data
 * directory, then the CLI against the database it serves, then a signal. The tree is npm → node
 * (scripts/dev.ts) → workerd (and, with DATABASE_URL, a private PgBouncer); SIGTERM and SIGINT sent
 * to npm or node must stop all of it and free both ports, and so must workerd ending on its own
 * (SIGTERM to workerd alone). The cases run side by side to keep the run short.
 *
 * @long-running: six services started side by side and stopped, about a minute (tests/harness/sequencer.ts).
 */

type Started = ChildProcessByStdio<null, Readable, Readable>;
const started: Started[] = [];
const dataDirs: string[] = [];

afterAll(async () => {
  // Whatever a failed case left behind: each `npm start` leads its own process group.
  for (const child of started) {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {}
  }
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
});

/** Every live process: pid → [parent pid, command line]. Zombies count as gone. */
function processes(): Map<number, { ppid: number; command: string }> {
  const all = new Map<number, { ppid: number; command: string }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z") continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      all.set(Number(entry), { ppid: Number(ppid), command });
    } catch {}
  }
  return all;
}

/** `pid` and all its descendants with their command lines. */
function tree(pid: number): Map<number, string> {
  const all = processes();
  const found = new Map<number, string>([[pid, all.get(pid)?.command ?? ""]]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, { ppid, command }] of all) {
      if (found.has(ppid) && !found.has(child)) {
        found.set(child, command);
        grew = true;
      }
    }
  }
  return found;
}

/** True when nothing listens on 127.0.0.1:port. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Case {
  target: "npm" | "node" | "workerd";
  signal: "SIGTERM" | "SIGINT";
  database: "embedded" | "DATABASE_URL";
}
const cases: Case[] = [
  { target: "npm", signal: "SIGTERM", database: "embedded" },
  { target: "npm", signal: "SIGINT", database: "embedded" },
  { target: "node", signal: "SIGTERM", database: "embedded" },
  { target: "node", signal: "SIGINT", database: "embedded" },
  { target: "npm", signal: "SIGTERM", database: "DATABASE_URL" },
  { target: "workerd", signal: "SIGTERM", database: "embedded" },
];

describe.concurrent("smoke: npm start, stopped by a signal to any process of its tree", () => {
  it.each(cases)(
    "$signal to $target ($database): serves, then stops everything and frees both ports",
    { timeout: 360_000 },
    async ({ target, signal, database }) => {
      const dataDir = await mkdtemp(join(tmpdir(), "smoke-"));
      dataDirs.push(dataDir);
      const port = await freePort();
      const pgPort = await freePort();
      const env = childEnv({
        DATABASE_URL: database === "embedded" ? undefined : inject("databaseUrl"),
        DB_POOLER: database === "embedded" ? undefined : "pgbouncer",
        UPSTASH_REDIS_REST_URL: undefined,
        UPSTASH_REDIS_REST_TOKEN: undefined,
        PORT: String(port),
        PGPORT_EMBEDDED: String(pgPort),
        PGLITE_DATA_DIR: dataDir,
      });
      const server = npmStart(env);
      const npm = server.child;
      started.push(npm);
      const { exited } = server;
      const url = await server.ready;
      expect(url).toBe(`http://127.0.0.1:${port}`);

      const scopes = await fetch(`${url}/functions/v1/mandate-scopes`);
      expect(scopes.status).toBe(200);
      expect((await scopes.json()).scopes).toHaveLength(8);

      if (database === "embedded" && target === "npm" && signal === "SIGTERM") {
        const created = await cliProcess(["merchant", "create", "--name", "Smoke merchant", "--json"], {
          DATABASE_URL: undefined,
          PGPORT_EMBEDDED: String(pgPort),
        });
        expect(created.code, created.stderr).toBe(0);
        const merchant = JSON.parse(created.stdout);
        expect(merchant.merchant_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(merchant.keys.sk_test).toMatch(/^sk_test_[0-9A-Za-z]{32,}$/);
      }

      // The whole tree, as it stands: npm, node running scripts/dev.ts, workerd, PgBouncer (esbuild's service too).
      const before = tree(npm.pid!);
      const node = [...before].find(([pid, command]) => pid !== npm.pid && command.includes("scripts/dev.ts"));
      expect(node, [...before.values()].join("\n")).toBeDefined();
      expect([...before.values()].some((command) => command.includes("workerd"))).toBe(true);
      if (database === "DATABASE_URL") expect([...before.values()].some((command) => command.includes("pgbouncer"))).toBe(true);
      const workerd = [...before].find(([, command]) => command.includes("workerd") && command.includes(" serve "));
      expect(workerd, [...before.values()].join("\n")).toBeDefined();
      process.kill(target === "npm" ? npm.pid! : target === "node" ? node![0] : workerd![0], signal);

      const exit = await Promise.race([exited, sleep(30_000).then(() => null)]);
      expect(exit, `npm still running 30 s after ${signal} to ${target}:\n${server.output()}`).not.toBeNull();
      // No process of the tree survives it (each had its chance to stop its own children first).
      let left: [number, string][] = [];
      for (let waited = 0; waited <= 5_000; waited += 250) {
        const alive = processes();
        left = [...before].filter(([pid, command]) => alive.get(pid)?.command === command);
        if (left.length === 0) break;
        await sleep(250);
      }
      expect(left.map(([pid, command]) => `${pid} ${command}`)).toEqual([]);
      expect(await portFree(port), `port ${port} still held`).toBe(true);
      if (database === "embedded") expect(await portFree(pgPort), `embedded database port ${pgPort} still held`).toBe(true);
      await expect(fetch(`${url}/functions/v1/mandate-scopes`)).rejects.toThrow();
    },
  );
});
