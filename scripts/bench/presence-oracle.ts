/**
 * The oracle bound of the presence benchmark. It feeds the engine's own statistic of
 * check 3 (`breathLock`: the heart rate's lock to the breath pauses) with what a perfect
 * camera and microphone would measure: the simulator's noise-free heartbeats, optionally
 * with a beat-timing error, and the true inhalations. It does this for bona fide readers
 * and for the lip-sync puppets that carry a pulse (lifted from a recording, or synthetic
 * at a drifting rate), which no other check can tell from a live reader. An engine that
 * judges a descriptor measures less than this, so where the bound misses the goal, the
 * engine cannot meet it with this statistic either, whatever its signal processing.
 */
import { beatNoiseOf, breathLock } from "../../shared/engine/checks.js";
import { presenceConfig } from "../../shared/engine/config.js";
import { createRng, hashSeed } from "../../shared/engine/rng.js";
import { type Nuisance, simulatePhysiology, wildNuisance } from "../../shared/simulator/index.js";

/** Which heart-rate variation the readers have. */
type OraclePhysiology =
  /** The simulator's: respiratory sinus arrhythmia plus Mayer waves, drift and random variation. */
  | "full"
  /** Only what the issue lists: respiratory sinus arrhythmia on a steady rate. */
  | "rsa-only";

/** One configuration of the bound. */
interface OracleCase {
  seconds: number;
  /** Standard deviation of the error added to each beat time, ms. */
  timingMs: number;
  physiology: OraclePhysiology;
}

/** The bound for one case: the best operating point with lip-sync APCER at most 1%. */
interface OracleResult extends OracleCase {
  /** Thresholds on the lock's correlation and swing that reach it. */
  minCorrelation: number;
  minRsaBpm: number;
  bpcer: number;
  apcerRecorded: number;
  apcerDrifting: number;
  /** APCER of the lip-sync attack type: a third each absent (always refused), recorded, drifting. */
  apcerLipsync: number;
  /** Median beat noise of the bona fide readers (as the engine reports it: successive differences / sqrt 2), bpm. */
  beatNoiseBpm: number;
}

const SAMPLE_HZ = 30;
const RSA_FLOORS = [0, 0.5, 1, 1.5, 2, 3];

interface Lock {
  r: number;
  rsa: number;
  beatNoise: number;
}

function lockOf(kind: "live" | "recorded" | "drifting", c: OracleCase, seed: number, i: number): Lock {
  const rng = createRng(hashSeed("oracle", seed, kind, i));
  const quiet = (n: Nuisance): Nuisance => (c.physiology === "full" ? n : { ...n, mayerBpm: 0, driftBpm: 0, hrNoiseBpm: 0 });
  const truth = simulatePhysiology({
    pulse: kind,
    nuisance: quiet(wildNuisance(rng)),
    attackerNuisance: quiet(wildNuisance(rng)),
    seconds: c.seconds,
    sampleRateHz: SAMPLE_HZ,
    seed: hashSeed("oracle-session", seed, kind, i),
  });
  const beats = truth.beats.map((t) => t + (c.timingMs / 1000) * rng.normal());
  const times: number[] = [];
  const rates: number[] = [];
  for (let k = 1; k < beats.length; k++) {
    const ibi = (beats[k] as number) - (beats[k - 1] as number);
    if (ibi > 0) {
      times.push(((beats[k] as number) + (beats[k - 1] as number)) / 2);
      rates.push(60 / ibi);
    }
  }
  const beatNoise = beatNoiseOf(rates);
  const lock = breathLock(times, rates, truth.inhale, SAMPLE_HZ, c.seconds, presenceConfig);
  return lock ? { r: lock.r, rsa: lock.rsa, beatNoise } : { r: -1, rsa: 0, beatNoise };
}

/**
 * The oracle bound for one case over `n` sessions per class: the operating point
 * (correlation and RSA thresholds) with the lowest BPCER whose lip-sync APCER is at most 1%.
 */
export function oracleBound(c: OracleCase, seed: number, n: number): OracleResult {
  const sample = (kind: "live" | "recorded" | "drifting"): Lock[] => Array.from({ length: n }, (_, i) => lockOf(kind, c, seed, i));
  const live = sample("live");
  const recorded = sample("recorded");
  const drifting = sample("drifting");
  const share = (xs: Lock[], r: number, rsa: number): number => xs.filter((x) => x.r >= r && x.rsa >= rsa).length / n;
  const noises = live.map((x) => x.beatNoise).sort((a, b) => a - b);
  const beatNoiseBpm = noises[Math.floor(noises.length / 2)] ?? 0;
  let best: OracleResult | null = null;
  for (const minRsaBpm of RSA_FLOORS) {
    for (let k = 0; k <= 100; k++) {
      const minCorrelation = k / 100;
      const apcerRecorded = share(recorded, minCorrelation, minRsaBpm);
      const apcerDrifting = share(drifting, minCorrelation, minRsaBpm);
      const apcerLipsync = (apcerRecorded + apcerDrifting) / 3;
      if (apcerLipsync > 0.01) continue;
      const bpcer = 1 - share(live, minCorrelation, minRsaBpm);
      if (!best || bpcer < best.bpcer) {
        best = { ...c, minCorrelation, minRsaBpm, bpcer, apcerRecorded, apcerDrifting, apcerLipsync, beatNoiseBpm };
      }
      break; // higher thresholds at this floor only reject more bona fide readers
    }
  }
  return best ?? { ...c, minCorrelation: 1, minRsaBpm: 0, bpcer: 1, apcerRecorded: 0, apcerDrifting: 0, apcerLipsync: 0, beatNoiseBpm };
}
