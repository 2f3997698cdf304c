import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { evaluatePresence, type PresenceDescriptor, parseDescriptor } from "../../shared/engine/index.js";

/**
 * What the benchmarks share: their command-line flags, order statistics, the line that says how a
 * run went (its time, the machine and its load), and the presence benchmarks' held-out seed and
 * tables (scripts/bench/engine.ts, light.ts).
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
