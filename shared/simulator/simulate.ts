/**
 * Deterministic synthetic captures: sandbox test persons 1..1000 and the attack
 * generators used by tests and the benchmark. Pure and seeded: the same options
 * always produce the same descriptor.
 *
 * The model (docs/presence-descriptor.md, "Simulator"): a speaker reads aloud in
 * breath groups (a short inhalation pause, then speech on the exhalation); the
 * heart rate rises after each inhalation and falls during speech (respiratory
 * sinus arrhythmia); the camera sees the pulse through skin noise, motion
 * artefacts, dropped frames and clock jitter; the microphone hears the speech
 * envelope over room noise.
 */
import { DESCRIPTOR_LIMITS, type LightSignals, type PresenceDescriptor, REFERENCE_FACE_MODEL } from "../engine/descriptor.js";
import { finishPulse } from "../engine/dsp.js";
import { LIGHT_SEQUENCE_V1 } from "../engine/light.js";
import { createRng, hashSeed, type Rng } from "../engine/rng.js";
import { SCHEDULE_NONCE_V1, scheduleTenths } from "../engine/schedule.js";
import { type LightConditions, type LightPresentation, lightSeries, sandboxLight } from "./light.js";

export { cosineSimilarity } from "../engine/dsp.js";

/** Attack types of the simulator (`none` is a bona fide capture). */
export type AttackType = "none" | (typeof LIGHT_ATTACK_TYPES)[number];
/** The attack types of descriptor v1's benchmark, without `none`. */
export const ATTACK_TYPES = ["photo", "replay", "lipsync", "screen"] as const;
/**
 * Every attack type, those against the light challenge of descriptor v2 included:
 * `earlier_capture` (a genuine capture made for another nonce, replayed whole), `injected` (a
 * genuine recording injected through a virtual camera, no relighting), `relit_puppet` (a
 * real-time lip-sync puppet that relights itself with the screen's colours, late).
 */
export const LIGHT_ATTACK_TYPES = [...ATTACK_TYPES, "earlier_capture", "injected", "relit_puppet"] as const;
/** `coerced`: acute arousal (heart rate well above rest, variability collapsed). */
export type SubjectState = "calm" | "coerced";

/** The number of documented sandbox test persons (1..SANDBOX_PERSONS). */
export const SANDBOX_PERSONS = 1000;
const EMBEDDING_DIM = DESCRIPTOR_LIMITS.embeddingLength;

/** Stable traits of one synthetic person. */
interface PersonProfile {
  person: number;
  /** Unit-norm 128-d face embedding (the person's "true" face). */
  embedding: number[];
  restingHrBpm: number;
  breathsPerMin: number;
  /** Peak-to-peak respiratory sinus arrhythmia while reading aloud, bpm. */
  rsaBpm: number;
  /** Per-sample skin-signal SNR of this person's sandbox captures (studio light), dB. */
  skinSnrDb: number;
  syllableRateHz: number;
  mouthGain: number;
  speechLevelDb: number;
}

