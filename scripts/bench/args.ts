/** Command-line flags and the held-out seed shared by the presence benchmarks (scripts/bench/engine.ts, light.ts). */

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
