/**
 * The light check of descriptor v2: the skin's reflected colour follows the nonce's light
 * sequence (shared/engine/light.ts) at a plausible lag and strength.
 *
 * The statistic is read on the log ratio of the skin's colour to the background's, per channel:
 * the camera's auto-exposure and white balance multiply both regions by the same gain in each
 * frame, and its gamma turns that gain into a power, so the log ratio cancels all three. What
 * remains is the light that reaches the face and not the far background: the screen's. Slow
 * changes (head motion, shading, adaptation) are removed by a moving-average high-pass applied
 * alike to the measurement and to the expected light.
 */
import { checkPulse, marginScore, round } from "./checks.js";
import type { PresenceConfig } from "./config.js";
import type { LightSignals } from "./descriptor.js";
import { bandPass, movingAverage, PULSE_FILTER_LO_HZ } from "./dsp.js";
import { expectedLight, LIGHT_CHIP_SECONDS, LIGHT_PALETTE, lightSequence } from "./light.js";

/** Result of {@link checkLight}. */
export interface LightCheck {
  passed: boolean;
  score: number;
  /**
   * How much of the reflected colour's fast variation the sequence explains at the best lag in
   * the plausible window: the square root of R², with each channel's gain fitted (gains below 0
   * count as 0).
   */
  correlation: number;
  /** That lag, ms (the screen's display latency as the camera's timestamps see it). */
  lag_ms: number;
  /**
   * Strength of the reflection: the mean over channels of the fitted gain, i.e. by how much the
   * log of the skin's colour (relative to the background) moves when that channel of the screen
   * goes from dark to full. About the screen's illuminance at the face over the ambient's.
   */
  depth: number;
  /** The best lag over a wide window (wideMinLagMs to wideMaxLagMs), ms, and its correlation: where a delayed relighting shows. */
  best_lag_ms: number;
  best_correlation: number;
  threshold: { correlation: number; lag_ms: [number, number]; depth: number; late_gain: number };
}

/** The high-passed log colour ratio of skin over background, per channel. */
function reflectedLog(light: LightSignals, window: number): [Float64Array, Float64Array, Float64Array] {
  const n = light.skin.length;
  const out: [Float64Array, Float64Array, Float64Array] = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  for (let ch = 0; ch < 3; ch++) {
    const y = out[ch]!;
    for (let i = 0; i < n; i++) {
      // +1 keeps a black region finite: log(1) is the floor of an 8-bit scale.
      y[i] = Math.log(1 + (light.skin[i]![ch] as number)) - Math.log(1 + (light.background[i]![ch] as number));
    }
    out[ch] = highPass(y, window);
  }
  return out;
}

function highPass(x: Float64Array, window: number): Float64Array {
  const slow = movingAverage(x, window);
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = (x[i] as number) - (slow[i] as number);
  return out;
}

/** Resolution of the expected light's lag, seconds: the table below is sampled this finely. */
const LAG_RESOLUTION_S = 0.005;

/**
 * The expected light, high-passed, on a fine grid of LAG_RESOLUTION_S from `startS`: looking it up
 * at i / fs - lag gives the expected light of sample i at any lag on that grid (the high-pass
 * commutes with the delay), so the lag search costs one pass over the samples per lag.
 */
function expectedTable(chips: readonly number[], fs: number, startS: number, endS: number, highPassS: number): Float64Array[] {
  const count = Math.ceil((endS - startS) / LAG_RESOLUTION_S) + 1;
  const table = [new Float64Array(count), new Float64Array(count), new Float64Array(count)];
  const last = chips.length - 1;
  const colour = (k: number) => LIGHT_PALETTE[chips[k < 0 ? 0 : k > last ? last : k] as number]!.linear;
  const half = 0.5 / fs;
  for (let j = 0; j < count; j++) {
    // lightOver for one sample period, inlined: the window holds at most one change of colour.
    const t = startS + j * LAG_RESOLUTION_S;
    const ka = Math.floor((t - half) / LIGHT_CHIP_SECONDS);
    const edge = (ka + 1) * LIGHT_CHIP_SECONDS;
    const wb = Math.min(1, Math.max(0, (t + half - edge) / (2 * half)));
    const ca = colour(ka);
    const cb = colour(ka + 1);
    for (let ch = 0; ch < 3; ch++) table[ch]![j] = ca[ch]! * (1 - wb) + cb[ch]! * wb;
  }
  const window = Math.max(3, Math.round(highPassS / LAG_RESOLUTION_S)) | 1;
  return table.map((x) => highPass(x, window));
}

