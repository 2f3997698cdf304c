/**
 * The presence engine: judges descriptors v1 and v2 (see docs/presence-descriptor.md).
 * Pure and deterministic: no I/O, no clock unless `now` is passed, no randomness.
 *
 * @example
 * const parsed = parseDescriptor(body.face_template);
 * if (!parsed.ok) return invalidInput(parsed.fields);
 * const result = evaluatePresence(parsed.descriptor, { baseline, expectedNonce: body.capture_nonce });
 * if (!result.accepted) return refuse(result.reason);
 */
import {
  type AvSyncCheck,
  analyseSpeech,
  beatSeries,
  type CouplingCheck,
  checkAvSync,
  checkCoupling,
  checkPulse,
  checkQuality,
  checkSpeech,
  marginScore,
  type PulseCheck,
  type QualityCheck,
  round,
  type SpeechCheck,
} from "./checks.js";
import { type PresenceConfig, presenceConfig } from "./config.js";
import type { PresenceDescriptor } from "./descriptor.js";
import { checkPacedCoupling, checkScheduleFollowed, type PacedCouplingCheck, type ScheduleCheck } from "./paced.js";
import { checkLight, type LightCheck } from "./reflection.js";

export type { AvSyncCheck, CouplingCheck, PulseCheck, QualityCheck, SpeechCheck } from "./checks.js";
export { type PresenceConfig, presenceConfig } from "./config.js";
export {
  DESCRIPTOR_LIMITS,
  DESCRIPTOR_VERSIONS,
  type LightSignals,
  type ParseDescriptorResult,
  type PresenceDescriptor,
  parseDescriptor,
  presenceDescriptorSchema,
  REFERENCE_FACE_MODEL,
} from "./descriptor.js";
export { cosineSimilarity } from "./dsp.js";
export { expectedLight, LIGHT_CHIP_SECONDS, LIGHT_PALETTE, LIGHT_SEQUENCE_V1, lightSequence } from "./light.js";
export type { PacedCouplingCheck, ScheduleCheck } from "./paced.js";
export {
  encodeProof,
  MAX_PROOF_LENGTH,
  PROOF_PREFIX,
  PROOF_V2_PREFIX,
  type PresenceProof,
  type ProofConsent,
  type ProofDevice,
  parseProof,
} from "./proof.js";
export type { LightCheck } from "./reflection.js";
export {
  type ChallengeSchedule,
  challengeSchedule,
  SCHEDULE_LIMITS,
  SCHEDULE_NONCE_V1,
  type ScheduleSegment,
} from "./schedule.js";

/** Version of the engine's scoring; recorded with results so that scores stay comparable. */
export const ENGINE_VERSION = "presence-1";

/** Why liveness failed (the first failing check, in this order). */
type LivenessReason =
  | "low_quality"
  | "no_speech"
  | "no_pulse"
  | "av_desync"
  | "light_not_followed"
  | "schedule_not_followed"
  | "pulse_speech_uncoupled";
/** Every refusal reason `evaluatePresence` can return. */
type PresenceReason = "nonce_mismatch" | "capture_stale" | LivenessReason | "coercion_detected";

/** Every reason, in precedence order. */
export const PRESENCE_REASONS: readonly PresenceReason[] = [
  "nonce_mismatch",
  "capture_stale",
  "low_quality",
  "no_speech",
  "light_not_followed",
  "no_pulse",
  "av_desync",
  "schedule_not_followed",
  "pulse_speech_uncoupled",
  "coercion_detected",
];

/** An identity's physiological baseline, taken from earlier accepted captures. */
export interface PresenceBaseline {
  /** Resting heart rate while reading aloud, bpm. */
  heart_rate_bpm: number;
  /** Beat-to-beat heart-rate variability (standard deviation), bpm. */
  hr_variability_bpm: number;
}

/**
 * What the capture must prove beyond the face (D-428): `face_voice` (the default), speech coupled
 * with the pulse the camera reads; `face`, no voice at all: the face's own evidence, its quality,
 * its pulse and the reflection of the nonce's light sequence, which is then required.
 */
