/**
 * The checks of the nonce-paced reading challenge (`signals.schedule: "nonce-v1"`).
 * The engine knows the cues the person was shown (challengeSchedule of the nonce), so:
 * - the voice must follow the speak/pause cues (a recording made for another nonce
 *   follows another schedule);
 * - the heart rate must rise after the inhalation pauses and fall while speaking, at
 *   the cues' times: a matched filter against the known schedule, not against a rhythm
 *   inferred from the voice.
 * Each statistic is calibrated against the same statistic for the schedules of other
 * nonces (surrogates), which no genuine capture of this request can follow.
 */
import { type BeatSeries, heartRateOnGrid, lockToDrive, marginScore, round, type SpeechAnalysis } from "./checks.js";
import type { PresenceConfig } from "./config.js";
import { mean, movingAverage } from "./dsp.js";
import { challengeSchedule } from "./schedule.js";

/** Means of a per-sample series over the cells of a grid at `gridHz`. */
function toGrid(x: ArrayLike<number>, fs: number, gridHz: number): Float64Array {
  const cells = Math.max(1, Math.floor((x.length / fs) * gridHz));
  const out = new Float64Array(cells);
  const per = fs / gridHz;
  for (let g = 0; g < cells; g++) {
    const a = Math.floor(g * per);
    const b = Math.min(x.length, Math.max(a + 1, Math.floor((g + 1) * per)));
    out[g] = mean(x, a, b);
  }
  return out;
}

/** Pearson correlation of a[j] with b[j] over j in [from, to). */
function pearson(a: ArrayLike<number>, b: ArrayLike<number>, from: number, to: number): number {
  const m = to - from;
  if (m < 3) return 0;
  let sa = 0;
  let sb = 0;
  for (let j = from; j < to; j++) {
    sa += a[j] as number;
    sb += b[j] as number;
  }
  const ma = sa / m;
  const mb = sb / m;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let j = from; j < to; j++) {
    const x = (a[j] as number) - ma;
    const y = (b[j] as number) - mb;
    sab += x * y;
    saa += x * x;
    sbb += y * y;
  }
  const den = Math.sqrt(saa * sbb);
  return den > 1e-12 ? Math.max(-1, Math.min(1, sab / den)) : 0;
}

function surrogateNonces(nonce: string, count: number): string[] {
  const out: string[] = [];
  for (let k = 0; k < count; k++) out.push(`${nonce}#surrogate-${k}`);
  return out;
}

function zScore(value: number, others: number[]): { z: number; mean: number; sd: number } {
  const m = others.length > 0 ? others.reduce((s, x) => s + x, 0) / others.length : 0;
  let v = 0;
  for (const x of others) v += (x - m) ** 2;
  const sd = Math.max(0.05, others.length > 1 ? Math.sqrt(v / (others.length - 1)) : 0);
  return { z: (value - m) / sd, mean: m, sd };
}

// ---------------------------------------------------------------------------
// The voice follows the cues
// ---------------------------------------------------------------------------

/** Result of {@link checkScheduleFollowed}. */
export interface ScheduleCheck {
  passed: boolean;
  score: number;
  /** Correlation of voice activity with the speak cues at the best lag. */
  correlation: number;
  /** Lag of the voice after the cues, seconds. */
  lag_s: number;
  /** The correlation's z-score against the schedules of other nonces. */
  z: number;
  threshold: { correlation: number; z: number; lag_s: [number, number] };
}

/** Best correlation of voice activity (per grid cell) with a speak indicator at a lag of 0..maxLag cells. */
function voiceStat(voiceGrid: Float64Array, speakGrid: Float64Array, maxLag: number, start: number): { r: number; lag: number } {
  const shifted = new Float64Array(voiceGrid.length);
  let best = -Infinity;
  let bestLag = 0;
  for (let lag = 0; lag <= maxLag; lag++) {
    for (let g = 0; g < voiceGrid.length; g++) shifted[g] = speakGrid[Math.max(0, g - lag)] as number;
    const r = pearson(voiceGrid, shifted, Math.max(lag, start), voiceGrid.length);
    if (r > best) {
      best = r;
      bestLag = lag;
    }
  }
  return Number.isFinite(best) ? { r: best, lag: bestLag } : { r: 0, lag: 0 };
}

/** The voice is loud in the speak cues and quiet in the pause cues of this nonce's schedule. */
export function checkScheduleFollowed(
  voice: readonly number[],
  fs: number,
  nonce: string,
  cfg: PresenceConfig,
  speech?: SpeechAnalysis,
): ScheduleCheck {
  const c = cfg.paced;
  const n = voice.length;
  // Voice activity: speech (1) outside the breath pauses of the segmentation, when given
  // (the mouth keeps room noise out of its levels); else the smoothed envelope.
  const activity = speech
    ? Float64Array.from(speech.pause, (p) => 1 - p)
    : movingAverage(voice, Math.max(1, Math.round(cfg.speech.smoothSeconds * fs)) | 1);
  const vg = toGrid(activity, fs, c.gridHz);
  const maxLag = Math.max(0, Math.round(c.voiceMaxLagS * c.gridHz));
  const start = Math.round(c.analysisStartS * c.gridHz);
  const own = voiceStat(vg, toGrid(challengeSchedule(nonce, fs, n).speak, fs, c.gridHz), maxLag, start);
  const others = surrogateNonces(nonce, c.surrogates).map(
    (s) => voiceStat(vg, toGrid(challengeSchedule(s, fs, n).speak, fs, c.gridHz), maxLag, start).r,
  );
  const { z } = zScore(own.r, others);
  const margin = Math.min((own.r - c.minVoiceCorrelation) / c.scale, (z - c.minVoiceZ) / c.zScale);
  return {
    passed: own.r >= c.minVoiceCorrelation && z >= c.minVoiceZ,
    score: round(marginScore(margin, 0, 1), 4),
    correlation: round(own.r),
    lag_s: round(own.lag / c.gridHz, 2),
    z: round(z, 2),
    threshold: { correlation: c.minVoiceCorrelation, z: c.minVoiceZ, lag_s: [0, c.voiceMaxLagS] },
  };
}