/** R² of y (samples from..to-1) against the expected light at one lag (per-channel gains, none below 0) and the gains. */
function fitAtLag(
  y: readonly Float64Array[],
  table: readonly Float64Array[],
  startS: number,
  fs: number,
  lagS: number,
  from: number,
  to: number,
): { r2: number; gains: number[] } {
  let residual = 0;
  let total = 0;
  const gains: number[] = [];
  const offset = (-lagS - startS) / LAG_RESOLUTION_S;
  const perSample = 1 / (fs * LAG_RESOLUTION_S);
  for (let ch = 0; ch < 3; ch++) {
    const xc = table[ch]!;
    const yc = y[ch]!;
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    for (let i = from; i < to; i++) {
      const a = xc[Math.round(offset + i * perSample)] as number;
      const b = yc[i] as number;
      sxy += a * b;
      sxx += a * a;
      syy += b * b;
    }
    const gain = sxx > 1e-12 ? Math.max(0, sxy / sxx) : 0;
    gains.push(gain);
    // sum (y - g x)^2 = syy - 2 g sxy + g^2 sxx
    residual += syy - 2 * gain * sxy + gain * gain * sxx;
    total += syy;
  }
  return { r2: total > 1e-18 ? 1 - residual / total : 0, gains };
}

/** The best fit of the reflection to the sequence: see {@link fitLight}. */
export interface LightFit {
  /** Square root of R² at the best lag in the plausible window, that lag (s) and the channels' gains there. */
  r: number;
  lagS: number;
  gains: [number, number, number];
  /** The same at the best lag of the wide window. */
  wideR: number;
  wideLagS: number;
}

/**
 * Fits the high-passed log colour ratio of skin over background to the nonce's sequence, per
 * channel a non-negative gain, at every lag of the plausible window (minLagMs..maxLagMs, every
 * lagStepMs) and of the wide one (about a sample period apart). The first and last `edgeS` are
 * left out (the high-pass's edges). The client uses the same fit to take the reflection out of
 * the skin colour before it computes the pulse.
 */
export function fitLight(light: LightSignals, nonce: string, fs: number, cfg: PresenceConfig): LightFit {
  const c = cfg.light;
  const n = light.skin.length;
  const window = Math.max(3, Math.round(c.highPassSeconds * fs)) | 1;
  const y = reflectedLog(light, window);
  const seconds = n / fs;
  const chips = lightSequence(nonce, seconds);
  const edge = Math.min(Math.floor(n / 4), Math.round(c.edgeS * fs));
  const [from, to] = [edge, n - edge];
  // The table spans every lag searched, with room for the high-pass's window at both ends.
  const startS = -c.wideMaxLagMs / 1000 - c.highPassSeconds;
  const table = expectedTable(chips, fs, startS, seconds - c.wideMinLagMs / 1000 + c.highPassSeconds, c.highPassSeconds);
  let best = { r2: -Infinity, lag: 0, gains: [0, 0, 0] };
  for (let lagMs = c.minLagMs; lagMs <= c.maxLagMs + 1e-9; lagMs += c.lagStepMs) {
    const f = fitAtLag(y, table, startS, fs, lagMs / 1000, from, to);
    if (f.r2 > best.r2) best = { r2: f.r2, lag: lagMs, gains: f.gains };
  }
  // Where the reflection fits best at all, about a sample period apart: a late relighting shows here.
  let wide = { r2: best.r2, lag: best.lag };
  const step = Math.max(c.lagStepMs, Math.round(1000 / fs / 5) * 5);
  for (let lagMs = c.wideMinLagMs; lagMs <= c.wideMaxLagMs + 1e-9; lagMs += step) {
    if (lagMs >= c.minLagMs && lagMs <= c.maxLagMs) continue;
    const f = fitAtLag(y, table, startS, fs, lagMs / 1000, from, to);
    if (f.r2 > wide.r2) wide = { r2: f.r2, lag: lagMs };
  }
  return {
    r: Math.sqrt(Math.max(0, best.r2)),
    lagS: best.lag / 1000,
    gains: best.gains as [number, number, number],
    wideR: Math.sqrt(Math.max(0, wide.r2)),
    wideLagS: wide.lag / 1000,
  };
}

/**
 * The reflected colour follows lightSequence(nonce) ({@link fitLight}): fit at least
 * minCorrelation at the best plausible lag, the mean gain (depth) at least minDepth, and no lag
 * outside the window fitting better by more than maxLateGain (a relighting that lags).
 */
