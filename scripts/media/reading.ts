/**
 * A synthetic person reading aloud, for test media: the breath pauses of their speech drive their
 * heart rate (respiratory sinus arrhythmia: it rises a second or so after each inhalation and falls
 * while speaking, docs/presence-descriptor.md section 5, check 3), and their mouth opens with the
 * sound. Pure: the media generator (generate.ts) feeds it espeak-ng's speech and paints the result
 * into a photograph; the client's unit tests feed it synthetic syllables.
 */

/** How a synthetic heart beats: its mean rate and how strongly the breath modulates it. */
export interface HeartOptions {
  /** Mean heart rate, bpm. */
  bpm: number;
  /** Peak-to-peak swing of the heart rate with the breath, bpm. */
  rsaBpm: number;
  /** Delay of the heart-rate response after an inhalation starts, seconds. */
  delayS: number;
  /** Time constant of that response, seconds. */
  tauS: number;
}

/** A reader at rest: 72 bpm with a clear breath-locked swing. */
export const RESTING_HEART: HeartOptions = { bpm: 72, rsaBpm: 12, delayS: 0.6, tauS: 1.0 };

/** The RMS envelope of audio on a `rate` Hz grid (each value the RMS of the samples nearest it). */
export function rmsEnvelope(audio: ArrayLike<number>, sampleRate: number, rate: number): Float64Array {
  const n = Math.floor((audio.length / sampleRate) * rate);
  const out = new Float64Array(n);
  const half = sampleRate / rate / 2;
  for (let i = 0; i < n; i++) {
    const centre = (i / rate) * sampleRate;
    const from = Math.max(0, Math.round(centre - half));
    const to = Math.min(audio.length, Math.round(centre + half));
    let sum = 0;
    for (let k = from; k < to; k++) sum += (audio[k] as number) ** 2;
    out[i] = to > from ? Math.sqrt(sum / (to - from)) : 0;
  }
  return out;
}

/**
 * 1 inside a breath pause, 0 elsewhere: a stretch of at least `minPauseS` seconds where the
 * envelope stays below a tenth of its 95th percentile (shorter silences are gaps between words).
 */
export function breathPauses(envelope: ArrayLike<number>, rate: number, minPauseS = 0.3): Float64Array {
  const sorted = Float64Array.from(envelope).sort();
  const threshold = 0.1 * (sorted[Math.floor(0.95 * (sorted.length - 1))] ?? 0);
  const pause = new Float64Array(envelope.length);
  let i = 0;
  while (i < envelope.length) {
    if ((envelope[i] as number) > threshold) {
      i++;
      continue;
    }
    const start = i;
    while (i < envelope.length && (envelope[i] as number) <= threshold) i++;
    if (i - start >= minPauseS * rate) pause.fill(1, start, i);
  }
  return pause;
}

/** First-order low-pass, started from its steady state for a periodic input (run over the series twice). */
function lowPassPeriodic(x: ArrayLike<number>, rate: number, tauS: number): Float64Array {
  const a = 1 - Math.exp(-1 / (rate * tauS));
  const out = new Float64Array(x.length);
  let y = 0;
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < x.length; i++) {
      y += a * ((x[i] as number) - y);
      out[i] = y;
    }
  }
  return out;
}

/**
 * The heart's phase in cycles on a `rate` Hz grid, for a reading that repeats (as a fake camera
 * and microphone loop their files): the heart rate is `bpm` plus the breath drive (the pauses,
 * low-passed and delayed) scaled to `rsaBpm` peak to peak, and the rate is nudged so that a whole
 * number of beats fills the loop, so the pulse runs on smoothly when the loop restarts.
 */
