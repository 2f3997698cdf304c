/**
 * What varies from session to session: the physiology of the moment and the capture conditions
 * (light, motion, camera, room). Three populations: the sandbox's (dependable answers), the wild
 * and the controlled (what the benchmark measures error rates over).
 */
import type { Rng } from "../engine/rng.js";
import type { PersonProfile } from "./persons.js";

/** `coerced`: acute arousal (heart rate well above rest, variability collapsed). */
export type SubjectState = "calm" | "coerced";

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

/**
 * Sandbox conditions for a person: studio light, little motion, a quiet room,
 * a calm reader with clear breathing. Used by {@link simulateCapture} so that
 * sandbox answers are dependable (a bona fide capture passes, an attack is
 * refused); real-world error rates are what the benchmark measures with
 * {@link wildNuisance}.
 */
export function sandboxNuisance(profile: PersonProfile, rng: Rng, state: SubjectState = "calm"): Nuisance {
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
    embeddingNoise: 0.0085,
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
    embeddingNoise: 0.011,
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
