/**
 * The named checks of the presence engine. Each takes already validated series
 * and returns a value, the threshold it is held to and a score in (0, 1) that is
 * 0.5 exactly at the threshold (a logistic of the margin).
 */
import type { PresenceConfig } from "./config.js";
import {
  bandPass,
  bandPower,
  detrendLinear,
  interpolate,
  maxLaggedCorrelation,
  mean,
  movingAverage,
  PULSE_FILTER_LO_HZ,
  powerSpectrum,
  quantile,
  spectralPeak,
  std,
  upwardZeroCrossings,
} from "./dsp.js";

/** Logistic of a margin: 0.5 at the threshold, towards 1 above it, towards 0 below. */
export function marginScore(value: number, threshold: number, scale: number): number {
  const z = (value - threshold) / scale;
  if (!Number.isFinite(z)) return z > 0 ? 1 : 0;
  return 1 / (1 + Math.exp(-z));
}

/** `x` rounded to `digits` decimals; 0 when not finite (results carry finite numbers only). */
export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Number.isFinite(x) ? Math.round(x * f) / f : 0;
}

// ---------------------------------------------------------------------------
// Quality
// ---------------------------------------------------------------------------

/** Result of {@link checkQuality}. */
export interface QualityCheck {
  passed: boolean;
  score: number;
  face_quality: number;
  valid_fraction: number;
  threshold: { face_quality: number; valid_fraction: number };
}

/** Face quality and the fraction of real (not interpolated) frames. */
export function checkQuality(faceQuality: number, valid: readonly number[] | undefined, cfg: PresenceConfig): QualityCheck {
  const c = cfg.quality;
  let validFraction = 1;
  if (valid && valid.length > 0) {
    let s = 0;
    for (const x of valid) s += x;
    validFraction = s / valid.length;
  }
  const margin = Math.min(faceQuality - c.minFaceQuality, validFraction - c.minValidFraction);
  return {
    passed: faceQuality >= c.minFaceQuality && validFraction >= c.minValidFraction,
    score: round(marginScore(margin, 0, c.scale), 4),
    face_quality: round(faceQuality),
    valid_fraction: round(validFraction),
    threshold: { face_quality: c.minFaceQuality, valid_fraction: c.minValidFraction },
  };
}

// ---------------------------------------------------------------------------
// Speech segmentation
// ---------------------------------------------------------------------------

/** Speech/pause segmentation of the voice envelope. */
export interface SpeechAnalysis {
  /** 1 inside a breath pause (a silence of at least minPauseSeconds), 0 in speech. */
  pause: Float64Array;
  speechFraction: number;
  pauses: number;
  /** 10th to 90th percentile range of the smoothed envelope. */
  range: number;
}

/**
 * Splits the voice envelope into speech and breath pauses. The mouth, when given,
 * keeps room noise out of the levels: the speech level is read where the mouth
 * articulates and the pause level where it is still. The split itself is the
 * voice's alone, so the mouth never decides when a breath was taken.
 */
export function analyseSpeech(voice: readonly number[], fs: number, cfg: PresenceConfig, mouth?: readonly number[]): SpeechAnalysis {
  const c = cfg.speech;
  const n = voice.length;
  const smooth = movingAverage(voice, Math.max(1, Math.round(c.smoothSeconds * fs)) | 1);
  let lo = quantile(smooth, 0.1);
  let hi = quantile(smooth, 0.9);
  if (mouth && mouth.length === n) {
    const syllabic = bandPass(mouth, fs, 1, Math.min(7, fs * 0.45), 0.3);
    for (let i = 0; i < n; i++) syllabic[i] = (syllabic[i] as number) ** 2;
    const energy = movingAverage(syllabic, Math.max(1, Math.round(c.articulationSeconds * fs)) | 1);
    const gate = c.articulationFraction * quantile(energy, 0.9);
    const talk: number[] = [];
    const still: number[] = [];
    for (let i = 0; i < n; i++) ((energy[i] as number) > gate ? talk : still).push(smooth[i] as number);
    if (talk.length >= fs && still.length >= fs) {
      lo = quantile(still, 0.25);
      hi = quantile(talk, 0.75);
    }
  }
  const range = hi - lo;
  const thr = lo + c.thresholdPosition * range;
  const pause = new Float64Array(n);
  const minPause = Math.max(1, Math.round(c.minPauseSeconds * fs));
  const isSpeech = (i: number): boolean => (smooth[i] as number) > thr;
  let speechSamples = 0;
  let pauses = 0;
  let i = 0;
  while (i < n) {
    if (isSpeech(i)) {
      speechSamples++;
      i++;
      continue;
    }
    const start = i;
    while (i < n && !isSpeech(i)) i++;
    if (i - start >= minPause) {
      for (let k = start; k < i; k++) pause[k] = 1;
      pauses++;
    } else {
      speechSamples += i - start; // a gap between words counts as speech
    }
  }
  return { pause, speechFraction: n > 0 ? speechSamples / n : 0, pauses, range: Math.max(0, range) };
}

