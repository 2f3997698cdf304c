/**
 * The sandbox's captures: a test person under good conditions, optionally an attack, so that
 * sandbox answers are dependable (a bona fide capture passes, an attack is refused).
 */
import { DESCRIPTOR_LIMITS, type PresenceDescriptor } from "../engine/descriptor.js";
import { createRng, hashSeed } from "../engine/rng.js";
import { type LightConditions, sandboxLight } from "./light.js";
import { type SubjectState, sandboxNuisance } from "./nuisance.js";
import { assertPerson, personProfile, SANDBOX_PERSONS } from "./persons.js";
import { sandboxCompliance } from "./physiology.js";
import { ATTACK_TYPES, type AttackType, LIGHT_ATTACK_TYPES, simulateSession } from "./session.js";

/** The sandbox's light challenge: studio light, and a puppet that relights itself at least 0.3 s late (always refused). */
function sandboxLightOptions(seed: number): { light: LightConditions; relightDelayS: number } {
  const rng = createRng(hashSeed(seed, "sandbox-light"));
  return { light: sandboxLight(rng), relightDelayS: rng.uniform(0.3, 0.6) };
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
  /**
   * A face-only capture (D-428): the person looks at the screen and says nothing (the voice is
   * silent); needs the light challenge, which is what proves presence without a voice.
   */
  faceOnly?: boolean;
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
  if (opts.faceOnly && !opts.light) throw new RangeError("a face-only capture needs the light challenge");
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
  const descriptor = simulateSession({
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
  if (!opts.faceOnly) return descriptor;
  return { ...descriptor, signals: { ...descriptor.signals, voice: descriptor.signals.voice.map(() => 0) } };
}
