import { connect, type Sql } from "../../shared/platform/db/client";
import { databaseUrlFromEnv } from "../local/embedded-db";

export type Flags = Record<string, string | boolean>;
export type CommandGroup = Record<string, (flags: Flags) => unknown | Promise<unknown>>;

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

/** Runs `work` with a database client on DATABASE_URL or the running embedded database. */
export async function withDatabase<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = connect(databaseUrlFromEnv(), { pooled: true });
  try {
    return await work(sql);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ECONNREFUSED") throw new Error("cannot reach the database: set DATABASE_URL or start the embedded one with npm start");
    throw error;
  } finally {
    await sql.end();
  }
}
