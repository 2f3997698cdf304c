/**
 * The continuous-time model of the person in front of the camera, evaluated on a fine grid: a
 * speaker reads aloud in breath groups (a short inhalation pause, then speech on the exhalation),
 * freely or following the paced cues; the heart rate rises after each inhalation and falls during
 * speech (respiratory sinus arrhythmia); a puppet's heart, when it has one, does not follow the
 * live breath.
 */
import { createRng, type Rng } from "../engine/rng.js";
import { scheduleTenths } from "../engine/schedule.js";
import type { Nuisance } from "./nuisance.js";

export function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

const FINE_HZ = 240;
const LEAD_S = 4; // the fine grid starts this long before the capture (filters settle)

export interface Speech {
  /** 1 during an inhalation pause, on the fine grid. */
  inhale: Float64Array;
  /** Syllabic speech envelope 0..1, on the fine grid. */
  envelope: Float64Array;
}

function fineLength(seconds: number): number {
  return Math.ceil((seconds + LEAD_S + 2) * FINE_HZ);
}

/** `x` (on the fine grid) at time `t`, seconds from the start of the capture, interpolated. */
export function fineAt(x: Float64Array, t: number): number {
  const pos = (t + LEAD_S) * FINE_HZ;
  const i = Math.floor(pos);
  if (i < 0) return x[0] as number;
  if (i >= x.length - 1) return x[x.length - 1] as number;
  const f = pos - i;
  return (x[i] as number) * (1 - f) + (x[i + 1] as number) * f;
}

/** Breath groups: inhalation pause, then syllables on the exhalation. */
export function makeSpeech(rng: Rng, seconds: number, breathsPerMin: number, syllableRateHz: number): Speech {
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
export interface PacedCompliance {
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
export function wildCompliance(rng: Rng): PacedCompliance {
  return {
    reactionS: rng.uniform(0.2, 0.8),
    reactionSdS: rng.uniform(0.05, 0.25),
    skipProb: rng.uniform(0, 0.2),
    lateStartS: rng.next() < 0.3 ? rng.uniform(0.3, 2) : 0,
    catchBreathProb: rng.uniform(0, 0.15),
  };
}

/** Compliance of sandbox readers: prompt, every cue followed. */
export function sandboxCompliance(rng: Rng): PacedCompliance {
  return { reactionS: rng.uniform(0.25, 0.5), reactionSdS: 0.05, skipProb: 0, lateStartS: 0, catchBreathProb: 0 };
}

/** A live heart with the person's physiology, its rate coupled to their breathing (RSA). */
export function genuinePulse(rng: Rng, seconds: number, inhale: Float64Array, n: Nuisance): PulseSource {
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
export function lipsyncPulse(
  rng: Rng,
  seconds: number,
  inhale: Float64Array,
  variant: LipsyncPulse,
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
export function makePacedSpeech(rng: Rng, seconds: number, nonce: string, syllableRateHz: number, c: PacedCompliance): Speech {
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

/** What the camera sees pulse in the skin: a heart (its phase and waveform), nothing, or a screen's flicker. */
export interface PulseSource {
  kind: "heart" | "none" | "flicker";
  phase?: Float64Array;
  shape?: (phase: number) => number;
  flickerHz?: number;
}

/**
 * The pulse of a lip-sync puppet: `absent`; `constant` (a synthetic constant rate);
 * `drifting` (synthetic, with slow random rate changes, not breath-locked);
 * `recorded` (lifted from a recording of the victim: real RSA, but locked to another breath).
 */
export type LipsyncPulse = "absent" | "constant" | "drifting" | "recorded";

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
