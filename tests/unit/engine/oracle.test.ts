import { describe, expect, it } from "vitest";
import { oracleBound } from "../../../scripts/bench/presence-oracle";

describe("the benchmark's oracle bound", () => {
  it("separates readers whose heart rate follows only their breath, timed perfectly", () => {
    const b = oracleBound({ seconds: 20, timingMs: 0, physiology: "rsa-only" }, 11, 150);
    expect(b.apcerLipsync).toBeLessThanOrEqual(0.01);
    expect(b.bpcer).toBeLessThan(0.05);
    expect(b.beatNoiseBpm).toBeLessThan(1.5);
  });

  it("loses bona fide readers to beat-timing error and to heart-rate variation that is not the breath", () => {
    const perfect = oracleBound({ seconds: 20, timingMs: 0, physiology: "rsa-only" }, 11, 150);
    const timed = oracleBound({ seconds: 20, timingMs: 10, physiology: "rsa-only" }, 11, 150);
    const full = oracleBound({ seconds: 20, timingMs: 0, physiology: "full" }, 11, 150);
    expect(timed.beatNoiseBpm).toBeGreaterThan(perfect.beatNoiseBpm + 0.8);
    expect(timed.bpcer).toBeGreaterThan(perfect.bpcer + 0.1);
    expect(full.bpcer).toBeGreaterThan(perfect.bpcer + 0.05);
    for (const b of [timed, full]) expect(b.apcerLipsync).toBeLessThanOrEqual(0.01);
  });

  it("is deterministic for a seed", () => {
    const c = { seconds: 20, timingMs: 5, physiology: "full" as const };
    expect(oracleBound(c, 3, 40)).toEqual(oracleBound(c, 3, 40));
  });
});