export type PresenceModality = "face_voice" | "face";

/** Options of {@link evaluatePresence}. */
interface EvaluateOptions {
  /** Default `face_voice`. */
  modality?: PresenceModality;
  /** The identity's baseline, when one exists; enables the coercion signal. */
  baseline?: PresenceBaseline | null;
  /** When given, a descriptor whose `capture_nonce` differs is refused with `nonce_mismatch`. */
  expectedNonce?: string;
  /** When given, a capture older than `maxAgeSeconds` (or more than 30 s in the future) is `capture_stale`. */
  now?: Date | number | string;
  /** Default 300 seconds. */
  maxAgeSeconds?: number;
  /** Override the thresholds (tests and the benchmark's sweep). */
  config?: PresenceConfig;
}

/** The engine's verdict on one descriptor. */
export interface PresenceResult {
  /** Liveness passed, no coercion signal, nonce and age acceptable. */
  accepted: boolean;
  /** The first refusal reason, or null when accepted. */
  reason: PresenceReason | null;
  liveness: {
    passed: boolean;
    /** The lowest check score: 0.5 is the pass boundary, towards 1 is a clear pass. */
    score: number;
    reason: LivenessReason | null;
    checks: {
      quality: QualityCheck;
      speech: SpeechCheck;
      pulse: PulseCheck;
      av_sync: AvSyncCheck;
      /**
       * The heart rate follows the breath pauses. A gate in version 1; in version 2, where the
       * light check proves the capture is live, reported only (an input of the assurance).
       */
      pulse_speech_coupling: CouplingCheck;
      /** Version 2 only: the skin's reflected colour follows the nonce's light sequence. */
      light?: LightCheck;
      /** Paced descriptors only: the voice follows the nonce's speak/pause cues. */
      schedule?: ScheduleCheck;
      /**
       * Paced descriptors only: the heart rate follows the cues. It replaces
       * `pulse_speech_coupling` in the verdict (which is still computed and reported).
       */
      pulse_schedule_coupling?: PacedCouplingCheck;
    };
  };
  coercion: {
    /** True only with a baseline, when heart rate is well above it and variability has collapsed. */
    signal: boolean;
    /** 0..1; 0.5 is the signal boundary. 0 without a baseline. */
    score: number;
    reason: "coercion_detected" | null;
    basis: "baseline" | "none";
    heart_rate_rise_bpm: number | null;
    variability_ratio: number | null;
  };
  /** Heart rate at the spectral peak when a pulse is present, else null. */
  heart_rate_bpm: number | null;
  /** Plain numbers the platform may use to derive an assurance level. */
  assurance_inputs: {
    engine: string;
    liveness_score: number;
    face_model: string;
    face_quality: number;
    valid_fraction: number;
    pulse_snr_db: number;
    av_correlation: number;
    coupling_correlation: number;
    hr_variability_bpm: number;
    rsa_bpm: number;
    seconds: number;
    sample_rate_hz: number;
    baseline_used: boolean;
    /** `free` reading, or the paced schedule the descriptor declared (`nonce-v1`). */
    protocol: "free" | "nonce-v1";
    /** Paced only: z-scores of the voice and of the heart rate against other nonces' schedules. */
    schedule_z?: number;
    pulse_schedule_z?: number;
    /** Version 2 only: the light sequence, and the fit, lag (ms) and strength of its reflection. */
    light_sequence?: "light-v1";
    light_correlation?: number;
    light_lag_ms?: number;
    light_depth?: number;
  };
}

function toMillis(t: Date | number | string): number {
  if (t instanceof Date) return t.getTime();
  if (typeof t === "number") return t;
  return Date.parse(t);
}

/**
 * Judges one validated descriptor: liveness from the named checks, the coercion
 * signal against an optional baseline, the heart rate and the assurance inputs.
 * Never throws for a descriptor accepted by `parseDescriptor`.
 */