/** Result of {@link checkSpeech}. */
export interface SpeechCheck {
  passed: boolean;
  score: number;
  range: number;
  speech_fraction: number;
  pauses: number;
  threshold: { range: number; speech_fraction: [number, number]; pauses: number };
}

/** Speech is present, varies, and leaves at least one breath pause. */
export function checkSpeech(a: SpeechAnalysis, cfg: PresenceConfig): SpeechCheck {
  const c = cfg.speech;
  const passed =
    a.range >= c.minRange && a.speechFraction >= c.minSpeechFraction && a.speechFraction <= c.maxSpeechFraction && a.pauses >= 1;
  const margin = Math.min(
    (a.range - c.minRange) / c.scale,
    (a.speechFraction - c.minSpeechFraction) / 0.05,
    (c.maxSpeechFraction - a.speechFraction) / 0.02,
    a.pauses >= 1 ? Infinity : -2,
  );
  return {
    passed,
    score: round(marginScore(margin, 0, 1), 4),
    range: round(a.range),
    speech_fraction: round(a.speechFraction),
    pauses: a.pauses,
    threshold: { range: c.minRange, speech_fraction: [c.minSpeechFraction, c.maxSpeechFraction], pauses: 1 },
  };
}

// ---------------------------------------------------------------------------
// 1. Pulse present
// ---------------------------------------------------------------------------

/** Result of {@link checkPulse}. */
export interface PulseCheck {
  passed: boolean;
  score: number;
  /** Spectral SNR of the pulse, dB. */
  snr_db: number;
  /** Heart rate at the spectral peak, bpm (0 when the band is empty). */
  heart_rate_bpm: number;
  threshold: { snr_db: number; bpm: [number, number] };
}

/** A heart rate in 40..180 bpm at the spectral peak of `pulse`, with SNR above threshold. */
export function checkPulse(pulse: readonly number[], fs: number, cfg: PresenceConfig): PulseCheck {
  const c = cfg.pulse;
  const seconds = pulse.length / fs;
  const hiBand = Math.min(c.bandHiHz, fs * 0.45);
  const spec = powerSpectrum(detrendLinear(pulse), fs, 2048);
  const peak = spectralPeak(spec, c.minBpm / 60, c.maxBpm / 60);
  const hw = Math.max(c.peakHalfWidthHz, 1.5 / seconds);
  const total = bandPower(spec, c.bandLoHz, hiBand);
  let signal = bandPower(spec, peak.hz - hw, peak.hz + hw);
  if (2 * peak.hz + hw <= hiBand) signal += bandPower(spec, 2 * peak.hz - hw, 2 * peak.hz + hw);
  const noise = Math.max(total - signal, total * 1e-6, 1e-30);
  const snrDb = peak.hz > 0 && signal > 0 ? 10 * Math.log10(signal / noise) : -60;
  const bpm = peak.hz * 60;
  // A peak on the very edge of the search band is a slope, not a heart rate. So is one within the
  // spectrum's resolution (hw) of where the device's band-pass starts: a floor that rises towards
  // low frequencies (what the light and the tracking leave on a still) ends at the filter's edge,
  // and the window smears that end into a peak 0.05 to 0.1 Hz above it, which no heart made
  // (D-550). For 15 s and more: nothing below 46 bpm counts.
  const edge = bpm < Math.max(c.minBpm + 0.5, (PULSE_FILTER_LO_HZ + hw) * 60) || bpm > c.maxBpm - 0.5;
  const value = edge ? Math.min(snrDb, c.minSnrDb - 1) : snrDb;
  return {
    passed: value >= c.minSnrDb,
    score: round(marginScore(value, c.minSnrDb, c.scale), 4),
    snr_db: round(value, 2),
    heart_rate_bpm: round(bpm, 1),
    threshold: { snr_db: c.minSnrDb, bpm: [c.minBpm, c.maxBpm] },
  };
}

