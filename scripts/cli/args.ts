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
