import { AsyncLocalStorage } from "node:async_hooks";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { configuredDatabaseUrl, DEFAULT_EMBEDDED_PORT, databaseUrlFromEnv } from "../local/embedded-db";
import { parsePostgresUrl } from "../local/postgres-url";

export type Flags = Record<string, string | boolean>;
export type CommandGroup = Record<string, (flags: Flags) => unknown | Promise<unknown>>;

/** What one run of the CLI reads and reports besides its result: its environment, its exit status, its progress lines. */
export interface CliContext {
  env: Record<string, string | undefined>;
  exitCode: number;
  stderr: (text: string) => void;
}

/** The run in progress (scripts/cli/run.ts sets it); outside a run, the process itself. */
export const cliContext = new AsyncLocalStorage<CliContext>();

/** The environment of the run in progress. */
export function cliEnv(): Record<string, string | undefined> {
  return cliContext.getStore()?.env ?? process.env;
}

/** Ends the run in progress with a non-zero status although it prints its result (a failed check, say). */
export function failRun(code = 1): void {
  const context = cliContext.getStore();
  if (context) context.exitCode = code;
  else process.exitCode = code;
}

/** Writes a progress line to the run's stderr. */
export function progress(text: string): void {
  const context = cliContext.getStore();
  if (context) context.stderr(text);
  else process.stderr.write(text);
}

/** A usage error: exit code 2. */
export function usage(message: string): Error {
  return Object.assign(new Error(message), { exitCode: 2 });
}

/** `--name value` and `--flag` pairs; anything else is a usage error. */
export function parseArgs(args: string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--") || arg.length < 3) throw usage(`unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (inline !== undefined) flags[name] = inline;
    else if (args[i + 1] !== undefined && !args[i + 1].startsWith("--")) flags[name] = args[++i];
    else flags[name] = true;
  }
  return flags;
}

/** A required string flag. */
export function requireFlag(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value.trim() === "") throw usage(`--${name} <value> is required`);
  return value;
}

/** A flag restricted to a set of values. */
export function choiceFlag<T extends string>(flags: Flags, name: string, choices: readonly T[], fallback?: T): T {
  const value = flags[name] ?? fallback;
  if (typeof value !== "string" || !choices.includes(value as T)) throw usage(`--${name} must be one of ${choices.join(", ")}`);
  return value as T;
}

/**
 * What the CLI says when the database does not answer: where it looked (host and port, never the
 * URL with its password) and how to point it elsewhere.
 *
 * @example unreachableMessage({ PGPORT_EMBEDDED: "6000" })
 * // "cannot reach the database at 127.0.0.1:6000: with DATABASE_URL unset …"
 */
export function unreachableMessage(env: Record<string, string | undefined>): string {
  const configuredUrl = configuredDatabaseUrl(env);
  if (configuredUrl) {
    let where = "the host DATABASE_URL names";
    try {
      const target = parsePostgresUrl(configuredUrl);
      where = `${target.host}:${target.port}`;
    } catch {}
    return `cannot reach the database at ${where}, from DATABASE_URL: start that database, or set DATABASE_URL to one that runs`;
  }
  const port = env.PGPORT_EMBEDDED ?? DEFAULT_EMBEDDED_PORT;
  return (
    `cannot reach the database at 127.0.0.1:${port}: with DATABASE_URL unset the CLI uses the embedded database of a ` +
    `running \`npm start\` (port PGPORT_EMBEDDED, default ${DEFAULT_EMBEDDED_PORT}); start it, set PGPORT_EMBEDDED to the port ` +
    "that `npm start` serves it on, or set DATABASE_URL to another database"
  );
}

/** Runs `work` with a database client on DATABASE_URL or the running embedded database. */
export async function withDatabase<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = connect(databaseUrlFromEnv(cliEnv()), { pooled: true });
  try {
    return await work(sql);
  } catch (error) {
    const code = (error as { code?: string }).code;
    // The typed RPCs report an unreachable database as DATABASE_UNAVAILABLE; a plain query, by its socket code.
    if (code === "DATABASE_UNAVAILABLE" || code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "CONNECT_TIMEOUT")
      throw new Error(unreachableMessage(cliEnv()));
    throw error;
  } finally {
    await sql.end();
  }
}

/**
 * The service's management API with the merchant's own key (docs/management.md): what the merchant
 * commands (`key`, `webhook`, `usage`) call when a key is given, `--api-key` or SERVICE_API_KEY, so
 * they work against a deployed service without a database connection. The service is SERVICE_URL,
 * else PUBLIC_BASE_URL, else the local `npm start`. Null when no key is given: the command is then
 * the operator's, on the database.
 */
export function managementApi(flags: Flags): ((method: "GET" | "POST", path: string, body?: unknown) => Promise<unknown>) | null {
  const env = cliEnv();
  const key = typeof flags["api-key"] === "string" ? flags["api-key"] : env.SERVICE_API_KEY;
  if (!key) return null;
  if (!/^sk_(test|live)_[0-9A-Za-z]{32,128}$/.test(key))
    throw usage("--api-key (or SERVICE_API_KEY) must be a secret key, sk_test_… or sk_live_…");
  const base = (env.SERVICE_URL ?? env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.PORT ?? 8787}`).replace(/\/+$/, "");
  return async (method, path, body) => {
    let response: Response;
    try {
      response = await fetch(`${base}/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json", "idempotency-key": `cli-${crypto.randomUUID()}` }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new Error(`cannot reach the service at ${base}: ${(error as Error).message}`);
    }
    const text = await response.text();
    let answer: unknown = text;
    try {
      answer = JSON.parse(text);
    } catch {
      // a body that is not JSON is reported as it came
    }
    if (!response.ok) {
      const { code, error } = (answer ?? {}) as { code?: string; error?: string };
      throw new Error(`${response.status} ${code ?? ""}: ${error ?? text}`.replace(" :", ":"));
    }
    return answer;
  };
}

/** A comma-separated list flag, or undefined when absent. */
export function listFlag(flags: Flags, name: string): string[] | undefined {
  if (flags[name] === undefined) return undefined;
  return requireFlag(flags, name)
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}
