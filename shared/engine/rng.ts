/**
 * Seeded pseudo-random numbers for the simulator. Pure and deterministic:
 * the same seed always yields the same sequence on every runtime.
 *
 * @example
 * const rng = createRng(hashSeed('person', 7));
 * rng.uniform(50, 120);
 */

/** A seeded random source. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number;
  /** Integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number;
  /** Standard normal (mean 0, standard deviation 1). */
  normal(): number;
  /** Picks one element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
}

/**
 * Hashes any mix of strings and numbers into a 32-bit seed (FNV-1a over the
 * parts joined by a separator, then a final avalanche).
 */
export function hashSeed(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  const text = parts.map(String).join("\u001f");
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Creates a sfc32 generator seeded from one 32-bit number. */
export function createRng(seed: number): Rng {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const raw = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) raw();
  let spare: number | null = null;
  const rng: Rng = {
    next: raw,
    uniform: (lo, hi) => lo + (hi - lo) * raw(),
    int: (lo, hi) => lo + Math.floor(raw() * (hi - lo + 1)),
    normal: () => {
      if (spare !== null) {
        const s = spare;
        spare = null;
        return s;
      }
      let u = raw();
      while (u <= 1e-12) u = raw();
      const v = raw();
      const r = Math.sqrt(-2 * Math.log(u));
      spare = r * Math.sin(2 * Math.PI * v);
      return r * Math.cos(2 * Math.PI * v);
    },
    pick: (items) => items[Math.floor(raw() * items.length)] as (typeof items)[number],
  };
  return rng;
}