// ---------------------------------------------------------------------------
// The heart rate follows the cues
// ---------------------------------------------------------------------------

/** Result of {@link checkPacedCoupling}. */
export interface PacedCouplingCheck {
  passed: boolean;
  score: number;
  /** Correlation of the heart rate with the breath drive of the cues at the best lag. */
  correlation: number;
  /** Lag of the heart-rate response after the cue drive, seconds. */
  lag_s: number;
  /** The correlation's z-score against the schedules of other nonces. */
  z: number;
  /** Peak-to-peak heart-rate swing explained by the cue drive, bpm. */
  rsa_bpm: number;
  beats: number;
  beat_noise_bpm: number;
  threshold: { correlation: number; z: number; rsa_bpm: number; rsa_to_noise: number; lag_s: [number, number]; beats: number };
}

/** The cue drive: the pause indicator per grid cell through a first-order response. */
function cueDrive(speakGrid: Float64Array, gridHz: number, tauS: number): Float64Array {
  const decay = Math.exp(-1 / gridHz / tauS);
  const out = new Float64Array(speakGrid.length);
  let y = 1 - mean(speakGrid);
  for (let g = 0; g < speakGrid.length; g++) {
    y = decay * y + (1 - decay) * (1 - (speakGrid[g] as number));
    out[g] = y;
  }
  return out;
}

/**
 * Heart rate (beat-to-beat, from {@link beatSeries}) against the breath drive of the
 * nonce's cues (pauses are inhalations): correlation at a lag of minLagS..maxLagS, and
 * its z-score against the drives of other nonces' schedules.
 */
export function checkPacedCoupling(
  beats: BeatSeries | null,
  samples: number,
  fs: number,
  nonce: string,
  cfg: PresenceConfig,
): PacedCouplingCheck {
  const c = cfg.paced;
  const threshold = {
    correlation: c.minCorrelation,
    z: c.minZ,
    rsa_bpm: cfg.coupling.minRsaBpm,
    rsa_to_noise: cfg.coupling.minRsaToNoise,
    lag_s: [c.minLagS, c.maxLagS] as [number, number],
    beats: cfg.coupling.minBeats,
  };
  const count = beats ? beats.rates.length : 0;
  const noise = beats ? beats.beatNoise : 0;
  const fail = (): PacedCouplingCheck => ({
    passed: false,
    score: round(marginScore(-1, 0, 1), 4),
    correlation: 0,
    lag_s: 0,
    z: 0,
    rsa_bpm: 0,
    beats: count,
    beat_noise_bpm: round(noise, 2),
    threshold,
  });
  if (!beats || count < cfg.coupling.minBeats) return fail();
  const dt = 1 / c.gridHz;
  const cells = Math.max(1, Math.floor((samples / fs) * c.gridHz));
  const grid = heartRateOnGrid(beats.times, beats.rates, dt, cells, c.analysisStartS + c.minLagS);
  if (!grid) return fail();
  const minLag = Math.round(c.minLagS / dt);
  const maxLag = Math.round(c.maxLagS / dt);
  const lockTo = (nonceOf: string) =>
    lockToDrive(
      grid.hr,
      grid.g0,
      cueDrive(toGrid(challengeSchedule(nonceOf, fs, samples).speak, fs, c.gridHz), c.gridHz, c.responseTauS),
      minLag,
      maxLag,
    );
  const own = lockTo(nonce);
  const others = surrogateNonces(nonce, c.surrogates).map((s) => lockTo(s).r);
  const { z } = zScore(own.r, others);
  // A constant-rate pulse (a screen) has no cue-locked swing above its beat jitter.
  const rsa = Math.max(0, own.slope * own.range);
  const rsaFloor = Math.max(cfg.coupling.minRsaBpm, cfg.coupling.minRsaToNoise * noise);
  const margin = Math.min((own.r - c.minCorrelation) / c.scale, (z - c.minZ) / c.zScale, (rsa - rsaFloor) / cfg.coupling.rsaScale);
  return {
    passed: own.r >= c.minCorrelation && z >= c.minZ && rsa >= rsaFloor,
    score: round(marginScore(margin, 0, 1), 4),
    correlation: round(own.r),
    lag_s: round(own.lag * dt, 2),
    z: round(z, 2),
    rsa_bpm: round(rsa, 2),
    beats: count,
    beat_noise_bpm: round(noise, 2),
    threshold,
  };
}
