import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { evaluatePresence, type PresenceDescriptor, parseDescriptor } from "../../shared/engine/index.js";
import { connect } from "../../shared/kernel/db/client";
import { freePort } from "../local/ports";
import { type RunningServer, startServer } from "../local/server";

/**
 * What the benchmarks share: their command-line flags, order statistics, the line that says how a
 * run went (its time, the machine and its load), the presence benchmarks' held-out seed and
 * tables (scripts/bench/engine.ts, light.ts), and the scratch database and service every HTTP
 * benchmark runs against (scratchServer).
 */

/** The seed the thresholds were never tuned on. */
export const HELD_OUT_SEED = 20260517;

/** The number after `--name` on the command line, or `fallback`. */
export function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v)) throw new Error(`--${name} needs a number`);
  return v;
}

/** The word after `--name` on the command line, if the flag is there. */
export function textFlag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

/** Whether `--name` is on the command line. */
export function hasFlag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}

/** A rate as a percentage with one decimal. */
export const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/**
 * The p-quantile (0..1) of `xs`: the value at 0-based rank floor(p x n) of the sorted values (the
 * upper middle for a median of an even count; 0 when there are none). The figures of
 * docs/benchmarks.md rest on this definition.
 */
export function quantile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
}

/** {@link quantile} at one half. */
export const median = (xs: readonly number[]): number => quantile(xs, 0.5);

/** The load average over the last minute. */
export const loadNow = (): number => loadavg()[0] ?? 0;

/**
 * How a run went, for the report: `2.1 min on 2 cores (model), Node v20.20.2; load average 0.4
 * at the start, 1.9 at the end`. `started` is performance.now() and `loadAtStart`
 * loadNow() when the run began.
 */
export function runConditions(started: number, loadAtStart: number): string {
  const minutes = (performance.now() - started) / 60_000;
  return (
    `${minutes.toFixed(1)} min on ${cpus().length} cores (${cpus()[0]?.model.trim() ?? "?"}), Node ${process.version}; ` +
    `load average ${loadAtStart.toFixed(1)} at the start, ${loadNow().toFixed(1)} at the end`
  );
}

/** The reasons of evaluated sessions, most frequent first: `passed 852, no_pulse 147`. */
export function reasons(rows: readonly { reason: string }[]): string {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}

/** Prints the median and 95th percentile CPU time of evaluating and of parsing `descriptors` (after a warm-up), three rounds. */
export function printCpuTimes(title: string, descriptors: readonly PresenceDescriptor[]): void {
  for (let k = 0; k < 3; k++) for (const d of descriptors) evaluatePresence(d); // warm up the JIT
  const evalUs: number[] = [];
  const parseUs: number[] = [];
  for (let k = 0; k < 3; k++) {
    for (const d of descriptors) {
      let t0 = process.cpuUsage();
      evaluatePresence(d);
      let t1 = process.cpuUsage(t0);
      evalUs.push(t1.user + t1.system);
      t0 = process.cpuUsage();
      parseDescriptor(d);
      t1 = process.cpuUsage(t0);
      parseUs.push(t1.user + t1.system);
    }
  }
  const ms = (xs: number[], p: number) => `${(quantile(xs, p) / 1000).toFixed(2)} ms`;
  console.log(`\n## ${title} (${evalUs.length} evaluations)\n`);
  console.log("| step | median | p95 |");
  console.log("|---|---|---|");
  console.log(`| evaluatePresence | ${ms(evalUs, 0.5)} | ${ms(evalUs, 0.95)} |`);
  console.log(`| parseDescriptor | ${ms(parseUs, 0.5)} | ${ms(parseUs, 0.95)} |`);
}

/**
 * The Wilson score interval of `errors` in `n` trials at 95% (z = 1.96), as fractions: the interval
 * an error rate measured on few sessions is quoted with (ISO/IEC 30107-3 asks for one). Zero errors
 * in n give [0, about 3.8/n].
 */
export function wilson(errors: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = errors / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** The server a benchmark's scratch database is created on: BENCH_ADMIN_URL, or the machine's Postgres. */
export const BENCH_ADMIN_URL = process.env.BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A benchmark's service on a database of its own: created empty, migrated by the start, dropped by `stop`. */
export interface ScratchServer {
  /** The first service started (startServer's). */
  server: RunningServer;
  /** The scratch database's own URL (direct, not through the service's pooler). */
  databaseUrl: string;
  /** Starts one more service on the same database (another pooler, another worker set); `stop` stops it too. */
  another(options: ScratchOptions): Promise<RunningServer>;
  /** Stops every service started, then drops the database (unless `keep`). */
  stop(): Promise<void>;
}

interface ScratchOptions extends Omit<NonNullable<Parameters<typeof startServer>[0]>, "env" | "functions"> {
  /** The services' environment (default process.env); its DATABASE_URL is replaced by the scratch database's. */
  env?: Record<string, string | undefined>;
  functions?: string[];
  /** The database the service reaches instead of the scratch one (an external pooler in front of it). */
  serviceDatabaseUrl?: string;
}

/**
 * Creates the database `name` (or BENCH_DB_NAME's, so that two checkouts on one server do not drop
 * each other's) afresh on `adminUrl`'s server (an earlier run's is dropped first) and
 * starts `functions` on it as `npm start` does (startServer: migrations, workerd, the pooler), on a
 * free port. Every benchmark that drives the service over HTTP starts it here.
 *
 * @example
 * const scratch = await scratchServer("hauth_bench_screen", ["hosted-capture"], { env: { ...process.env, CRON_TIMER: "0" } });
 * try { await fetch(`${scratch.server.url}/functions/v1/hosted-capture`); } finally { await scratch.stop(); }
 */
export async function scratchServer(
  defaultName: string,
  functions: string[],
  { env = process.env, adminUrl = BENCH_ADMIN_URL, keep = false, ...options }: ScratchOptions & { adminUrl?: string; keep?: boolean } = {},
): Promise<ScratchServer> {
  const name = process.env.BENCH_DB_NAME ?? defaultName;
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`scratch database name ${JSON.stringify(name)} is not a plain identifier`);
  const admin = connect(adminUrl);
  const drop = () => admin.unsafe(`drop database if exists ${name} with (force)`);
  const servers: RunningServer[] = [];
  const stop = async () => {
    for (const server of servers.splice(0)) await server.stop();
    if (!keep) await drop();
    await admin.end({ timeout: 1 });
  };
  try {
    await drop();
    await admin.unsafe(`create database ${name}`);
    const databaseUrl = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
    const another = async ({ env: own = env, functions: which = functions, serviceDatabaseUrl = databaseUrl, ...rest }: ScratchOptions) => {
      const server = await startServer({
        port: await freePort(),
        ...rest,
        env: { ...own, DATABASE_URL: serviceDatabaseUrl },
        functions: which,
      });
      servers.push(server);
      return server;
    };
    return { server: await another({ env, ...options }), databaseUrl, another, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
