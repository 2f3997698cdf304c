/**
 * Mouth-voice sync in the captures `npm run bench:browser -- --save DIR` saved:
 * `tsx scripts/bench/browser-av.ts DIR [DIR...]` (D-552, D-720).
 *
 * Per face and camera (the saved file's name before its class) and class: the landmark rate the
 * page reached during the recording, the engine's mouth-voice correlation and lag (checkAvSync as
 * evaluatePresence judges it now), how many fell under the gate, the best lag within +-1.5 s (where a voice
 * fallen behind the mouth beyond the engine's window still correlates, D-803), and the verdicts; then, over the
 * captures whose mouth and voice come from the same file (every class but `shifted`), the Pearson
 * correlation of the landmark rate with the mouth-voice correlation.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { evaluatePresence, presenceConfig } from "../../shared/engine";
import { checkAvSync } from "../../shared/engine/checks";
import { median } from "./common";

interface Row {
  group: string;
  klass: string;
  landmarkHz: number;
  correlation: number;
  lagMs: number;
  /** The best lag within +-WIDE_LAG_MS, and its correlation. */
  wideLagMs: number;
  wideCorrelation: number;
  reason: string;
  /** Face descriptors computed, and one's median time, ms (after the recording since D-720). */
  describeRuns: number;
  describeMs: number;
}

/** A search wider than the engine's, to see how far a voice slipped. */
const WIDE_LAG_MS = 1500;
const wide = { ...presenceConfig, avSync: { ...presenceConfig.avSync, maxLagMs: WIDE_LAG_MS } };

const rows: Row[] = [];
for (const dir of process.argv.slice(2)) {
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
    const saved = JSON.parse(readFileSync(join(dir, file), "utf8"));
    const match = /^(.*)-([a-z_]+)-\d+\.json$/.exec(file);
    const result = evaluatePresence(saved.descriptor);
    const av = result.liveness.checks.av_sync as { correlation: number; lag_ms: number };
    const signals = saved.descriptor.signals;
    const far = checkAvSync(signals.mouth, signals.voice, signals.sample_rate_hz, wide);
    rows.push({
      group: match?.[1] ?? "?",
      klass: saved.klass,
      landmarkHz: Number(saved.stats?.landmark_hz ?? 0),
      correlation: av.correlation,
      lagMs: av.lag_ms,
      wideLagMs: far.lag_ms,
      wideCorrelation: far.correlation,
      reason: result.reason ?? "accepted",
      describeRuns: Number(saved.stats?.describe_ms?.runs ?? 0),
      describeMs: Number(saved.stats?.describe_ms?.p50 ?? 0),
    });
  }
}

const gate = presenceConfig.avSync.minCorrelation;
const range = (xs: number[]) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)} to ${Math.max(...xs).toFixed(2)})`;
console.log(
  `| capture | class | n | landmarks a second, median (range) | mouth-voice correlation, median (range) | under ${gate} | lag ms (range) | best lag within +-${WIDE_LAG_MS} ms (range), its correlation (range) | verdicts |`,
);
console.log("|---|---|---|---|---|---|---|---|---|");
const keys = [...new Set(rows.map((r) => `${r.group}\t${r.klass}`))].sort();
for (const key of keys) {
  const [group, klass] = key.split("\t") as [string, string];
  const set = rows.filter((r) => r.group === group && r.klass === klass);
  const verdicts = new Map<string, number>();
  for (const r of set) verdicts.set(r.reason, (verdicts.get(r.reason) ?? 0) + 1);
  console.log(
    `| ${group} | ${klass} | ${set.length} | ${range(set.map((r) => r.landmarkHz))} | ${range(set.map((r) => r.correlation))} | ${set.filter((r) => r.correlation < gate).length} | ${Math.min(...set.map((r) => r.lagMs))} to ${Math.max(...set.map((r) => r.lagMs))} | ${Math.min(...set.map((r) => r.wideLagMs))} to ${Math.max(...set.map((r) => r.wideLagMs))}, ${range(set.map((r) => r.wideCorrelation))} | ${[...verdicts].map(([k, v]) => `${k} ${v}`).join(", ")} |`,
  );
}
for (const klass of [...new Set(rows.map((r) => r.klass))].sort()) {
  const set = rows.filter((r) => r.klass === klass);
  console.log(
    `- ${klass}, all: ${set.length} captures, landmarks ${range(set.map((r) => r.landmarkHz))} a second, correlation ${range(set.map((r) => r.correlation))}, ${set.filter((r) => r.correlation < gate).length} under ${gate}; face descriptors ${range(set.map((r) => r.describeRuns))} a capture, ${range(set.map((r) => r.describeMs))} ms each`,
  );
}
const same = rows.filter((r) => r.klass !== "shifted");
if (same.length > 2) {
  const x = same.map((r) => r.landmarkHz);
  const y = same.map((r) => r.correlation);
  const mx = x.reduce((a, b) => a + b, 0) / x.length;
  const my = y.reduce((a, b) => a + b, 0) / y.length;
  let [sxy, sxx, syy] = [0, 0, 0];
  for (let i = 0; i < x.length; i++)
    [sxy, sxx, syy] = [sxy + (x[i]! - mx) * (y[i]! - my), sxx + (x[i]! - mx) ** 2, syy + (y[i]! - my) ** 2];
  console.log(
    `- identical tracks: Pearson ${(sxy / Math.sqrt(sxx * syy)).toFixed(2)} between the landmark rate and the mouth-voice correlation (${same.length} captures)`,
  );
}