/** Capture conditions and physiology of one session (everything that varies). */
export interface Nuisance {
  heartRateBpm: number;
  breathsPerMin: number;
  rsaBpm: number;
  /** Seconds from the start of an inhalation to the heart-rate response. */
  rsaDelayS: number;
  /** Time constant of the heart-rate response, seconds. */
  rsaTauS: number;
  /** Amplitude of the slow (~0.1 Hz, Mayer-wave) heart-rate oscillation, bpm. */
  mayerBpm: number;
  /** Heart-rate drift over the capture, bpm (either sign). */
  driftBpm: number;
  /** Standard deviation of the remaining random heart-rate variation, bpm. */
  hrNoiseBpm: number;
  /** Per-sample SNR of the pulse in the skin signal, dB (poor light ~ -6, good ~ +6). */
  snrDb: number;
  /** Motion-artefact intensity, 0 (still) to 1 (restless). */
  motion: number;
  /** Fraction of camera frames dropped. */
  dropRate: number;
  /** Camera timestamp jitter, ms (standard deviation). */
  jitterMs: number;
  /** Constant audio/video offset, ms. */
  avOffsetMs: number;
  /** Voice-activity noise: room noise level and bursts, 0 (quiet) to 1 (noisy). */
  vadNoise: number;
  faceQuality: number;
  /** Per-dimension noise of the face embedding before normalisation. */
  embeddingNoise: number;
  syllableRateHz: number;
  mouthGain: number;
  speechLevelDb: number;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function assertPerson(person: number): void {
  if (!Number.isInteger(person) || person < 1 || person > SANDBOX_PERSONS) {
    throw new RangeError(`person must be an integer from 1 to ${SANDBOX_PERSONS}`);
  }
}

function unitGaussianVector(rng: Rng, dim: number): number[] {
  const out = new Array<number>(dim);
  let s = 0;
  for (let i = 0; i < dim; i++) {
    const x = rng.normal();
    out[i] = x;
    s += x * x;
  }
  const n = Math.sqrt(s);
  for (let i = 0; i < dim; i++) out[i] = (out[i] as number) / n;
  return out;
}

function perturbedUnit(base: readonly number[], sigma: number, rng: Rng): number[] {
  const out = base.map((x) => x + sigma * rng.normal());
  let s = 0;
  for (const x of out) s += x * x;
  const n = Math.sqrt(s);
  // Round to 6 decimals as a device would when serialising; the norm stays within 1e-5 of 1.
  return out.map((x) => Math.round((x / n) * 1e6) / 1e6);
}

/**
 * The stable face embedding of sandbox person `person` (1..1000): a unit vector
 * that every capture of that person scatters around (cosine ~0.97 to it).
 *
 * @example
 * cosineSimilarity(faceEmbeddingOfPerson(7), simulateCapture({ person: 7 }).face.embedding) // ~0.97
 */
export function faceEmbeddingOfPerson(person: number): number[] {
  assertPerson(person);
  return unitGaussianVector(createRng(hashSeed("presence-sim/face", person)), EMBEDDING_DIM);
}

/** The stable traits of sandbox person `person` (1..1000). */
export function personProfile(person: number): PersonProfile {
  assertPerson(person);
  const rng = createRng(hashSeed("presence-sim/person", person));
  return {
    person,
    embedding: faceEmbeddingOfPerson(person),
    restingHrBpm: rng.uniform(56, 84),
    breathsPerMin: rng.uniform(9, 15),
    rsaBpm: rng.uniform(6, 10),
    skinSnrDb: rng.uniform(20, 26),
    syllableRateHz: rng.uniform(3.6, 5.2),
    mouthGain: rng.uniform(0.15, 0.35),
    speechLevelDb: rng.uniform(-28, -16),
  };
}

/**
 * Sandbox conditions for a person: studio light, little motion, a quiet room,
 * a calm reader with clear breathing. Used by {@link simulateCapture} so that
 * sandbox answers are dependable (a bona fide capture passes, an attack is
 * refused); real-world error rates are what the benchmark measures with
 * {@link wildNuisance}.
 */
function sandboxNuisance(profile: PersonProfile, rng: Rng, state: SubjectState = "calm"): Nuisance {
  const coerced = state === "coerced";
  return {
    heartRateBpm: coerced ? profile.restingHrBpm + rng.uniform(45, 55) : profile.restingHrBpm + rng.uniform(-3, 3),
    breathsPerMin: profile.breathsPerMin * (coerced ? 1.25 : rng.uniform(0.9, 1.1)),
    rsaBpm: coerced ? Math.max(3.5, profile.rsaBpm * 0.35) : profile.rsaBpm * rng.uniform(0.9, 1.1),
    rsaDelayS: rng.uniform(0.3, 1.0),
    rsaTauS: rng.uniform(0.8, 1.4),
    mayerBpm: rng.uniform(0, 0.5),
    driftBpm: rng.uniform(-1, 1),
    hrNoiseBpm: rng.uniform(0.2, 0.4),
    snrDb: profile.skinSnrDb + rng.uniform(-1, 1),
    motion: rng.uniform(0, 0.1),
    dropRate: rng.uniform(0, 0.01),
    jitterMs: rng.uniform(0, 2),
    avOffsetMs: rng.uniform(-50, 50),
    vadNoise: rng.uniform(0, 0.2),
    faceQuality: rng.uniform(0.85, 0.99),
    embeddingNoise: 0.02,
    syllableRateHz: profile.syllableRateHz,
    mouthGain: profile.mouthGain,
    speechLevelDb: profile.speechLevelDb,
  };
}

/**
 * Wide "in the wild" nuisance for the benchmark: heart rate 50 to 120, breathing
 * 8 to 20 per minute, RSA 1 to 8 bpm, skin SNR from poor to good light, motion,
 * dropped frames, clock jitter, audio/video offset and voice-activity noise.
 */
export function wildNuisance(rng: Rng): Nuisance {
  return {
    heartRateBpm: rng.uniform(50, 120),
    breathsPerMin: rng.uniform(8, 20),
    rsaBpm: rng.uniform(1, 8),
    rsaDelayS: rng.uniform(0.2, 1.2),
    rsaTauS: rng.uniform(0.6, 1.6),
    mayerBpm: rng.uniform(0, 1.5),
    driftBpm: rng.uniform(-3, 3),
    hrNoiseBpm: rng.uniform(0.3, 0.8),
    snrDb: rng.uniform(-6, 6),
    motion: rng.uniform(0, 1),
    dropRate: rng.uniform(0, 0.05),
    jitterMs: rng.uniform(0, 8),
    avOffsetMs: rng.uniform(-100, 100),
    vadNoise: rng.uniform(0, 1),
    faceQuality: rng.uniform(0.6, 0.99),
    embeddingNoise: 0.025,
    syllableRateHz: rng.uniform(3.2, 5.5),
    mouthGain: rng.uniform(0.1, 0.35),
    speechLevelDb: rng.uniform(-32, -14),
  };
}

/**
 * The benchmark's controlled population: the physiology and room of {@link wildNuisance}, but
 * capture conditions a client can enforce before recording (enough light, a still face, a
 * steady camera): skin SNR 6 to 20 dB, little motion, at most 3 ms jitter and 2% dropped frames.
 */
export function controlledNuisance(rng: Rng): Nuisance {
  return {
    ...wildNuisance(rng),
    snrDb: rng.uniform(6, 20),
    motion: rng.uniform(0, 0.3),
    jitterMs: rng.uniform(0, 3),
    dropRate: rng.uniform(0, 0.02),
  };
}

// ---------------------------------------------------------------------------
// Continuous-time model, evaluated on a fine grid
// ---------------------------------------------------------------------------

const FINE_HZ = 240;
const LEAD_S = 4; // the fine grid starts this long before the capture (filters settle)

interface Speech {
  /** 1 during an inhalation pause, on the fine grid. */
  inhale: Float64Array;
  /** Syllabic speech envelope 0..1, on the fine grid. */
  envelope: Float64Array;
}

function fineLength(seconds: number): number {
  return Math.ceil((seconds + LEAD_S + 2) * FINE_HZ);
}

function fineAt(x: Float64Array, t: number): number {
  const pos = (t + LEAD_S) * FINE_HZ;
  const i = Math.floor(pos);
  if (i < 0) return x[0] as number;
  if (i >= x.length - 1) return x[x.length - 1] as number;
  const f = pos - i;
  return (x[i] as number) * (1 - f) + (x[i + 1] as number) * f;
}

/** Breath groups: inhalation pause, then syllables on the exhalation. */
function makeSpeech(rng: Rng, seconds: number, breathsPerMin: number, syllableRateHz: number): Speech {
  const n = fineLength(seconds);
  const inhale = new Float64Array(n);
  const envelope = new Float64Array(n);
  const cycle = 60 / breathsPerMin;
  let t = -LEAD_S + rng.uniform(0, cycle);
  const end = seconds + 2;
  while (t < end) {
    const c = cycle * clamp(1 + 0.3 * rng.normal(), 0.5, 1.8);
    const pause = clamp(c * rng.uniform(0.14, 0.26), 0.35, 1.2);
    const i0 = Math.max(0, Math.round((t + LEAD_S) * FINE_HZ));
    const i1 = Math.min(n, Math.round((t + pause + LEAD_S) * FINE_HZ));
    for (let i = i0; i < i1; i++) inhale[i] = 1;
    // Syllables until the next breath.
    fillSyllables(rng, envelope, t + pause, t + c, syllableRateHz);
    t += c;
  }
  return { inhale, envelope };
}

/**
 * How a reader follows the paced cues: reaction time to each cue, pauses skipped
 * (reading on through a pause cue), a late first line, and catch breaths taken in
 * the middle of a line.
 */
interface PacedCompliance {
  /** Mean reaction time to a cue, seconds. */
  reactionS: number;
  /** Spread of the reaction time from cue to cue, seconds. */
  reactionSdS: number;
  /** Probability of reading on through a pause cue (no breath taken). */
  skipProb: number;
  /** Extra delay before the first line, seconds. */
  lateStartS: number;
  /** Probability of a short catch breath in the middle of a speak cue. */
  catchBreathProb: number;
}

/** Compliance of readers in the wild: slow and uneven reactions, skipped pauses, late starts. */
function wildCompliance(rng: Rng): PacedCompliance {
  return {
    reactionS: rng.uniform(0.2, 0.8),
    reactionSdS: rng.uniform(0.05, 0.25),
    skipProb: rng.uniform(0, 0.2),
    lateStartS: rng.next() < 0.3 ? rng.uniform(0.3, 2) : 0,
    catchBreathProb: rng.uniform(0, 0.15),
  };
}

/** Compliance of sandbox readers: prompt, every cue followed. */
function sandboxCompliance(rng: Rng): PacedCompliance {
  return { reactionS: rng.uniform(0.25, 0.5), reactionSdS: 0.05, skipProb: 0, lateStartS: 0, catchBreathProb: 0 };
}

/** A live heart with the person's physiology, its rate coupled to their breathing (RSA). */
function genuinePulse(rng: Rng, seconds: number, inhale: Float64Array, n: Nuisance): PulseSource {
  const phase = heartPhase(rng, seconds, inhale, {
    heartRateBpm: n.heartRateBpm,
    rsaBpm: n.rsaBpm,
    rsaDelayS: n.rsaDelayS,
    rsaTauS: n.rsaTauS,
    coupled: true,
    mayerBpm: n.mayerBpm,
    driftBpm: n.driftBpm,
    hrNoiseBpm: n.hrNoiseBpm,
  });
  return { kind: "heart", phase, shape: pulseShape(rng) };
}

/**
 * The pulse a lip-sync puppet shows: none, one lifted from a recording (`recorded`), or a synthetic
 * heart whose rate drifts (or holds constant) without following the live reader's breath.
 */
function lipsyncPulse(
  rng: Rng,
  seconds: number,
  inhale: Float64Array,
  variant: "absent" | "drifting" | "recorded" | "constant",
  recorded: () => PulseSource,
): PulseSource {
  if (variant === "absent") return { kind: "none" };
  if (variant === "recorded") return recorded();
  const phase = heartPhase(rng, seconds, inhale, {
    heartRateBpm: rng.uniform(55, 110),
    rsaBpm: 0,
    rsaDelayS: 0,
    rsaTauS: 1,
    coupled: false,
    ...(variant === "constant"
      ? { mayerBpm: 0, driftBpm: 0, hrNoiseBpm: 0 }
      : { mayerBpm: rng.uniform(1, 3), driftBpm: rng.uniform(-6, 6), hrNoiseBpm: rng.uniform(0.5, 2) }),
  });
  return { kind: "heart", phase, shape: pulseShape(rng) };
}

function fillSyllables(rng: Rng, envelope: Float64Array, from: number, to: number, syllableRateHz: number): void {
  const n = envelope.length;
  let s = from + rng.uniform(0.02, 0.12);
  while (s < to - 0.12) {
    const interval = clamp((1 / syllableRateHz) * rng.uniform(0.7, 1.3), 0.12, 0.45);
    const dur = Math.min(interval * rng.uniform(0.8, 1.05), to - s);
    const amp = rng.uniform(0.45, 1);
    const j0 = Math.max(0, Math.round((s + LEAD_S) * FINE_HZ));
    const j1 = Math.min(n, Math.round((s + dur + LEAD_S) * FINE_HZ));
    for (let j = j0; j < j1; j++) {
      const x = (j / FINE_HZ - LEAD_S - s) / dur;
      const v = Math.sin(Math.PI * x);
      envelope[j] = Math.max(envelope[j] as number, amp * v * v);
    }
    s += interval;
    if (rng.next() < 0.18) s += rng.uniform(0.06, 0.22); // a word gap
  }
}

/**
 * A reader following the cues of `challengeSchedule(nonce)`: breathes in during each
 * pause cue (a reaction time after it), reads aloud on the exhalation after each speak
 * cue, with the imperfections of `c`.
 */
function makePacedSpeech(rng: Rng, seconds: number, nonce: string, syllableRateHz: number, c: PacedCompliance): Speech {
  const n = fineLength(seconds);
  const inhale = new Float64Array(n);
  const envelope = new Float64Array(n);
  const mark = (a: number, b: number): void => {
    const i0 = Math.max(0, Math.round((a + LEAD_S) * FINE_HZ));
    const i1 = Math.min(n, Math.round((b + LEAD_S) * FINE_HZ));
    for (let i = i0; i < i1; i++) inhale[i] = 1;
  };
  // Before the capture: quiet, one ordinary breath.
  const pre = -LEAD_S + rng.uniform(0.3, 1.5);
  mark(pre, pre + rng.uniform(0.8, 1.4));
  const segs = scheduleTenths(nonce, Math.ceil((seconds + 2) * 10)).map((x) => ({
    kind: x.kind,
    start: x.start / 10,
    end: x.end / 10,
  }));
  const react = (): number => clamp(c.reactionS + c.reactionSdS * rng.normal(), 0.1, 1.5);
  let speakingFrom: number | null = null; // start of the current stretch of reading
  for (let k = 0; k < segs.length; k++) {
    const seg = segs[k] as { kind: "pause" | "speak"; start: number; end: number };
    if (seg.kind === "speak") {
      if (speakingFrom === null) speakingFrom = seg.start + react() + (k === 1 ? c.lateStartS : 0);
      continue;
    }
    // A pause cue.
    if (k > 0 && rng.next() < c.skipProb) continue; // reads on through it
    const stop = seg.start + react();
    if (speakingFrom !== null) {
      const from = speakingFrom;
      // A catch breath in the middle of a long line.
      if (stop - from > 2.2 && rng.next() < c.catchBreathProb) {
        const mid = from + (stop - from) * rng.uniform(0.35, 0.65);
        const len = rng.uniform(0.3, 0.5);
        fillSyllables(rng, envelope, from, mid, syllableRateHz);
        mark(mid, mid + len);
        fillSyllables(rng, envelope, mid + len, stop, syllableRateHz);
      } else fillSyllables(rng, envelope, from, stop, syllableRateHz);
      speakingFrom = null;
    }
    // Breathes in for part of the pause (at least most of a second), then waits for the cue.
    const pauseLen = seg.end - seg.start;
    mark(stop, stop + clamp(pauseLen * rng.uniform(0.5, 0.9), 0.6, pauseLen));
  }
  if (speakingFrom !== null) fillSyllables(rng, envelope, speakingFrom, seconds + 2, syllableRateHz);
  return { inhale, envelope };
}

/** First-order low-pass on the fine grid. */
function lowPass(x: Float64Array, tauS: number): Float64Array {
  const out = new Float64Array(x.length);
  const a = 1 - Math.exp(-1 / (FINE_HZ * tauS));
  let y = x[0] as number;
  for (let i = 0; i < x.length; i++) {
    y += a * ((x[i] as number) - y);
    out[i] = y;
  }
  return out;
}

interface HeartOptions {
  heartRateBpm: number;
  rsaBpm: number;
  rsaDelayS: number;
  rsaTauS: number;
  /** false: no breath coupling (only the slow and random variation below). */
  coupled: boolean;
  mayerBpm: number;
  driftBpm: number;
  hrNoiseBpm: number;
}

/** Cardiac phase (cycles) on the fine grid. */
function heartPhase(rng: Rng, seconds: number, inhale: Float64Array, o: HeartOptions): Float64Array {
  const n = inhale.length;
  const hr = new Float64Array(n).fill(o.heartRateBpm);
  if (o.coupled) {
    const drive = lowPass(lowPass(inhale, o.rsaTauS), o.rsaTauS * 0.5);
    const shift = Math.round(o.rsaDelayS * FINE_HZ);
    // Scale so that the drive's 5th..95th percentile range over the capture equals the RSA.
    const from = Math.round(LEAD_S * FINE_HZ);
    const to = Math.min(n, from + Math.round(seconds * FINE_HZ));
    const window: number[] = [];
    for (let i = from; i < to; i += 8) window.push(drive[Math.max(0, i - shift)] as number);
    window.sort((a, b) => a - b);
    const lo = window[Math.floor(window.length * 0.05)] ?? 0;
    const hi = window[Math.floor(window.length * 0.95)] ?? 1;
    const range = Math.max(1e-6, hi - lo);
    const mid = (hi + lo) / 2;
    for (let i = 0; i < n; i++) {
      const d = drive[Math.max(0, i - shift)] as number;
      hr[i] = (hr[i] as number) + (o.rsaBpm * (d - mid)) / range;
    }
  }
  // Slow Mayer-wave and drift, plus small random variability.
  const mayerAmp = o.mayerBpm;
  const mayerHz = rng.uniform(0.07, 0.13);
  const mayerPhase = rng.uniform(0, 2 * Math.PI);
  const drift = o.driftBpm;
  let noise = 0;
  const noiseStep = Math.exp(-1 / (FINE_HZ * 0.6));
  const noiseSd = o.hrNoiseBpm;
  const phase = new Float64Array(n);
  let p = rng.uniform(0, 1);
  for (let i = 0; i < n; i++) {
    const t = i / FINE_HZ - LEAD_S;
    noise = noise * noiseStep + noiseSd * Math.sqrt(1 - noiseStep * noiseStep) * rng.normal();
    const rate = (hr[i] as number) + mayerAmp * Math.sin(2 * Math.PI * mayerHz * t + mayerPhase) + (drift * t) / seconds + noise;
    p += Math.max(20, rate) / 60 / FINE_HZ;
    phase[i] = p;
  }
  return phase;
}

function pulseShape(rng: Rng): (phase: number) => number {
  const h2 = rng.uniform(0.2, 0.5);
  const h3 = rng.uniform(0, 0.2);
  const p2 = rng.uniform(0, 2 * Math.PI);
  const p3 = rng.uniform(0, 2 * Math.PI);
  const scale = 1 / Math.sqrt((1 + h2 * h2 + h3 * h3) / 2);
  return (ph) => scale * (Math.cos(2 * Math.PI * ph) + h2 * Math.cos(4 * Math.PI * ph + p2) + h3 * Math.cos(6 * Math.PI * ph + p3));
}

// ---------------------------------------------------------------------------
// Sampling: what the device sees and sends
// ---------------------------------------------------------------------------

interface Sampling {
  fs: number;
  count: number;
  /** Camera sample times (s), with jitter and the audio/video offset. */
  videoTimes: Float64Array;
  /** Microphone sample times (s): the reference clock. */
  audioTimes: Float64Array;
  /** 0 where the camera frame was dropped (the device interpolates). */
  valid: Uint8Array;
}

function makeSampling(rng: Rng, seconds: number, fs: number, n: Nuisance): Sampling {
  const count = Math.round(seconds * fs);
  const videoTimes = new Float64Array(count);
  const audioTimes = new Float64Array(count);
  const valid = new Uint8Array(count).fill(1);
  for (let i = 0; i < count; i++) {
    audioTimes[i] = i / fs;
    videoTimes[i] = i / fs + (n.jitterMs / 1000) * rng.normal() + n.avOffsetMs / 1000;
  }
  let i = 1;
  while (i < count - 1) {
    if (rng.next() < n.dropRate / 2) {
      const burst = rng.int(1, 3);
      for (let k = 0; k < burst && i + k < count - 1; k++) valid[i + k] = 0;
      i += burst + 1;
    } else i++;
  }
  return { fs, count, videoTimes, audioTimes, valid };
}

/** The device resamples camera series onto the uniform clock: dropped frames are interpolated. */
function fillDropped(x: Float64Array, valid: Uint8Array): void {
  let i = 0;
  while (i < x.length) {
    if (valid[i] === 1) {
      i++;
      continue;
    }
    const start = i;
    while (i < x.length && valid[i] === 0) i++;
    const before = start > 0 ? (x[start - 1] as number) : (x[i] ?? 0);
    const after = i < x.length ? (x[i] as number) : before;
    const span = i - start + 1;
    for (let k = start; k < i; k++) x[k] = before + ((after - before) * (k - start + 1)) / span;
  }
}

function round(xs: ArrayLike<number>, digits: number, lo: number, hi: number): number[] {
  const f = 10 ** digits;
  const out = new Array<number>(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = Math.round(clamp(xs[i] as number, lo, hi) * f) / f;
  return out;
}

/** Voice envelope as the device computes it: RMS level mapped from [-60, 0] dBFS to [0, 1]. */
function voiceSeries(rng: Rng, speech: Speech | null, s: Sampling, n: Nuisance, seconds: number): number[] {
  const speechAmp = 10 ** (n.speechLevelDb / 20);
  const floorDb = -58 + 18 * n.vadNoise + rng.uniform(-2, 2);
  const floorAmp = 10 ** (floorDb / 20);
  // Background bursts (doors, keyboards, a far voice) on the reference clock.
  const bursts: Array<{ t: number; d: number; amp: number }> = [];
  let t = rng.uniform(0, 4);
  const rate = 0.05 + 0.35 * n.vadNoise;
  while (t < seconds) {
    bursts.push({ t, d: rng.uniform(0.1, 0.8), amp: 10 ** ((floorDb + rng.uniform(8, 26) * n.vadNoise + 4) / 20) });
    t += -Math.log(Math.max(1e-9, rng.next())) / rate;
  }
  const out = new Array<number>(s.count);
  for (let i = 0; i < s.count; i++) {
    const ti = s.audioTimes[i] as number;
    const e = speech ? fineAt(speech.envelope, ti) : 0;
    let p = (speechAmp * e) ** 2 + (floorAmp * (1 + 0.25 * rng.normal())) ** 2;
    for (const b of bursts) if (ti >= b.t && ti < b.t + b.d) p += b.amp ** 2;
    const db = 10 * Math.log10(Math.max(1e-12, p));
    out[i] = Math.round(clamp((db + 60) / 60, 0, 1) * 1000) / 1000;
  }
  return out;
}

/** Mouth opening from landmarks: follows the envelope slightly ahead of the sound. */
function mouthSeries(rng: Rng, speech: Speech | null, s: Sampling, n: Nuisance, gain = n.mouthGain): Float64Array {
  const lead = rng.uniform(0, 0.06);
  const closed = rng.uniform(0.01, 0.04);
  const breathOpen = rng.uniform(0, 0.06);
  const landmarkSd = rng.uniform(0.004, 0.015) * (1 + n.motion);
  const out = new Float64Array(s.count);
  for (let i = 0; i < s.count; i++) {
    const ti = s.videoTimes[i] as number;
    const e = speech ? fineAt(speech.envelope, ti + lead) : 0;
    const inh = speech ? fineAt(speech.inhale, ti) : 0;
    out[i] = clamp(closed + gain * e ** 0.8 + breathOpen * inh + landmarkSd * rng.normal(), 0, 1);
  }
  return out;
}

interface PulseSource {
  kind: "heart" | "none" | "flicker";
  phase?: Float64Array;
  shape?: (phase: number) => number;
  flickerHz?: number;
}

/** The raw skin signal before the device's band-pass: source + noise + artefacts + illumination. */
function rawPulse(rng: Rng, src: PulseSource, speech: Speech | null, s: Sampling, n: Nuisance, seconds: number): Float64Array {
  const noiseSd = 10 ** (-n.snrDb / 20);
  const out = new Float64Array(s.count);
  // Motion bumps: head movements.
  const bumps: Array<{ t: number; w: number; a: number }> = [];
  const rate = 0.4 * n.motion;
  let t = rate > 0 ? rng.uniform(0, 3) : Infinity;
  while (t < seconds) {
    bumps.push({ t, w: rng.uniform(0.15, 0.8), a: rng.normal() * rng.uniform(0.5, 3) * (0.1 + n.motion) });
    t += -Math.log(Math.max(1e-9, rng.next())) / rate;
  }
  const jaw = 0.6 * n.motion * rng.uniform(0.3, 1);
  const illumHz = rng.uniform(0.02, 0.08);
  const illumPhase = rng.uniform(0, 2 * Math.PI);
  const illumAmp = rng.uniform(0, 4);
  const flickerPhase = rng.uniform(0, 2 * Math.PI);
  for (let i = 0; i < s.count; i++) {
    const ti = s.videoTimes[i] as number;
    let x = 0;
    if (src.kind === "heart" && src.phase && src.shape) x = src.shape(fineAt(src.phase, ti));
    else if (src.kind === "flicker") {
      const f = src.flickerHz ?? 1;
      x = Math.cos(2 * Math.PI * f * ti + flickerPhase) + 0.3 * Math.cos(4 * Math.PI * f * ti + 2 * flickerPhase);
    }
    x += noiseSd * rng.normal();
    for (const b of bumps) {
      const d = (ti - b.t) / b.w;
      if (d > -3 && d < 3) x += b.a * Math.exp(-0.5 * d * d);
    }
    if (speech && jaw > 0) {
      const de = fineAt(speech.envelope, ti + 0.02) - fineAt(speech.envelope, ti - 0.02);
      x += jaw * de * 6;
    }
    x += illumAmp * Math.sin(2 * Math.PI * illumHz * ti + illumPhase);
    out[i] = x;
  }
  return out;
}

/** Options of {@link simulateSession}: full control, used by the benchmark. */
interface SessionOptions {
  person: number;
  attack?: AttackType;
  nuisance: Nuisance;
  nonce: string;
  seconds?: number;
  sampleRateHz?: number;
  seed: number;
  capturedAt?: string;
  /** Nuisance of the attacker (voice for replay and lipsync); drawn from the seed when absent. */
  attackerNuisance?: Nuisance;
  /** The puppet's pulse in a `lipsync` attack; drawn from the seed among absent/drifting/recorded when absent. */
  lipsyncPulse?: LipsyncPulse;
  /** Amplitude of the recording's own pulse seen through the screen, relative to the flicker (default 0.05..0.25). */
  screenPulseLeak?: number;
  /** Rate of the screen's flicker, Hz (default 0.75..2.9). */
  screenFlickerHz?: number;
  /**
   * The nonce-paced reading challenge: the reader (live, or in the recording) follows the
   * cues of challengeSchedule(nonce), and the descriptor declares `schedule: "nonce-v1"`.
   */
  paced?: boolean;
  /** How the bona fide reader follows the cues (paced only); drawn with {@link wildCompliance} when absent. */
  compliance?: PacedCompliance;
  /**
   * The light challenge: the screen lights the face with lightSequence(nonce) under these
   * conditions, and the descriptor is version 2 with `signals.light`. Absent: version 1.
   */
  light?: LightConditions;
  /** How late a `relit_puppet` relights itself after the screen, seconds (default 0.15..0.6). */
  relightDelayS?: number;
}

/**
 * The pulse of a lip-sync puppet: `absent`; `constant` (a synthetic constant rate);
 * `drifting` (synthetic, with slow random rate changes, not breath-locked);
 * `recorded` (lifted from a recording of the victim: real RSA, but locked to another breath).
 */
export type LipsyncPulse = "absent" | "constant" | "drifting" | "recorded";

const DEFAULT_CAPTURED_AT = "2026-01-01T00:00:00.000Z";

/**
 * One simulated capture with explicit physiology and conditions.
 *
 * Attacks (the face is always the victim's, `person`):
 * - `photo`: a still image; no pulse, no mouth motion; the attacker speaks live.
 * - `replay`: a recorded video of the victim (its pulse and mouth), the attacker's live voice.
 * - `lipsync`: a synthetic puppet whose mouth follows the attacker's live voice; the
 *   pulse is absent, taken from a recording, or synthesised at a drifting rate, never
 *   coupled to the live breath.
 * - `screen`: a recording replayed on a screen with its own sound; the screen's
 *   flicker dominates the skin signal at a constant rate.
 */
export function simulateSession(o: SessionOptions): PresenceDescriptor {
  const attack = o.attack ?? "none";
  const seconds = o.seconds ?? 15;
  const fs = o.sampleRateHz ?? 30;
  const n = o.nuisance;
  const rng = createRng(o.seed);
  const profile = personProfile(o.person);
  const sampling = makeSampling(rng, seconds, fs, n);
  const attacker = o.attackerNuisance ?? wildNuisance(createRng(hashSeed(o.seed, "attacker")));

  let pulseRaw: Float64Array;
  let mouth: Float64Array;
  let voice: number[];
  let quality = n.faceQuality;
  let embeddingNoise = n.embeddingNoise;

  const genuine = (): { speech: Speech; src: PulseSource } => {
    const speech = makeSpeech(rng, seconds, n.breathsPerMin, n.syllableRateHz);
    return { speech, src: genuinePulse(rng, seconds, speech.inhale, n) };
  };
  /** A lip-sync puppet: its mouth follows the attacker's live voice; its pulse one of `variants` (unless set). */
  const puppet = (variants: readonly LipsyncPulse[]) => {
    const live = makeSpeech(rng, seconds, attacker.breathsPerMin, attacker.syllableRateHz);
    const variant = o.lipsyncPulse ?? (variants[rng.int(0, variants.length - 1)] as LipsyncPulse);
    // A recorded pulse is lifted from a recording of the victim.
    const src = lipsyncPulse(rng, seconds, live.inhale, variant, () => genuine().src);
    const raw = rawPulse(rng, src, live, sampling, n, seconds);
    const synced: Nuisance = { ...n, avOffsetMs: rng.uniform(-40, 40) };
    return {
      pulseRaw: raw,
      mouth: mouthSeries(rng, live, { ...sampling, videoTimes: sampling.audioTimes.map((t) => t + synced.avOffsetMs / 1000) }, synced),
      voice: voiceSeries(rng, live, sampling, attacker, seconds),
    };
  };

  if (o.paced) {
    const p = pacedSignals(rng, o, attack, sampling, n, attacker, seconds, genuinePaced(rng, o, n, seconds));
    pulseRaw = p.pulseRaw;
    mouth = p.mouth;
    voice = p.voice;
    quality = clamp(quality - p.qualityLoss, 0, 1);
    embeddingNoise *= p.embeddingNoiseFactor;
  } else
    switch (attack) {
      // An earlier capture and an injected video are genuine recordings of the victim with their
      // own sound: their signals are a bona fide capture's; only their light differs.
      case "earlier_capture":
      case "injected":
      case "none": {
        const g = genuine();
        pulseRaw = rawPulse(rng, g.src, g.speech, sampling, n, seconds);
        mouth = mouthSeries(rng, g.speech, sampling, n);
        voice = voiceSeries(rng, g.speech, sampling, n, seconds);
        break;
      }
      case "photo": {
        const live = makeSpeech(rng, seconds, attacker.breathsPerMin, attacker.syllableRateHz);
        pulseRaw = rawPulse(rng, { kind: "none" }, null, sampling, n, seconds);
        mouth = mouthSeries(rng, null, sampling, n);
        voice = voiceSeries(rng, live, sampling, attacker, seconds);
        quality = clamp(quality - rng.uniform(0, 0.1), 0, 1);
        break;
      }
      case "replay": {
        const recorded = genuine();
        const live = makeSpeech(rng, seconds, attacker.breathsPerMin, attacker.syllableRateHz);
        pulseRaw = rawPulse(rng, recorded.src, recorded.speech, sampling, n, seconds);
        mouth = mouthSeries(rng, recorded.speech, sampling, n);
        voice = voiceSeries(rng, live, sampling, attacker, seconds);
        break;
      }
      case "lipsync": {
        ({ pulseRaw, mouth, voice } = puppet(["absent", "drifting", "recorded"]));
        embeddingNoise *= 1.2;
        break;
      }
      case "screen": {
        const recorded = genuine();
        const flicker: PulseSource = { kind: "flicker", flickerHz: o.screenFlickerHz ?? rng.uniform(0.75, 2.9) };
        const flick = rawPulse(rng, flicker, null, sampling, n, seconds);
        // The recording's own pulse survives only weakly through the screen.
        const through = rawPulse(rng, recorded.src, null, sampling, { ...n, snrDb: 40, motion: 0 }, seconds);
        const k = o.screenPulseLeak ?? rng.uniform(0.05, 0.25);
        pulseRaw = flick.map((x, i) => x + k * (through[i] as number));
        mouth = mouthSeries(rng, recorded.speech, sampling, n);
        voice = voiceSeries(rng, recorded.speech, sampling, n, seconds);
        quality = clamp(quality - rng.uniform(0, 0.15), 0, 1);
        break;
      }
      case "relit_puppet": {
        // The relit puppet always carries a pulse.
        ({ pulseRaw, mouth, voice } = puppet(["drifting", "recorded"]));
        embeddingNoise *= 1.2;
        break;
      }
    }

  const light = o.light ? lightOf(o, attack, sampling, n, pulseRaw) : undefined;

  fillDropped(pulseRaw, sampling.valid);
  fillDropped(mouth, sampling.valid);
  const embedding = perturbedUnit(profile.embedding, embeddingNoise, rng);
  return {
    version: light ? 2 : 1,
    capture_nonce: o.nonce,
    captured_at: o.capturedAt ?? DEFAULT_CAPTURED_AT,
    face: {
      model: REFERENCE_FACE_MODEL,
      embedding,
      quality: Math.round(quality * 1000) / 1000,
    },
    signals: {
      sample_rate_hz: fs,
      pulse: finishPulse(pulseRaw, fs),
      mouth: round(mouth, 4, 0, 1),
      voice,
      valid: Array.from(sampling.valid),
      ...(o.paced ? { schedule: SCHEDULE_NONCE_V1 } : {}),
      ...(light ? { light } : {}),
    },
  };
}

/** The sandbox's light challenge: studio light, and a puppet that relights itself at least 0.3 s late (always refused). */
function sandboxLightOptions(seed: number): { light: LightConditions; relightDelayS: number } {
  const rng = createRng(hashSeed(seed, "sandbox-light"));
  return { light: sandboxLight(rng), relightDelayS: rng.uniform(0.3, 0.6) };
}

/** How each attack presents its face to the screen's light. */
function presentationOf(attack: AttackType, o: SessionOptions, rng: Rng): LightPresentation {
  switch (attack) {
    case "none":
    case "photo": // a print held up reflects the screen like a face
      return { kind: "lit", nonce: o.nonce };
    case "replay":
    case "lipsync":
    case "injected":
      return { kind: "unlit" };
    case "screen":
      return { kind: "display", nonce: o.nonce };
    case "earlier_capture":
      return { kind: "lit", nonce: `earlier-${hashSeed(o.seed, "earlier").toString(16)}` };
    case "relit_puppet":
      return { kind: "lit", nonce: o.nonce, delayS: o.relightDelayS ?? rng.uniform(0.15, 0.6) };
  }
}

/**
 * The light series of a v2 session (its own random stream, so that the v1 signals of a seed do
 * not change), resampled as the device does; the reflection the client could not remove from the
 * skin colour leaks into `pulseRaw`.
 */
function lightOf(o: SessionOptions, attack: AttackType, sampling: Sampling, n: Nuisance, pulseRaw: Float64Array): LightSignals {
  const rng = createRng(hashSeed(o.seed, "light"));
  const conditions = o.light as LightConditions;
  const presentation = presentationOf(attack, o, rng);
  const frameTimes = sampling.videoTimes.map((t) => t - n.avOffsetMs / 1000);
  const series = lightSeries(rng, conditions, presentation, frameTimes, sampling.fs, n.motion);
  if (presentation.kind === "lit") {
    const leak = Math.min(2, conditions.pulseResidual * (series.depth / 0.2));
    const mean = series.screenLuminance.reduce((a, b) => a + b, 0) / Math.max(1, sampling.count);
    for (let i = 0; i < sampling.count; i++) pulseRaw[i] = (pulseRaw[i] as number) + leak * ((series.screenLuminance[i] as number) - mean);
  }
  const skin = fillDroppedColours(series.skin, sampling.valid);
  const background = fillDroppedColours(series.background, sampling.valid);
  return { sequence: LIGHT_SEQUENCE_V1, skin, background };
}

function fillDroppedColours(colours: number[][], valid: Uint8Array): number[][] {
  const channels = [0, 1, 2].map((ch) => {
    const x = Float64Array.from(colours, (c) => c[ch] as number);
    fillDropped(x, valid);
    return x;
  });
  return colours.map((_, i) => channels.map((x) => Math.round((x[i] as number) * 100) / 100));
}

type Genuine = (nonce: string, compliance: PacedCompliance) => { speech: Speech; src: PulseSource };

/** A bona fide paced reader of `nonce`'s cues with the victim's physiology. */
function genuinePaced(rng: Rng, _o: SessionOptions, n: Nuisance, seconds: number): Genuine {
  return (nonce, compliance) => {
    const speech = makePacedSpeech(rng, seconds, nonce, n.syllableRateHz, compliance);
    return { speech, src: genuinePulse(rng, seconds, speech.inhale, n) };
  };
}

/**
 * The signals of a paced session. Attacks against the paced protocol (the face is the victim's):
 * - `photo`: a still image; the attacker reads live, following the cues.
 * - `replay`: a recording of the victim reading in another paced session (video and its own
 *   sound): mouth, voice and pulse agree, but follow another nonce's cues.
 * - `lipsync`: a puppet whose mouth follows the attacker, who reads live following the cues;
 *   the pulse is absent, synthetic (drifting rate), or lifted from a recording of the victim in
 *   another paced session.
 * - `screen`: a real-time puppet shown on a screen, mouth synced to the attacker reading live;
 *   the screen's flicker dominates the skin signal at a constant rate, the recording's own pulse
 *   leaks through weakly.
 */
function pacedSignals(
  rng: Rng,
  o: SessionOptions,
  attack: AttackType,
  sampling: Sampling,
  n: Nuisance,
  attacker: Nuisance,
  seconds: number,
  genuine: Genuine,
): { pulseRaw: Float64Array; mouth: Float64Array; voice: number[]; qualityLoss: number; embeddingNoiseFactor: number } {
  const compliance = o.compliance ?? wildCompliance(rng);
  const otherNonce = `recorded-${hashSeed(o.seed, "paced-recording").toString(16)}`;
  const liveReader = (): Speech => makePacedSpeech(rng, seconds, o.nonce, attacker.syllableRateHz, o.compliance ?? wildCompliance(rng));
  const syncedMouth = (live: Speech): Float64Array => {
    const synced: Nuisance = { ...n, avOffsetMs: rng.uniform(-40, 40) };
    return mouthSeries(rng, live, { ...sampling, videoTimes: sampling.audioTimes.map((t) => t + synced.avOffsetMs / 1000) }, synced);
  };
  switch (attack) {
    case "none": {
      const g = genuine(o.nonce, compliance);
      return {
        pulseRaw: rawPulse(rng, g.src, g.speech, sampling, n, seconds),
        mouth: mouthSeries(rng, g.speech, sampling, n),
        voice: voiceSeries(rng, g.speech, sampling, n, seconds),
        qualityLoss: 0,
        embeddingNoiseFactor: 1,
      };
    }
    case "photo": {
      const live = liveReader();
      return {
        pulseRaw: rawPulse(rng, { kind: "none" }, null, sampling, n, seconds),
        mouth: mouthSeries(rng, null, sampling, n),
        voice: voiceSeries(rng, live, sampling, attacker, seconds),
        qualityLoss: rng.uniform(0, 0.1),
        embeddingNoiseFactor: 1,
      };
    }
    case "replay": {
      const recorded = genuine(otherNonce, compliance);
      return {
        pulseRaw: rawPulse(rng, recorded.src, recorded.speech, sampling, n, seconds),
        mouth: mouthSeries(rng, recorded.speech, sampling, n),
        voice: voiceSeries(rng, recorded.speech, sampling, n, seconds),
        qualityLoss: 0,
        embeddingNoiseFactor: 1,
      };
    }
    case "lipsync": {
      const live = liveReader();
      const variant = o.lipsyncPulse ?? (["absent", "drifting", "recorded"] as const)[rng.int(0, 2)];
      const src = lipsyncPulse(rng, seconds, live.inhale, variant, () => genuine(otherNonce, compliance).src);
      return {
        pulseRaw: rawPulse(rng, src, live, sampling, n, seconds),
        mouth: syncedMouth(live),
        voice: voiceSeries(rng, live, sampling, attacker, seconds),
        qualityLoss: 0,
        embeddingNoiseFactor: 1.2,
      };
    }
    case "screen": {
      const live = liveReader();
      const recorded = genuine(otherNonce, compliance);
      const flicker: PulseSource = { kind: "flicker", flickerHz: o.screenFlickerHz ?? rng.uniform(0.75, 2.9) };
      const flick = rawPulse(rng, flicker, null, sampling, n, seconds);
      const through = rawPulse(rng, recorded.src, null, sampling, { ...n, snrDb: 40, motion: 0 }, seconds);
      const k = o.screenPulseLeak ?? rng.uniform(0.05, 0.25);
      return {
        pulseRaw: flick.map((x, i) => x + k * (through[i] as number)),
        mouth: syncedMouth(live),
        voice: voiceSeries(rng, live, sampling, attacker, seconds),
        qualityLoss: rng.uniform(0, 0.15),
        embeddingNoiseFactor: 1,
      };
    }
    default:
      throw new RangeError(`the paced reading has no ${attack} attack`);
  }
}

/** The noise-free heart and breath behind a session (see {@link simulatePhysiology}). */
interface PhysiologyTruth {
  /** Times of the heartbeats the camera looks at, seconds from the start of the capture. */
  beats: number[];
  /** 1 while the live reader breathes in, per sample at `sampleRateHz`. */
  inhale: Float64Array;
}

/**
 * The heart and breath behind a free-reading session, with no camera, microphone or
 * device in between: what a perfect sensor would measure. The benchmark's oracle bound
 * feeds them to the engine's statistic. `pulse` is whose heart the camera looks at: the
 * live reader's (`live`: bona fide, with `nuisance`), or, while the attacker (with
 * `attackerNuisance`) reads live, the victim's from a recording of another reading
 * (`recorded`), or a synthetic heart at a drifting rate (`drifting`).
 */
export function simulatePhysiology(o: {
  pulse: "live" | "recorded" | "drifting";
  nuisance: Nuisance;
  attackerNuisance: Nuisance;
  seconds: number;
  sampleRateHz: number;
  seed: number;
}): PhysiologyTruth {
  const rng = createRng(o.seed);
  const reader = o.pulse === "live" ? o.nuisance : o.attackerNuisance;
  const live = makeSpeech(rng, o.seconds, reader.breathsPerMin, reader.syllableRateHz);
  const recorded = (): PulseSource => {
    const victim = makeSpeech(rng, o.seconds, o.nuisance.breathsPerMin, o.nuisance.syllableRateHz);
    return genuinePulse(rng, o.seconds, victim.inhale, o.nuisance);
  };
  const src =
    o.pulse === "live"
      ? genuinePulse(rng, o.seconds, live.inhale, o.nuisance)
      : lipsyncPulse(rng, o.seconds, live.inhale, o.pulse, recorded);
  const phase = src.phase ?? new Float64Array(0);
  const beats: number[] = [];
  for (let i = 1; i < phase.length; i++) {
    const a = phase[i - 1] as number;
    const b = phase[i] as number;
    if (Math.floor(b) > Math.floor(a)) {
      const t = (i - 1 + (Math.floor(b) - a) / (b - a)) / FINE_HZ - LEAD_S;
      if (t >= 0 && t <= o.seconds) beats.push(t);
    }
  }
  const count = Math.round(o.seconds * o.sampleRateHz);
  const inhale = new Float64Array(count);
  for (let i = 0; i < count; i++) inhale[i] = fineAt(live.inhale, i / o.sampleRateHz);
  return { beats, inhale };
}

/** Options of {@link simulateCapture}. */
interface CaptureOptions {
  /** Sandbox test person, 1..1000. */
  person: number;
  attack?: AttackType;
  /** The request's capture nonce (8..128 printable ASCII); derived from the seed when absent. */
  nonce?: string;
  /** Capture length, 5..30 seconds (default 15). */
  seconds?: number;
  /** Samples per second, 10..60 (default 30). */
  sampleRateHz?: number;
  /** Any integer; derived from the other options (not `capturedAt`) when absent, so equal options give equal signals. */
  seed?: number;
  /** ISO time of the first sample (default 2026-01-01T00:00:00.000Z). */
  capturedAt?: string;
  /** `coerced`: heart rate 45-55 bpm above the person's rest, RSA cut to about a third (at least 3.5 bpm), faster breathing. */
  state?: SubjectState;
  /**
   * The nonce-paced reading challenge: the reader follows challengeSchedule(nonce) and the
   * descriptor declares `signals.schedule: "nonce-v1"` (default false: a free reading).
   */
  paced?: boolean;
  /**
   * The light challenge: the screen lights the face with lightSequence(nonce) in studio conditions
   * and the descriptor is version 2 (default false: version 1). The attacks `earlier_capture`,
   * `injected` and `relit_puppet` need it.
   */
  light?: boolean;
}

/**
 * A sandbox capture of test person `person` under good conditions, optionally an attack.
 *
 * @example
 * const d = simulateCapture({ person: 7, attack: 'replay', nonce: 'abcdefgh', seconds: 15 });
 * evaluatePresence(d).liveness.reason // 'av_desync'
 */
export function simulateCapture(opts: CaptureOptions): PresenceDescriptor {
  assertPerson(opts.person);
  const attack = opts.attack ?? "none";
  if (!["none", ...LIGHT_ATTACK_TYPES].includes(attack)) throw new RangeError(`unknown attack: ${String(attack)}`);
  if (!opts.light && !["none", ...ATTACK_TYPES].includes(attack)) throw new RangeError(`the ${attack} attack needs the light challenge`);
  const seconds = opts.seconds ?? 15;
  if (!(seconds >= DESCRIPTOR_LIMITS.minSeconds && seconds <= DESCRIPTOR_LIMITS.maxSeconds)) {
    throw new RangeError(`seconds must be ${DESCRIPTOR_LIMITS.minSeconds} to ${DESCRIPTOR_LIMITS.maxSeconds}`);
  }
  const fs = opts.sampleRateHz ?? 30;
  if (!(fs >= DESCRIPTOR_LIMITS.sampleRateMinHz && fs <= DESCRIPTOR_LIMITS.sampleRateMaxHz)) {
    throw new RangeError(`sampleRateHz must be ${DESCRIPTOR_LIMITS.sampleRateMinHz} to ${DESCRIPTOR_LIMITS.sampleRateMaxHz}`);
  }
  if (
    opts.nonce !== undefined &&
    !(
      opts.nonce.length >= DESCRIPTOR_LIMITS.nonceMinLength &&
      opts.nonce.length <= DESCRIPTOR_LIMITS.nonceMaxLength &&
      /^[\x21-\x7e]+$/.test(opts.nonce)
    )
  ) {
    throw new RangeError("nonce must be 8 to 128 printable ASCII characters without spaces");
  }
  if (opts.capturedAt !== undefined && !Number.isFinite(Date.parse(opts.capturedAt))) {
    throw new RangeError("capturedAt must be an ISO 8601 time");
  }
  const state = opts.state ?? "calm";
  const paced = opts.paced === true;
  const seed =
    opts.seed ??
    (paced
      ? hashSeed("presence-sim/capture", opts.person, attack, opts.nonce ?? "", seconds, fs, state, "paced")
      : hashSeed("presence-sim/capture", opts.person, attack, opts.nonce ?? "", seconds, fs, state));
  const nonce = opts.nonce ?? `sim-${seed.toString(16).padStart(8, "0")}`;
  const rng = createRng(hashSeed(seed, "nuisance"));
  const profile = personProfile(opts.person);
  const nuisance = sandboxNuisance(profile, rng, state);
  const attackerPerson = ((opts.person + 499) % SANDBOX_PERSONS) + 1;
  const attackerNuisance = sandboxNuisance(personProfile(attackerPerson), rng);
  return simulateSession({
    person: opts.person,
    attack,
    nuisance,
    attackerNuisance,
    // The sandbox puppet is the textbook one: no pulse, or a synthetic constant rate.
    lipsyncPulse: rng.next() < 0.5 ? "absent" : "constant",
    // The sandbox screen shows only its flicker, at a resting-pulse-like rate.
    screenPulseLeak: 0,
    screenFlickerHz: rng.uniform(0.8, 1.8),
    nonce,
    seconds,
    sampleRateHz: fs,
    seed,
    ...(opts.capturedAt !== undefined ? { capturedAt: opts.capturedAt } : {}),
    ...(paced ? { paced: true, compliance: sandboxCompliance(rng) } : {}),
    ...(opts.light ? sandboxLightOptions(seed) : {}),
  });
}
