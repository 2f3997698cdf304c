/**
 * One simulated session with explicit physiology and conditions (what the benchmark draws), bona
 * fide or an attack, free or paced reading, descriptor v1 or v2 (the light challenge): the model's
 * signals as the device samples them, assembled into a descriptor.
 */
import { type LightSignals, type PresenceDescriptor, REFERENCE_FACE_MODEL } from "../engine/descriptor.js";
import { finishPulse } from "../engine/dsp.js";
import { LIGHT_SEQUENCE_V1 } from "../engine/light.js";
import { createRng, hashSeed, type Rng } from "../engine/rng.js";
import { SCHEDULE_NONCE_V1 } from "../engine/schedule.js";
import { type LightConditions, type LightPresentation, lightSeries } from "./light.js";
import { type Nuisance, wildNuisance } from "./nuisance.js";
import { personProfile, perturbedUnit } from "./persons.js";
import {
  clamp,
  genuinePulse,
  type LipsyncPulse,
  lipsyncPulse,
  makePacedSpeech,
  makeSpeech,
  type PacedCompliance,
  type PulseSource,
  type Speech,
  wildCompliance,
} from "./physiology.js";
import {
  fillDropped,
  fillDroppedColours,
  makeSampling,
  mouthSeries,
  rawPulse,
  roundSeries,
  type Sampling,
  voiceSeries,
} from "./sampling.js";

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

/** Options of {@link simulateSession}: full control, used by the benchmark. */
export interface SessionOptions {
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
      mouth: roundSeries(mouth, 4, 0, 1),
      voice,
      valid: Array.from(sampling.valid),
      ...(o.paced ? { schedule: SCHEDULE_NONCE_V1 } : {}),
      ...(light ? { light } : {}),
    },
  };
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
