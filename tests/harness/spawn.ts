import { type ChildProcessByStdio, spawn } from "node:child_process";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { runCli } from "../../scripts/cli/run";

export const ROOT = join(import.meta.dirname, "../..");

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** The child's whole environment (process.env when omitted); an undefined value unsets the name. */
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

/** The current environment with `changes` applied; `undefined` removes a variable. */
export function childEnv(changes: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, ...changes };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return env;
}

/**
 * Runs a command from the repository root to completion and collects its output.
 *
 * @example const { code, stdout } = await run("npx", ["tsx", "scripts/cli.ts", "merchant", "create", "--name", "A", "--json"]);
 */
export function run(command: string, args: string[], { env = process.env, timeoutMs = 60_000 }: RunOptions = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const defined = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
    const child = spawn(command, args, { cwd: ROOT, env: defined, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * The CLI with `args`, in this process (scripts/cli/run.ts: what the process would print and its
 * exit status), with `env` applied over the current environment: a command costs its database work,
 * not a fresh tsx process. `cliProcess` runs the real process, for what only a process shows.
 */
export async function cli(args: string[], env: Record<string, string | undefined>): Promise<Ran> {
  const outcome = await runCli(args, childEnv(env));
  return { ...outcome, signal: null };
}

/** `node --import tsx scripts/cli.ts <args>` as a child process, with `env` applied over the current environment. */
export function cliProcess(args: string[], env: Record<string, string | undefined>): Promise<Ran> {
  return run(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { env: childEnv(env) });
}

export interface NpmStart {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** The URL of its `ready <url>` line; rejects when it exits first or prints none within the time given. */
  ready: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
}

/**
 * `npm start` from the repository root with exactly `env`, leading its own process group (so
 * `process.kill(-child.pid, …)` reaches the whole tree). Ready within five minutes by default: the
 * smoke test and the quickstart start seven trees at once beside the other test files, each building
 * every bundle and compressed asset, and on two cores one took 125 s to be ready even alone under load.
 *
 * @example const server = npmStart(childEnv({ PORT: "9000" })); const url = await server.ready;
 */
export function npmStart(env: Record<string, string | undefined>, readyWithinMs = 300_000): NpmStart {
  const child = spawn("npm", ["start"], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const ready = new Promise<string>((resolve, reject) => {
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      output += chunk;
      const line = /^.*\bready\b.*?(http:\/\/\S+)/m.exec(stdout);
      if (line) resolve(line[1]);
    });
    exited.then(({ code, signal }) => reject(new Error(`server exited (${code ?? signal}) before ready:\n${output}`)));
    setTimeout(() => reject(new Error(`no ready line within ${readyWithinMs / 1000} s:\n${output}`)), readyWithinMs).unref();
  });
  return { child, ready, exited, output: () => output };
}
