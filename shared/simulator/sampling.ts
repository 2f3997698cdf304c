/**
 * What the device sees and sends: the camera's and the microphone's clocks (jitter, dropped
 * frames, the audio/video offset), the skin signal, the mouth and the voice as the device computes
 * them from the model, and the device's resampling of the camera series onto the uniform clock.
 */
import type { Rng } from "../engine/rng.js";
import type { Nuisance } from "./nuisance.js";
import { clamp, fineAt, type PulseSource, type Speech } from "./physiology.js";

export interface Sampling {
  fs: number;
  count: number;
  /** Camera sample times (s), with jitter and the audio/video offset. */
  videoTimes: Float64Array;
  /** Microphone sample times (s): the reference clock. */
  audioTimes: Float64Array;
  /** 0 where the camera frame was dropped (the device interpolates). */
  valid: Uint8Array;
}

export function makeSampling(rng: Rng, seconds: number, fs: number, n: Nuisance): Sampling {
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
export function fillDropped(x: Float64Array, valid: Uint8Array): void {
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

/** A series clamped to [lo, hi] and rounded to `digits` decimals, as the device serialises it. */
export function roundSeries(xs: ArrayLike<number>, digits: number, lo: number, hi: number): number[] {
  const f = 10 ** digits;
  const out = new Array<number>(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = Math.round(clamp(xs[i] as number, lo, hi) * f) / f;
  return out;
}

/** Voice envelope as the device computes it: RMS level mapped from [-60, 0] dBFS to [0, 1]. */
export function voiceSeries(rng: Rng, speech: Speech | null, s: Sampling, n: Nuisance, seconds: number): number[] {
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
export function mouthSeries(rng: Rng, speech: Speech | null, s: Sampling, n: Nuisance, gain = n.mouthGain): Float64Array {
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

/** The raw skin signal before the device's band-pass: source + noise + artefacts + illumination. */
export function rawPulse(rng: Rng, src: PulseSource, speech: Speech | null, s: Sampling, n: Nuisance, seconds: number): Float64Array {
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

/** {@link fillDropped} for each channel of a colour series, rounded to 2 decimals. */
export function fillDroppedColours(colours: number[][], valid: Uint8Array): number[][] {
  const channels = [0, 1, 2].map((ch) => {
    const x = Float64Array.from(colours, (c) => c[ch] as number);
    fillDropped(x, valid);
    return x;
  });
  return colours.map((_, i) => channels.map((x) => Math.round((x[i] as number) * 100) / 100));
}
