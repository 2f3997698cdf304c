import { pgbouncerBinary, startPgBouncer } from "./pgbouncer";

/** Which transaction pooler stands between the workers and DATABASE_URL. */
type PoolerKind = "pgbouncer" | "direct";

interface RunningLocalPooler {
  kind: Exclude<PoolerKind, "direct">;
  /** The URL the workers receive as DATABASE_URL. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The pooler `DB_POOLER` asks for: `pgbouncer` (a private PgBouncer, scripts/local/pgbouncer.ts)
 * or `0` (none: each request connects directly); unset (or `1`): PgBouncer when the binary is
 * installed, else direct connections (production pools through Hyperdrive or Supavisor; a machine
 * without PgBouncer still runs, without the pooler's semantics).
 *
 * @example choosePooler({ DB_POOLER: "0" }) // "direct"
 */
export function choosePooler(env: Record<string, string | undefined>): PoolerKind {
  const asked = env.DB_POOLER ?? "";
  if (asked === "0") return "direct";
  if (asked === "pgbouncer") return asked;
  if (asked === "" || asked === "1") return pgbouncerBinary(env) ? "pgbouncer" : "direct";
  throw new Error(`DB_POOLER=${asked}: expected pgbouncer or 0`);
}

/**
 * Starts the pooler `choosePooler(env)` picks in front of `upstreamUrl` with `DB_POOLER_SIZE`
 * backends (default 20), or returns null for direct connections.
 */
export async function startPooler(
  upstreamUrl: string,
  env: Record<string, string | undefined>,
  log: (line: string) => void = () => {},
): Promise<RunningLocalPooler | null> {
  const kind = choosePooler(env);
  const size = env.DB_POOLER_SIZE ? Number(env.DB_POOLER_SIZE) : undefined;
  if (kind === "direct") {
    if (env.DB_POOLER !== "0") log("PgBouncer is not installed: workers connect to the database directly (apt-get install -y pgbouncer)");
    return null;
  }
  const pooler = await startPgBouncer({ upstreamUrl, size, binary: pgbouncerBinary(env) ?? undefined, log });
  log(`workers reach the database through PgBouncer (${pooler.url})`);
  return { kind, url: pooler.url, stop: () => pooler.stop() };
}