export function evaluatePresence(descriptor: PresenceDescriptor, options: EvaluateOptions = {}): PresenceResult {
  const cfg = options.config ?? presenceConfig;
  const { signals, face } = descriptor;
  const fs = signals.sample_rate_hz;

  const quality = checkQuality(face.quality, signals.valid, cfg);
  // Is there speech at all (voice alone)? Then the breath pauses, with the mouth keeping room noise out.
  const speech = checkSpeech(analyseSpeech(signals.voice, fs, cfg), cfg);
  const speechAnalysis = analyseSpeech(signals.voice, fs, cfg, signals.mouth);
  const pulse = checkPulse(signals.pulse, fs, cfg);
  const avSync = checkAvSync(signals.mouth, signals.voice, fs, cfg);
  const hrHz = pulse.passed ? pulse.heart_rate_bpm / 60 : 0;
  const coupling = checkCoupling(signals.pulse, speechAnalysis, fs, hrHz, cfg);
  const paced = signals.schedule === "nonce-v1";
  const schedule = paced ? checkScheduleFollowed(signals.voice, fs, descriptor.capture_nonce, cfg, speechAnalysis) : undefined;
  const pacedCoupling = paced
    ? checkPacedCoupling(
        hrHz > 0 ? beatSeries(signals.pulse, fs, hrHz, cfg) : null,
        signals.pulse.length,
        fs,
        descriptor.capture_nonce,
        cfg,
      )
    : undefined;

  // Version 2: the reflection of the light challenge proves the face is in front of this screen now.
  const light = descriptor.version === 2 && signals.light ? checkLight(signals.light, descriptor.capture_nonce, fs, cfg) : undefined;

  let livenessReason: LivenessReason | null = null;
  const faceOnly = options.modality === "face";
  if (faceOnly) {
    // Face only: the light's reflection is what shows the face is in front of this screen now (a pulse alone replays).
    if (!quality.passed) livenessReason = "low_quality";
    else if (!light?.passed) livenessReason = "light_not_followed";
    else if (!pulse.passed) livenessReason = "no_pulse";
  } else if (!quality.passed) livenessReason = "low_quality";
  else if (!speech.passed) livenessReason = "no_speech";
  // Before the pulse: a v2 pulse is taken with the reflection of the nonce's sequence removed, so
  // where the skin did not follow that sequence the pulse is no evidence either way.
  else if (light && !light.passed) livenessReason = "light_not_followed";
  else if (!pulse.passed) livenessReason = "no_pulse";
  else if (!avSync.passed) livenessReason = "av_desync";
  else if (schedule && !schedule.passed) livenessReason = "schedule_not_followed";
  else if (light) {
    // The heart rate's lock to the breath is no gate with the light challenge (docs/benchmarks.md).
  } else if (pacedCoupling) {
    if (!pacedCoupling.passed) {
      livenessReason = pacedCoupling.beat_noise_bpm > cfg.coupling.maxBeatNoiseBpm ? "low_quality" : "pulse_speech_uncoupled";
    }
  } else if (!coupling.passed) {
    // Beat timing too noisy to see a breath-locked swing: ask for better light, not a retry as is.
    livenessReason = coupling.beat_noise_bpm > cfg.coupling.maxBeatNoiseBpm ? "low_quality" : "pulse_speech_uncoupled";
  }
  const gates = faceOnly ? [quality.score, pulse.score, light?.score ?? 0] : [quality.score, speech.score, pulse.score, avSync.score];
  if (!faceOnly && light) gates.push(light.score);
  if (!faceOnly && schedule) gates.push(schedule.score);
  if (!faceOnly && !light) gates.push(pacedCoupling ? pacedCoupling.score : coupling.score);
  const livenessScore = Math.min(...gates);

  const heartRate = pulse.passed ? pulse.heart_rate_bpm : null;

  // Coercion: only against a baseline, only when the pulse could be read.
  const baseline = options.baseline ?? null;
  let coercion: PresenceResult["coercion"] = {
    signal: false,
    score: 0,
    reason: null,
    basis: baseline ? "baseline" : "none",
    heart_rate_rise_bpm: null,
    variability_ratio: null,
  };
  if (
    baseline &&
    heartRate !== null &&
    coupling.beats >= cfg.coupling.minBeats &&
    Number.isFinite(baseline.heart_rate_bpm) &&
    Number.isFinite(baseline.hr_variability_bpm)
  ) {
    const c = cfg.coercion;
    const rise = heartRate - baseline.heart_rate_bpm;
    const ratio = coupling.hr_variability_bpm / Math.max(0.5, baseline.hr_variability_bpm);
    // The higher the rise, the less collapse is needed (up to a cap).
    const allowedRatio = Math.min(
      c.maxVariabilityRatioCap,
      c.maxVariabilityRatio + c.variabilityRatioPerBpm * Math.max(0, rise - c.minHrRiseBpm),
    );
    const signal = rise >= c.minHrRiseBpm && ratio <= allowedRatio;
    const score = Math.min(marginScore(rise, c.minHrRiseBpm, 5), marginScore(allowedRatio - ratio, 0, 0.1));
    coercion = {
      signal,
      score: round(score, 4),
      reason: signal ? "coercion_detected" : null,
      basis: "baseline",
      heart_rate_rise_bpm: round(rise, 1),
      variability_ratio: round(ratio),
    };
  }

  let reason: PresenceReason | null = null;
  if (options.expectedNonce !== undefined && options.expectedNonce !== descriptor.capture_nonce) reason = "nonce_mismatch";
  else if (options.now !== undefined) {
    const age = (toMillis(options.now) - Date.parse(descriptor.captured_at)) / 1000;
    const maxAge = options.maxAgeSeconds ?? 300;
    if (!Number.isFinite(age) || age > maxAge || age < -30) reason = "capture_stale";
  }
  if (reason === null) reason = livenessReason ?? (coercion.signal ? "coercion_detected" : null);

  return {
    accepted: reason === null,
    reason,
    liveness: {
      passed: livenessReason === null,
      score: round(livenessScore, 4),
      reason: livenessReason,
      checks: {
        quality,
        speech,
        pulse,
        av_sync: avSync,
        pulse_speech_coupling: coupling,
        ...(light ? { light } : {}),
        ...(schedule ? { schedule } : {}),
        ...(pacedCoupling ? { pulse_schedule_coupling: pacedCoupling } : {}),
      },
    },
    coercion,
    heart_rate_bpm: heartRate,
    assurance_inputs: {
      engine: ENGINE_VERSION,
      liveness_score: round(livenessScore, 4),
      face_model: face.model,
      face_quality: quality.face_quality,
      valid_fraction: quality.valid_fraction,
      pulse_snr_db: pulse.snr_db,
      av_correlation: avSync.correlation,
      coupling_correlation: coupling.correlation,
      hr_variability_bpm: coupling.hr_variability_bpm,
      rsa_bpm: coupling.rsa_bpm,
      seconds: round(signals.pulse.length / fs, 2),
      sample_rate_hz: fs,
      baseline_used: coercion.basis === "baseline",
      protocol: paced ? "nonce-v1" : "free",
      ...(schedule ? { schedule_z: schedule.z } : {}),
      ...(pacedCoupling ? { pulse_schedule_z: pacedCoupling.z } : {}),
      ...(light
        ? {
            light_sequence: "light-v1" as const,
            light_correlation: light.correlation,
            light_lag_ms: light.lag_ms,
            light_depth: light.depth,
          }
        : {}),
    },
  };
}

/**
 * The baseline to store for an identity from an accepted evaluation (enrolment),
 * or null when the capture gave no usable pulse.
 *
 * @example
 * const baseline = baselineFromResult(evaluatePresence(enrollmentDescriptor));
 */
export function baselineFromResult(result: PresenceResult): PresenceBaseline | null {
  if (!result.liveness.passed || result.heart_rate_bpm === null) return null;
  return {
    heart_rate_bpm: result.heart_rate_bpm,
    hr_variability_bpm: result.liveness.checks.pulse_speech_coupling.hr_variability_bpm,
  };
}
