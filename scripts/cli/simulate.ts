/**
 * `simulate`: sandbox test persons and simulated presence descriptors (no database).
 *
 * @example
 * npm run --silent cli -- simulate capture --person 7 --attack replay --nonce abcdefgh --seconds 15 --json
 * npm run --silent cli -- simulate person --person 7 --json
 */
import { DESCRIPTOR_LIMITS } from "../../shared/engine/descriptor";
import {
  ATTACK_TYPES,
  type AttackType,
  LIGHT_ATTACK_TYPES,
  personProfile,
  SANDBOX_PERSONS,
  type SubjectState,
  simulateCapture,
} from "../../shared/simulator";

type Flags = Record<string, string | boolean>;

/** A bad argument: the dispatcher prints the message on stderr and exits 2. */
function bad(message: string): Error {
  return Object.assign(new Error(message), { exitCode: 2 });
}

function text(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") throw bad(`--${name} needs a value`);
  return value.trim();
}

function integer(flags: Flags, name: string, min: number, max: number, fallback?: number): number {
  const raw = text(flags, name);
  if (raw === undefined) {
    if (fallback === undefined) throw bad(`--${name} <${min}..${max}> is required`);
    return fallback;
  }
  if (!/^-?\d+$/.test(raw)) throw bad(`--${name} must be an integer from ${min} to ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw bad(`--${name} must be an integer from ${min} to ${max}`);
  return n;
}

function number(flags: Flags, name: string, min: number, max: number, fallback: number): number {
  const raw = text(flags, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(n >= min && n <= max)) throw bad(`--${name} must be a number from ${min} to ${max}`);
  return n;
}

function choice<T extends string>(flags: Flags, name: string, choices: readonly T[], fallback: T): T {
  const raw = text(flags, name) ?? fallback;
  if (!choices.includes(raw as T)) throw bad(`--${name} must be one of ${choices.join(", ")}`);
  return raw as T;
}

const simulate = {
  /**
   * simulate capture --person 1..1000 [--attack none|photo|replay|lipsync|screen|earlier_capture|injected|relit_puppet]
   *   [--nonce N] [--seconds 5..30] [--sample-rate 10..60] [--state calm|coerced] [--captured-at ISO] [--seed INT]
   *   [--paced] [--light] [--face-only]
   * Prints one descriptor (docs/presence-descriptor.md). `captured_at` is now unless --captured-at;
   * otherwise equal flags give an equal descriptor. --paced: the reader follows the nonce's
   * challenge schedule and the descriptor declares `signals.schedule: "nonce-v1"`. --light: the
   * screen lights the face with the nonce's light sequence and the descriptor is version 2 (the
   * last three attacks need it).
   */
  capture(flags: Flags): unknown {
    const person = integer(flags, "person", 1, SANDBOX_PERSONS);
    const attack = choice<AttackType>(flags, "attack", ["none", ...LIGHT_ATTACK_TYPES], "none");
    const state = choice<SubjectState>(flags, "state", ["calm", "coerced"], "calm");
    const seconds = number(flags, "seconds", DESCRIPTOR_LIMITS.minSeconds, DESCRIPTOR_LIMITS.maxSeconds, 15);
    const sampleRateHz = number(flags, "sample-rate", DESCRIPTOR_LIMITS.sampleRateMinHz, DESCRIPTOR_LIMITS.sampleRateMaxHz, 30);
    const nonce = text(flags, "nonce");
    if (
      nonce !== undefined &&
      (nonce.length < DESCRIPTOR_LIMITS.nonceMinLength || nonce.length > DESCRIPTOR_LIMITS.nonceMaxLength || !/^[\x21-\x7e]+$/.test(nonce))
    ) {
      throw bad(
        `--nonce must be ${DESCRIPTOR_LIMITS.nonceMinLength} to ${DESCRIPTOR_LIMITS.nonceMaxLength} printable characters without spaces`,
      );
    }
    const capturedAt = text(flags, "captured-at");
    if (capturedAt !== undefined && !Number.isFinite(Date.parse(capturedAt))) throw bad("--captured-at must be an ISO 8601 time");
    const seed = text(flags, "seed") === undefined ? undefined : integer(flags, "seed", 0, 2 ** 32 - 1);
    const pacedFlag = flags.paced;
    if (pacedFlag !== undefined && pacedFlag !== true && pacedFlag !== "true") throw bad("--paced takes no value");
    const paced = pacedFlag !== undefined;
    const lightFlag = flags.light;
    if (lightFlag !== undefined && lightFlag !== true && lightFlag !== "true") throw bad("--light takes no value");
    const light = lightFlag !== undefined;
    const faceOnlyFlag = flags["face-only"];
    if (faceOnlyFlag !== undefined && faceOnlyFlag !== true && faceOnlyFlag !== "true") throw bad("--face-only takes no value");
    const faceOnly = faceOnlyFlag !== undefined;
    if (faceOnly && !light) throw bad("--face-only needs --light");
    if (!light && !(ATTACK_TYPES as readonly string[]).includes(attack) && attack !== "none") throw bad(`--attack ${attack} needs --light`);
    return simulateCapture({
      person,
      attack,
      state,
      seconds,
      sampleRateHz,
      ...(nonce !== undefined ? { nonce } : {}),
      capturedAt: new Date(capturedAt ?? Date.now()).toISOString(),
      ...(seed !== undefined ? { seed } : {}),
      ...(paced ? { paced: true } : {}),
      ...(light ? { light: true } : {}),
      ...(faceOnly ? { faceOnly: true } : {}),
    });
  },

  /** simulate person --person 1..1000: the stable traits of a sandbox test person, with the face embedding. */
  person(flags: Flags): unknown {
    const p = personProfile(integer(flags, "person", 1, SANDBOX_PERSONS));
    return {
      person: p.person,
      face_embedding: p.embedding.map((x) => Math.round(x * 1e6) / 1e6),
      resting_heart_rate_bpm: Math.round(p.restingHrBpm * 10) / 10,
      breaths_per_min: Math.round(p.breathsPerMin * 10) / 10,
      rsa_bpm: Math.round(p.rsaBpm * 10) / 10,
    };
  },
};

export default simulate;