export function checkLight(light: LightSignals, nonce: string, fs: number, cfg: PresenceConfig): LightCheck {
  const c = cfg.light;
  const fit = fitLight(light, nonce, fs, cfg);
  const depth = (fit.gains[0] + fit.gains[1] + fit.gains[2]) / 3;
  const lateness = fit.wideR - fit.r;
  const margin = Math.min(
    fit.r - c.minCorrelation,
    (Math.log(Math.max(depth, 1e-6) / c.minDepth) * c.scale) / c.depthLogScale,
    c.maxLateGain - lateness,
  );
  return {
    passed: fit.r >= c.minCorrelation && depth >= c.minDepth && lateness <= c.maxLateGain,
    score: round(marginScore(margin, 0, c.scale), 4),
    correlation: round(fit.r),
    lag_ms: Math.round(fit.lagS * 1000),
    depth: round(depth, 4),
    best_lag_ms: Math.round((fit.wideR > fit.r ? fit.wideLagS : fit.lagS) * 1000),
    best_correlation: round(Math.max(fit.wideR, fit.r)),
    threshold: { correlation: c.minCorrelation, lag_ms: [c.minLagMs, c.maxLagMs], depth: c.minDepth, late_gain: c.maxLateGain },
  };
}

/**
 * The pulse with the screen's light taken out (D-395). The client divides the reflection out of the
 * skin colour before POS, but what its model of the camera misses (exposure, the frames that
 * straddle a change, POS's own normalisation) stays in the pulse as the light sequence, band-passed:
 * a still photograph under the light reads as a "pulse" at 40 to 56 bpm, where the 0.5 s chips
 * put most of their energy. The engine knows the sequence from the nonce and the lag from the
 * light check, so it regresses the cast light (per channel, band-passed as `finishPulse` does) out
 * of the pulse before the spectral check. The gains are fitted away from the pulse's candidate
 * peak and its harmonic (both notched out of the fit, then the fitted light is taken out
 * everywhere): three regressors narrow-band in the heart band could otherwise rebuild a real
 * pulse at their frequencies and take it away; a leak's gains show in every other bin of the band.
 */
export function pulseWithoutLight(pulse: readonly number[], nonce: string, lagS: number, fs: number, cfg: PresenceConfig): number[] {
  const n = pulse.length;
  if (n < 4) return [...pulse];
  const hi = Math.min(4, fs * 0.45);
  const cast = expectedLight(lightSequence(nonce, n / fs), fs, n, lagS).map((c) => bandPass(c, fs, PULSE_FILTER_LO_HZ, hi));
  const candidate = checkPulse(pulse, fs, cfg);
  const f0 = candidate.heart_rate_bpm / 60;
  const hw = Math.max(cfg.pulse.peakHalfWidthHz, 1.5 / (n / fs));
  const notched = (x: ArrayLike<number>): Float64Array => {
    const out = Float64Array.from(x);
    if (!(f0 > 0)) return out;
    for (const f of [f0, 2 * f0]) {
      if (f + hw > fs * 0.45) continue;
      const band = bandPass(x, fs, Math.max(0.01, f - hw), f + hw, 0.05);
      for (let i = 0; i < n; i++) out[i] = (out[i] as number) - (band[i] as number);
    }
    return out;
  };
  const regressors = cast.map(notched);
  const target = notched(pulse);
  const k = regressors.length;
  const gram = regressors.map((a) => regressors.map((b) => dot(a, b)));
  const gains = solveSymmetric(
    gram,
    regressors.map((a) => dot(a, target)),
  );
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    let leak = 0;
    for (let j = 0; j < k; j++) leak += (gains[j] as number) * (cast[j]![i] as number);
    out[i] = (pulse[i] as number) - leak;
  }
  return out;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** x with A x = b for a small symmetric positive semi-definite A (ridge of 1e-9 of its trace), by Gaussian elimination. */
export function solveSymmetric(a: readonly number[][], b: readonly number[]): number[] {
  const n = b.length;
  const ridge = 1e-9 * a.reduce((s, row, i) => s + (row[i] as number), 0) + 1e-18;
  const m = a.map((row, i) => [...row.map((v, j) => (i === j ? v + ridge : v)), b[i] as number]);
  for (let i = 0; i < n; i++) {
    let p = i;
    for (let r = i + 1; r < n; r++) if (Math.abs(m[r]![i]!) > Math.abs(m[p]![i]!)) p = r;
    [m[i], m[p]] = [m[p]!, m[i]!];
    const pivot = m[i]![i]!;
    if (!(Math.abs(pivot) > 0)) continue;
    for (let r = 0; r < n; r++) {
      if (r === i) continue;
      const f = m[r]![i]! / pivot;
      for (let c = i; c <= n; c++) m[r]![c] = m[r]![c]! - f * m[i]![c]!;
    }
  }
  return m.map((row, i) => (Math.abs(row[i]!) > 0 ? row[n]! / row[i]! : 0));
}
