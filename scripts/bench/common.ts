import { evaluatePresence, type PresenceDescriptor, parseDescriptor } from "../../shared/engine/index.js";

/** Command-line flags, the held-out seed and the table helpers shared by the presence benchmarks (scripts/bench/engine.ts, light.ts). */

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

/** A rate as a percentage with one decimal. */
export const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** The reasons of evaluated sessions, most frequent first: `passed 852, no_pulse 147`. */
export function reasons(rows: readonly { reason: string }[]): string {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}

/** The p-quantile (0..1) of `xs`, the nearest rank below. */
export function quantile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
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