// ---------------------------------------------------------------------------
// 2. The speaking face is this face (mouth/voice synchrony)
// ---------------------------------------------------------------------------

/** Result of {@link checkAvSync}. */
export interface AvSyncCheck {
  passed: boolean;
  score: number;
  /** Highest correlation of mouth and voice in the syllabic band within the lag window. */
  correlation: number;
  /** Lag of that correlation: positive when the mouth leads the voice, ms. */
  lag_ms: number;
  threshold: { correlation: number; max_lag_ms: number };
}

/** `mouth` and `voice` correlate in the syllabic band at a lag within +-maxLagMs. */
export function checkAvSync(mouth: readonly number[], voice: readonly number[], fs: number, cfg: PresenceConfig): AvSyncCheck {
  const c = cfg.avSync;
  const hi = Math.min(c.bandHiHz, fs * 0.45);
  const m = bandPass(mouth, fs, c.bandLoHz, hi, 0.3);
  const vo = bandPass(voice, fs, c.bandLoHz, hi, 0.3);
  const maxLag = Math.max(1, Math.round((c.maxLagMs / 1000) * fs));
  // voice[i] against mouth[i - lag]: lag > 0 means the mouth moves first.
  const best = maxLaggedCorrelation(vo, m, -maxLag, maxLag);
  return {
    passed: best.r >= c.minCorrelation,
    score: round(marginScore(best.r, c.minCorrelation, c.scale), 4),
    correlation: round(best.r),
    lag_ms: Math.round((best.lag / fs) * 1000),
    threshold: { correlation: c.minCorrelation, max_lag_ms: c.maxLagMs },
  };
}

// ---------------------------------------------------------------------------
// 3. Speech and pulse at the same instant (respiratory sinus arrhythmia)
// ---------------------------------------------------------------------------

/** Result of {@link checkCoupling}. */
export interface CouplingCheck {
  passed: boolean;
  score: number;
  /** Correlation of the instantaneous heart rate with the breath-pause drive at the best lag. */
  correlation: number;
  /** Lag of the heart-rate response after the pause drive, seconds. */
  lag_s: number;
  /** Beat intervals used. */
  beats: number;
  /** Standard deviation of the detrended beat-to-beat heart rate, bpm. */
  hr_variability_bpm: number;
  /** Peak-to-peak heart-rate swing explained by the breath drive, bpm. */
  rsa_bpm: number;
  /** Beat-to-beat jitter of the measured heart rate (successive differences / sqrt 2), bpm. */
  beat_noise_bpm: number;
  threshold: { correlation: number; rsa_bpm: number; rsa_to_noise: number; lag_s: [number, number]; beats: number };
}

/** Beat-to-beat heart rate of `pulse` (see {@link checkCoupling}) with its variability and jitter. */
export interface BeatSeries {
  /** Mid-times of the accepted beat intervals, seconds. */
  times: number[];
  /** Heart rate of each accepted interval, bpm. */
  rates: number[];
  /** Standard deviation of the detrended rates, bpm. */
  hrv: number;
  /** Successive differences of the rates / sqrt 2, bpm. */
  beatNoise: number;
}

/**
 * Beats = upward zero crossings of `pulse` band-passed to the heart rate +-beatBandHalfWidthHz,
 * the first and last edgeTrimS ignored, intervals departing over maxBeatDeviation from the
 * spectral rate dropped.
 */
