/**
 * The light's timing in the captures `npm run bench:browser -- --save DIR` saved:
 * `tsx scripts/bench/browser-trace.ts DIR [DIR...]`.
 *
 * Each saved capture carries the lit camera's record (tests/browser/lit-camera.ts): when the page
 * changed the screen's colour, and for every camera frame its capture time and the colour it was
 * lit by. Per capture this prints how late the page showed the sequence's changes after their
 * times on the capture clock, how many frames reached the page and the longest gap between two,
 * how many frames were lit by another colour than the nominal sequence gives at the camera's
 * display lag, and the engine's pulse check; then, over all photographs, the rank correlation of
 * the pulse check's value with those timing errors: if frames lit out of step with the sequence
 * made a still's "pulse", the stills with more of them would read higher.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { evaluatePresence } from "../../shared/engine";
import { LIGHT_CHIP_SECONDS, LIGHT_PALETTE, lightSequence } from "../../shared/engine/light";
import { median, quantile } from "./common";

/** The lit camera's display lag (scripts/media/generate.ts's LIGHT_LAG_S), seconds. */
const CAMERA_LAG_S = 0.06;

interface Trace {
  timeOriginMs: number;
  shown: { t: number; phase: string | null; hex: string }[];
  relitFrames: { t: number; at: number; hex: string | null }[];
}

interface Row {
  klass: string;
  pulseDb: number;
  mislit: number;
  maxDelayMs: number;
}

/** Spearman's rank correlation (ties by average rank). */
function spearman(a: readonly number[], b: readonly number[]): number {
  const ranks = (x: readonly number[]) => {
    const order = x.map((v, i) => [v, i] as const).sort((p, q) => p[0] - q[0]);
    const r = new Array<number>(x.length);
    for (let i = 0; i < order.length; ) {
      let j = i;
      while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
      for (let k = i; k <= j; k++) r[order[k]![1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const ra = ranks(a);
  const rb = ranks(b);
  const ma = median(ra);
  const mb = median(rb);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < ra.length; i++) {
    ab += (ra[i]! - ma) * (rb[i]! - mb);
    aa += (ra[i]! - ma) ** 2;
    bb += (rb[i]! - mb) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

const rows: Row[] = [];
console.log(
  "| capture | class | verdict | pulse dB (bpm) | changes late, ms: median / p90 / max | frames (longest gap, ms) | frames lit out of step | fps |",
);
console.log("|---|---|---|---|---|---|---|---|");
for (const dir of process.argv.slice(2)) {
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const saved = JSON.parse(readFileSync(join(dir, file), "utf8"));
    const trace = saved.trace as Trace | undefined;
    const d = saved.descriptor;
    if (!trace?.shown || d.version !== 2) continue;
    const seconds = d.signals.pulse.length / d.signals.sample_rate_hz;
    // The capture clock's start: captured_at is performance.timeOrigin + t0, to the millisecond.
    const t0 = (Date.parse(d.captured_at) - trace.timeOriginMs) / 1000;
    const chips = lightSequence(d.capture_nonce, seconds + 1);
    const delays = trace.shown
      .filter((s) => s.phase === "sequence")
      .slice(1)
      .map((s) => {
        const k = Math.round((s.t - t0) / LIGHT_CHIP_SECONDS);
        return (s.t - (t0 + k * LIGHT_CHIP_SECONDS)) * 1000;
      });
    const frames = trace.relitFrames.filter((f) => f.t >= t0 && f.t <= t0 + seconds);
    const gaps = frames.slice(1).map((f, i) => (f.t - frames[i]!.t) * 1000);
    const mislit = frames.filter((f) => {
      const k = Math.floor((f.t - CAMERA_LAG_S - t0) / LIGHT_CHIP_SECONDS);
      return k >= 0 && f.hex !== LIGHT_PALETTE[chips[Math.min(k, chips.length - 1)]!]!.hex;
    }).length;
    const result = evaluatePresence(d);
    const pulse = result.liveness.checks.pulse;
    const maxDelayMs = Math.max(...delays);
    rows.push({ klass: saved.klass, pulseDb: pulse.snr_db, mislit, maxDelayMs });
    console.log(
      `| ${file.replace(/\.json$/, "")} | ${saved.klass} | ${result.reason ?? "accepted"} | ${pulse.snr_db} (${pulse.heart_rate_bpm}) | ${median(delays).toFixed(0)} / ${quantile(delays, 0.9).toFixed(0)} / ${maxDelayMs.toFixed(0)} | ${frames.length} (${Math.max(...gaps).toFixed(0)}) | ${mislit} | ${saved.stats?.camera_fps ?? "?"} |`,
    );
  }
}
const stills = rows.filter((r) => r.klass.startsWith("photo"));
if (stills.length > 2) {
  const db = stills.map((r) => r.pulseDb);
  console.log(
    `\n${stills.length} photographs: the pulse check's value against frames lit out of step, Spearman ${spearman(
      db,
      stills.map((r) => r.mislit),
    ).toFixed(2)}; against the latest change, ${spearman(
      db,
      stills.map((r) => r.maxDelayMs),
    ).toFixed(2)}`,
  );
}