export function heartPhase(pauses: ArrayLike<number>, rate: number, heart: HeartOptions): Float64Array {
  const n = pauses.length;
  const drive = lowPassPeriodic(lowPassPeriodic(pauses, rate, heart.tauS), rate, heart.tauS / 2);
  const shift = Math.round(heart.delayS * rate);
  let lo = Infinity;
  let hi = -Infinity;
  for (const d of drive) {
    lo = Math.min(lo, d);
    hi = Math.max(hi, d);
  }
  const range = Math.max(1e-9, hi - lo);
  const bpm = Float64Array.from({ length: n }, (_, i) => {
    const d = drive[(i - shift + n) % n] as number;
    return heart.bpm + heart.rsaBpm * ((d - lo) / range - 0.5);
  });
  const total = bpm.reduce((sum, x) => sum + x / 60 / rate, 0);
  const scale = Math.max(1, Math.round(total)) / total;
  const phase = new Float64Array(n);
  let p = 0;
  for (let i = 0; i < n; i++) {
    phase[i] = p;
    p += ((bpm[i] as number) * scale) / 60 / rate;
  }
  return phase;
}

/** The mean heart rate of a phase series, bpm. */
export function meanBpm(phase: ArrayLike<number>, rate: number): number {
  const n = phase.length;
  return n > 1 ? ((((phase[n - 1] as number) - (phase[0] as number)) * (n / (n - 1))) / (n / rate)) * 60 : 0;
}

/** The blood-volume pulse at a heart phase: a systolic peak with a dicrotic second harmonic, about -1..1. */
export function pulseWave(phase: number): number {
  return 0.8 * Math.sin(2 * Math.PI * phase) + 0.3 * Math.sin(4 * Math.PI * phase + 0.8);
}

/**
 * Mouth opening (docs/presence-descriptor.md 3.3 units) that follows the sound: 0.02 closed, up to
 * about 0.3 at the loudest syllables, opening `leadS` seconds before the sound it makes.
 */
export function mouthFromEnvelope(envelope: ArrayLike<number>, rate: number, leadS = 0.04): Float64Array {
  const n = envelope.length;
  const smooth = lowPassPeriodic(envelope, rate, 0.03);
  let peak = 0;
  for (const x of smooth) peak = Math.max(peak, x);
  const lead = Math.round(leadS * rate);
  return Float64Array.from({ length: n }, (_, i) => {
    const x = peak > 0 ? (smooth[(i + lead) % n] as number) / peak : 0;
    return 0.02 + 0.28 * Math.sqrt(x);
  });
}

/**
 * Synthetic speech for unit tests: `lines` lines of syllables (a 140 Hz buzz in a sin² window, 0.15
 * to 0.33 s apart as in running speech, never evenly, at about -20 dBFS), each followed by a breath
 * pause, over a faint room noise; audio at `sampleRate`. Deterministic.
 */
export function syntheticSpeech(
  lines: readonly { speakS: number; pauseS: number }[],
  sampleRate: number,
): { audio: Float32Array; seconds: number } {
  const seconds = lines.reduce((sum, line) => sum + line.speakS + line.pauseS, 0);
  const audio = new Float32Array(Math.round(seconds * sampleRate));
  let state = 12345;
  const random = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  for (let k = 0; k < audio.length; k++) audio[k] = 0.002 * (2 * random() - 1);
  let start = 0;
  for (const line of lines) {
    let s = start;
    while (true) {
      const interval = 0.15 + 0.18 * random();
      if (s + interval > start + line.speakS) break;
      const loudness = 0.06 + 0.06 * random();
      const from = Math.round(s * sampleRate);
      const length = Math.round(0.85 * interval * sampleRate);
      for (let k = 0; k < length; k++) {
        const window = Math.sin((Math.PI * k) / length) ** 2;
        const t = k / sampleRate;
        const buzz = Math.sin(2 * Math.PI * 140 * t) + 0.5 * Math.sin(2 * Math.PI * 280 * t) + 0.25 * Math.sin(2 * Math.PI * 420 * t);
        audio[from + k] = (audio[from + k] as number) + loudness * window * buzz;
      }
      s += interval;
    }
    start += line.speakS + line.pauseS;
  }
  return { audio, seconds };
}
