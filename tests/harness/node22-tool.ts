/**
 * A command-line MCP client that needs Node 22 (mcp-remote, the MCP Inspector 2.x), run as a child
 * process from its devDependency: its script by the `node` package of the npm registry (the same
 * pin scripts/conformance.ts runs the conformance suite with), whatever Node runs the tests.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { NODE_22 } from "../../scripts/local/node22";

let node22: Promise<string> | undefined;

/** The Node 22 executable's path (asked once: spawning it directly keeps npx out of every run). */
function node22Path(): Promise<string> {
  node22 ??= promisify(execFile)("npx", ["-y", NODE_22, "-p", "process.execPath"], { timeout: 120_000 }).then(({ stdout }) =>
    stdout.trim(),
  );
  return node22;
}

/** The file of `specifier` (a package's script) in node_modules. */
export const packageScript = (specifier: string) => createRequire(import.meta.url).resolve(specifier);

/** A running tool: its process, everything it printed so far, and a wait for a line it prints. */
export interface RunningTool {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  /** The first match of `pattern` in what the tool printed (stdout and stderr), waiting for it up to `timeoutMs`. */
  printed: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>;
  /** Waits for the tool to exit: its status and output. */
  exited: () => Promise<{ code: number | null; stdout: string; stderr: string }>;
  stop: () => void;
}

/**
 * Starts `script` with `args` under Node 22, with `env` over the current environment. The browser
 * the tools open for a sign-in is `true` (nothing opens): the test does the person's part over HTTP.
 */
export async function startNode22Tool(script: string, args: string[], env: Record<string, string> = {}): Promise<RunningTool> {
  const child = spawn(await node22Path(), [script, ...args], {
    env: { ...process.env, BROWSER: "true", DISPLAY: "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiting = new Set<() => void>();
  const heard = () => {
    for (const check of waiting) check();
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    heard();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    heard();
  });
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  closed.then(heard);
  const output = () => `${stdout}\n${stderr}`;
  return {
    child,
    output,
    printed: (pattern, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`the tool did not print ${pattern} in ${timeoutMs} ms; it printed:\n${output()}`)),
          timeoutMs,
        );
        const done = (error?: Error, match?: RegExpExecArray) => {
          clearTimeout(timer);
          waiting.delete(check);
          if (error) reject(error);
          else resolve(match!);
        };
        const check = () => {
          const match = pattern.exec(output());
          if (match) done(undefined, match);
          else if (child.exitCode !== null) done(new Error(`the tool exited (${child.exitCode}) before printing ${pattern}:\n${output()}`));
        };
        waiting.add(check);
        check();
      }),
    exited: async () => ({ code: await closed, stdout, stderr }),
    stop: () => {
      if (child.exitCode === null) child.kill("SIGTERM");
    },
  };
}

/** Where a command-line client prints the authorization URL it would open in a browser. */
export const AUTHORIZATION_URL = /(https?:\/\/\S+\/oauth\/authorize\?\S+)/;

/**
 * MCP over a tool's stdio (newline-delimited JSON-RPC, as a host speaks to a local server): a
 * request's result, or its error thrown.
 */
export function stdioRpc(tool: RunningTool) {
  let next = 1;
  let buffer = "";
  const pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();
  tool.child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line) continue;
      const message = JSON.parse(line);
      const waiter = pending.get(message.id);
      if (!waiter || message.method) continue;
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`${JSON.stringify(message.error)}\n${tool.output()}`));
      else waiter.resolve(message.result);
    }
  });
  const send = (message: object) => tool.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  return {
    request: (method: string, params: object = {}) =>
      new Promise<any>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        send({ id, method, params });
      }),
    notify: (method: string, params: object = {}) => send({ method, params }),
  };
}