export function beatSeries(pulse: readonly number[], fs: number, heartRateHz: number, cfg: PresenceConfig): BeatSeries {
  const c = cfg.coupling;
  const lo = Math.max(0.4, heartRateHz - c.beatBandHalfWidthHz);
  const hi = Math.min(fs * 0.45, heartRateHz + c.beatBandHalfWidthHz);
  const narrow = bandPass(pulse, fs, lo, hi, 0.3);
  const seconds = pulse.length / fs;
  // Filter transients distort the first and last beats: ignore them.
  const crossings = upwardZeroCrossings(narrow, fs, 0.6 / heartRateHz).filter((t) => t >= c.edgeTrimS && t <= seconds - c.edgeTrimS);
  const times: number[] = [];
  const rates: number[] = [];
  const nominal = heartRateHz * 60;
  for (let k = 1; k < crossings.length; k++) {
    const ibi = (crossings[k] as number) - (crossings[k - 1] as number);
    const bpm = 60 / ibi;
    if (Math.abs(bpm - nominal) <= c.maxBeatDeviation * nominal) {
      times.push(((crossings[k] as number) + (crossings[k - 1] as number)) / 2);
      rates.push(bpm);
    }
  }
  const hrv = rates.length >= 3 ? std(detrendLinear(rates)) : 0;
  return { times, rates, hrv, beatNoise: beatNoiseOf(rates) };
}

/**
 * Beat-to-beat measurement noise of a heart-rate series, bpm: successive differences / sqrt 2
 * remove the slow (breath and Mayer-wave) variation and keep the jitter of the beat times.
 * 0 for fewer than 3 rates.
 */
export function beatNoiseOf(rates: readonly number[]): number {
  if (rates.length < 3) return 0;
  let sd2 = 0;
  for (let k = 1; k < rates.length; k++) sd2 += ((rates[k] as number) - (rates[k - 1] as number)) ** 2;
  return Math.sqrt(sd2 / (rates.length - 1) / 2);
}

/**
 * Beat-to-beat heart rate (from upward zero crossings of `pulse` in a narrow band
 * around `heartRateHz`) correlated with the breath pauses of the voice: heart rate
 * rises after each inhalation pause and falls while speaking.
 */
export function checkCoupling(
  pulse: readonly number[],
  speech: SpeechAnalysis,
  fs: number,
  heartRateHz: number,
  cfg: PresenceConfig,
): CouplingCheck {
  const c = cfg.coupling;
  const threshold = {
    correlation: c.minCorrelation,
    rsa_bpm: c.minRsaBpm,
    rsa_to_noise: c.minRsaToNoise,
    lag_s: [c.minLagS, c.maxLagS] as [number, number],
    beats: c.minBeats,
  };
  const fail = (beats: number, hrv = 0, beatNoise = 0): CouplingCheck => ({
    passed: false,
    score: round(marginScore(0, c.minCorrelation, c.scale), 4),
    correlation: 0,
    lag_s: 0,
    beats,
    hr_variability_bpm: round(hrv, 2),
    rsa_bpm: 0,
    beat_noise_bpm: round(beatNoise, 2),
    threshold,
  });
  if (!(heartRateHz > 0)) return fail(0);
  const { times, rates, hrv, beatNoise } = beatSeries(pulse, fs, heartRateHz, cfg);
  const seconds = pulse.length / fs;
  if (rates.length < c.minBeats) return fail(rates.length, hrv, beatNoise);

  const lock = breathLock(times, rates, speech.pause, fs, seconds, cfg);
  if (!lock) return fail(rates.length, hrv, beatNoise);
  const { r, lagS, rsa } = lock;
  const rsaFloor = Math.max(c.minRsaBpm, c.minRsaToNoise * beatNoise);
  const margin = Math.min(r - c.minCorrelation, ((rsa - rsaFloor) * c.scale) / c.rsaScale);
  return {
    passed: r >= c.minCorrelation && rsa >= rsaFloor,
    score: round(marginScore(margin, 0, c.scale), 4),
    correlation: round(r),
    lag_s: round(lagS, 2),
    beats: rates.length,
    hr_variability_bpm: round(hrv, 2),
    rsa_bpm: round(rsa, 2),
    beat_noise_bpm: round(beatNoise, 2),
    threshold,
  };
}

/** The heart rate's lock to the breath pauses: see {@link breathLock}. */
interface BreathLock {
  /** Correlation of the detrended heart rate with the detrended pause drive at the best lag. */
  r: number;
  /** That lag, seconds. */
  lagS: number;
  /** Peak-to-peak heart-rate swing explained by the drive (5th to 95th percentile of the drive), bpm. */
  rsa: number;
}

