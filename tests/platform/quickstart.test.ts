/**
 * The README's quickstart, run as a newcomer runs it: its first block starts the service, every
 * other ```sh block between `<!-- quickstart:start -->` and `<!-- quickstart:end -->` runs in order
 * in one bash shell, as written. The only changes are the ports (8787 and 8788 become free ones, and
 * PGPORT_EMBEDDED points the CLI at this server's embedded database), so the run collides with
 * nothing else on the machine. A command of the README that breaks fails this test.
 *
 * @long-running: a fresh embedded `npm start` and every step, about a minute (tests/harness/sequencer.ts).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { childEnv, npmStart, ROOT } from "../harness/spawn";

const STEP_DONE = "@@quickstart step done@@";

/** The quickstart's fenced sh blocks, in order, without the indentation of the list they sit in. */
function quickstartBlocks(readme: string): string[] {
  const section = /<!-- quickstart:start -->([\s\S]*?)<!-- quickstart:end -->/.exec(readme)?.[1];
  if (section === undefined) throw new Error("README.md has no quickstart markers");
  return [...section.matchAll(/^([ \t]*)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body
      .split("\n")
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join("\n")
      .trimEnd(),
  );
}

/** The variables the start block sets for `npm start` (`npm install && A=1 B=2 npm start`). */
function startEnvironment(block: string): Record<string, string> {
  const parsed = /^npm install && ((?:[A-Z_][A-Z0-9_]*=\S+ )*)npm start$/.exec(block);
  if (!parsed) throw new Error(`the quickstart's first block is not "npm install && [NAME=value …] npm start":\n${block}`);
  return Object.fromEntries(
    parsed[1]
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => pair.split(/=(.*)/s, 2) as [string, string]),
  );
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Kills a detached child's whole process group, if anything of it is left. */
function killGroup(pid: number | undefined) {
  try {
    if (pid) process.kill(-pid, "SIGKILL");
  } catch {}
}

/**
 * Runs a bash script from the repository root in its own process group; when bash exits, whatever
 * it left running in the background (the webhook listener, after a failed step) is killed with it.
 */
function bash(file: string, env: Record<string, string | undefined>, timeoutMs: number) {
  const child = spawn("bash", [file], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => killGroup(child.pid), timeoutMs);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      killGroup(child.pid);
      // what the pipes still held arrives before they close
      child.once("close", () => resolve({ code, stdout, stderr }));
    }),
  );
}

describe("README quickstart", () => {
  it("runs every step as written, on a fresh embedded npm start, to a verified webhook", { timeout: 480_000 }, async () => {
    const [startBlock, ...steps] = quickstartBlocks(await readFile(join(ROOT, "README.md"), "utf8"));
    expect(steps.length).toBeGreaterThanOrEqual(9);

    const dataDir = await mkdtemp(join(tmpdir(), "quickstart-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const [port, pgPort, listenerPort] = [await freePort(), await freePort(), await freePort()];
    // The embedded default: no DATABASE_URL, no Redis, nothing the README does not set.
    const base = {
      DATABASE_URL: undefined,
      TEMPLATE_STORE_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      UPSTASH_REDIS_REST_TOKEN: undefined,
      WEBHOOK_ALLOW_LOOPBACK_HTTP: undefined,
      PGPORT_EMBEDDED: String(pgPort),
    };
    const server = npmStart(childEnv({ ...base, ...startEnvironment(startBlock), PORT: String(port), PGLITE_DATA_DIR: dataDir }));
    cleanups.push(async () => killGroup(server.child.pid));
    expect(await server.ready).toBe(`http://127.0.0.1:${port}`);

    const script = [
      "set -euo pipefail",
      ...steps.flatMap((step) => [
        step.replaceAll(/\b8787\b/g, String(port)).replaceAll(/\b8788\b/g, String(listenerPort)),
        `printf '\\n%s\\n' '${STEP_DONE}'`,
      ]),
    ].join("\n");
    const scriptFile = join(dataDir, "quickstart.sh");
    await writeFile(scriptFile, script);
    const { code, stdout, stderr } = await bash(scriptFile, childEnv(base), 300_000);
    const outputs = stdout.split(`\n${STEP_DONE}\n`);
    const failed = `step ${outputs.length} of ${steps.length} failed:\n${steps[outputs.length - 1] ?? ""}\nstdout:\n${stdout}\nstderr:\n${stderr}\nserver:\n${server.output()}`;
    expect(code, failed).toBe(0);
    expect(outputs, failed).toHaveLength(steps.length + 1);

    /** The JSON documents a step printed, one per line. */
    const printed = (step: number) =>
      outputs[step - 1]
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line));
    expect(printed(3)).toEqual([expect.objectContaining({ status: "enrolled", subject_ref: expect.stringMatching(/^sub_/) })]);
    const [identified] = printed(4);
    expect(identified).toMatchObject({ matched: true, subject_ref: printed(3)[0].subject_ref });
    expect(printed(5)).toEqual([expect.objectContaining({ status: "approved", assurance_level: "face_voice_doc" })]);
    const [mandate] = printed(6);
    expect(mandate).toMatchObject({ status: "active", granted_by: identified.subject_ref, scopes: ["purchase"] });
    expect(printed(7)).toEqual([
      expect.objectContaining({ allowed: true }),
      expect.objectContaining({ allowed: true, idempotent_replay: false, remaining: expect.objectContaining({ amount: 3701 }) }),
    ]);
    expect(printed(8)).toEqual([
      expect.objectContaining({ revoked: true, mandate_id: mandate.mandate_id }),
      expect.objectContaining({ allowed: false, reason: "mandate_revoked" }),
    ]);
    const delivered = printed(9);
    expect(delivered.map((line) => line.type).sort()).toEqual(["mandate.consumed", "mandate.granted", "mandate.revoked"]);
    expect(delivered.every((line) => line.verified === true)).toBe(true);
  });
});
