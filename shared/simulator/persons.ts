/**
 * The sandbox test persons 1..SANDBOX_PERSONS, like a payment processor's test cards: each has a
 * stable face and stable traits (heart, breath, voice) that every capture of them starts from.
 */
import { DESCRIPTOR_LIMITS } from "../engine/descriptor.js";
import { createRng, hashSeed, type Rng } from "../engine/rng.js";

/** The number of documented sandbox test persons (1..SANDBOX_PERSONS). */
export const SANDBOX_PERSONS = 1000;
const EMBEDDING_DIM = DESCRIPTOR_LIMITS.embeddingLength;

/** Stable traits of one synthetic person. */
export interface PersonProfile {
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

export function assertPerson(person: number): void {
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

/** A capture of a face: `base` scattered by `sigma` per dimension, as a device serialises it. */
export function perturbedUnit(base: readonly number[], sigma: number, rng: Rng): number[] {
  const out = base.map((x) => x + sigma * rng.normal());
  let s = 0;
  for (const x of out) s += x * x;
  const n = Math.sqrt(s);
  // Round to 6 decimals as a device would when serialising; the norm stays within 1e-5 of 1.
  return out.map((x) => Math.round((x / n) * 1e6) / 1e6);
}

/**
 * What every face shares in the reference model's space, and how far a person stands from it: real
 * faces under face-api are all close (distinct persons at cosine 0.78 to 0.96, D-385), so a sandbox
 * person is this common direction plus their own at this weight, which puts two persons at cosine
 * 0.87 +- 0.01 (at most about 0.91 among the 1000), as the real model does, and below the match gate.
 */
const COMMON_FACE = unitGaussianVector(createRng(hashSeed("presence-sim/face", 0)), EMBEDDING_DIM);
const OWN_FACE_WEIGHT = 0.39;

/**
 * The stable face embedding of sandbox person `person` (1..1000): a unit vector
 * that every capture of that person scatters around (cosine ~0.995 to it).
 *
 * @example
 * cosineSimilarity(faceEmbeddingOfPerson(7), simulateCapture({ person: 7 }).face.embedding) // ~0.995
 */
export function faceEmbeddingOfPerson(person: number): number[] {
  assertPerson(person);
  const own = unitGaussianVector(createRng(hashSeed("presence-sim/face", person)), EMBEDDING_DIM);
  const face = COMMON_FACE.map((x, i) => x + OWN_FACE_WEIGHT * (own[i] as number));
  const norm = Math.hypot(...face);
  return face.map((x) => x / norm);
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