/**
 * The statistic of check 3: beat-to-beat heart rate (`rates` at `times`, seconds) on a
 * gridHz grid against the breath drive (`pause` at `fs`, low-passed with responseTauS),
 * correlated at the best lag in minLagS..maxLagS. Null when the beats span fewer than
 * 8 grid cells. The benchmark also feeds it noise-free beats (its oracle bound).
 */
export function breathLock(
  times: readonly number[],
  rates: readonly number[],
  pause: ArrayLike<number>,
  fs: number,
  seconds: number,
  cfg: PresenceConfig,
): BreathLock | null {
  const c = cfg.coupling;
  // Heart rate and breath drive on a common grid.
  const dt = 1 / c.gridHz;
  const gridCount = Math.max(1, Math.floor(seconds * c.gridHz));
  const drive = new Float64Array(gridCount);
  const decay = Math.exp(-dt / c.responseTauS);
  let y = mean(pause);
  const perCell = fs * dt;
  for (let g = 0; g < gridCount; g++) {
    const a = Math.floor(g * perCell);
    const b = Math.min(pause.length, Math.max(a + 1, Math.floor((g + 1) * perCell)));
    const p = mean(pause, a, b);
    y = decay * y + (1 - decay) * p;
    drive[g] = y;
  }
  const grid = heartRateOnGrid(times, rates, dt, gridCount, 0);
  if (!grid) return null;
  const lock = lockToDrive(grid.hr, grid.g0, drive, Math.round(c.minLagS / dt), Math.round(c.maxLagS / dt));
  return { r: lock.r, lagS: lock.lag * dt, rsa: Math.max(0, lock.slope * lock.range) };
}

/**
 * The beat-to-beat heart rate, linearly detrended, on the cells g0..g1 of a grid of step `dt`
 * (`cells` long): from the first beat (and not before `fromS`) to the last. Null when that spans
 * fewer than 9 cells.
 */
export function heartRateOnGrid(
  times: readonly number[],
  rates: readonly number[],
  dt: number,
  cells: number,
  fromS: number,
): { hr: Float64Array; g0: number } | null {
  const t0 = times[0] as number;
  const t1 = times[times.length - 1] as number;
  const g0 = Math.ceil(Math.max(t0, fromS) / dt);
  const g1 = Math.min(cells - 1, Math.floor(t1 / dt));
  if (g1 - g0 < 8) return null;
  const at = new Float64Array(g1 - g0 + 1);
  for (let g = g0; g <= g1; g++) at[g - g0] = g * dt;
  return { hr: detrendLinear(interpolate(times, rates, at)), g0 };
}

/**
 * The best Pearson correlation of `hr` (grid cells g0 onwards, detrended) with the detrended
 * `drive` delayed by minLag..maxLag cells, with that lag, the regression slope of the heart rate
 * on the drive (bpm per drive unit) and the drive's 5th-95th percentile range there.
 */
export function lockToDrive(
  hr: Float64Array,
  g0: number,
  drive: ArrayLike<number>,
  minLag: number,
  maxLag: number,
): { r: number; lag: number; slope: number; range: number } {
  const shifted = new Float64Array(hr.length);
  let best = -Infinity;
  let out = { r: 0, lag: 0, slope: 0, range: 0 };
  for (let lag = minLag; lag <= maxLag; lag++) {
    for (let j = 0; j < hr.length; j++) shifted[j] = drive[Math.max(0, g0 + j - lag)] as number;
    const d = detrendLinear(shifted);
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    for (let j = 0; j < d.length; j++) {
      const x = d[j] as number;
      const h = hr[j] as number;
      sxy += x * h;
      sxx += x * x;
      syy += h * h;
    }
    const den = Math.sqrt(sxx * syy);
    const r = den > 1e-12 ? sxy / den : 0;
    if (r > best) {
      best = r;
      out = { r, lag, slope: sxx > 1e-12 ? sxy / sxx : 0, range: quantile(d, 0.95) - quantile(d, 0.05) };
    }
  }
  return out;
}
