import { describe, expect, it } from "vitest";
import { baselineFromResult, cosineSimilarity, evaluatePresence, parseDescriptor } from "../../../shared/engine";
import { breathLock } from "../../../shared/engine/checks";
import { presenceConfig } from "../../../shared/engine/config";
import { createRng } from "../../../shared/engine/rng";
import { FACE_COSINE_AT_GATE } from "../../../shared/identity/face-match";
import {
  ATTACK_TYPES,
  faceEmbeddingOfPerson,
  personProfile,
  SANDBOX_PERSONS,
  simulateCapture,
  simulatePhysiology,
  simulateSession,
  wildNuisance,
} from "../../../shared/simulator";

describe("determinism", () => {
  it("gives the same descriptor for the same options", () => {
    const a = simulateCapture({ person: 7, attack: "replay", nonce: "abcdefgh", seconds: 15 });
    const b = simulateCapture({ person: 7, attack: "replay", nonce: "abcdefgh", seconds: 15 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(evaluatePresence(a)).toEqual(evaluatePresence(b));
  });

  it("changes with the nonce or the seed, and carries the nonce and time", () => {
    const a = simulateCapture({ person: 7, nonce: "abcdefgh" });
    const b = simulateCapture({ person: 7, nonce: "abcdefgi" });
    const c = simulateCapture({ person: 7, nonce: "abcdefgh", seed: 99, capturedAt: "2026-05-01T10:00:00.000Z" });
    expect(a.signals.pulse).not.toEqual(b.signals.pulse);
    expect(a.signals.pulse).not.toEqual(c.signals.pulse);
    expect(b.capture_nonce).toBe("abcdefgi");
    expect(c.captured_at).toBe("2026-05-01T10:00:00.000Z");
    expect(simulateCapture({ person: 1 }).capture_nonce).toMatch(/^sim-[0-9a-f]{8}$/);
  });

  it("produces valid descriptors of the requested size", () => {
    for (const [seconds, sampleRateHz] of [
      [5, 10],
      [15, 30],
      [30, 60],
    ] as const) {
      const d = simulateCapture({ person: 2, seconds, sampleRateHz, nonce: "sizes-123" });
      expect(d.signals.pulse).toHaveLength(seconds * sampleRateHz);
      expect(parseDescriptor(d).ok).toBe(true);
    }
  });

  it("validates its options", () => {
    expect(() => simulateCapture({ person: 0 })).toThrow(RangeError);
    expect(() => simulateCapture({ person: 1001 })).toThrow(RangeError);
    expect(() => simulateCapture({ person: 1.5 })).toThrow(RangeError);
    expect(() => simulateCapture({ person: 1, seconds: 31 })).toThrow(RangeError);
    expect(() => simulateCapture({ person: 1, nonce: "short" })).toThrow(RangeError);
    expect(() => simulateCapture({ person: 1, attack: "mask" as never })).toThrow(RangeError);
    expect(() => simulateCapture({ person: 1, capturedAt: "soon" })).toThrow(RangeError);
  });
});

describe("sandbox faces", () => {
  it("are stable, unit-norm and distinct across all 1000 persons", () => {
    const faces = Array.from({ length: SANDBOX_PERSONS }, (_, i) => faceEmbeddingOfPerson(i + 1));
    expect(faceEmbeddingOfPerson(7)).toEqual(faces[6]);
    expect(personProfile(7).embedding).toEqual(faces[6]);
    let worst = -1;
    for (let i = 0; i < faces.length; i++) {
      expect(Math.hypot(...(faces[i] as number[]))).toBeCloseTo(1, 9);
      for (let j = i + 1; j < faces.length; j++) worst = Math.max(worst, cosineSimilarity(faces[i] as number[], faces[j] as number[]));
    }
    // As under the real model (D-385): every two faces are close, yet clear of the gate.
    expect(worst).toBeGreaterThan(0.85);
    expect(worst).toBeLessThan(FACE_COSINE_AT_GATE - 0.03);
  });

  it("match across captures of the same person and not across persons", () => {
    for (const person of [1, 7, 500, 1000]) {
      const a = simulateCapture({ person, nonce: "face-one-1" }).face.embedding;
      const b = simulateCapture({ person, nonce: "face-two-2", attack: "none" }).face.embedding;
      expect(cosineSimilarity(a, b)).toBeGreaterThan(FACE_COSINE_AT_GATE + 0.015);
      expect(cosineSimilarity(a, faceEmbeddingOfPerson(person))).toBeGreaterThan(0.99);
      const other = simulateCapture({ person: (person % SANDBOX_PERSONS) + 1, nonce: "face-one-1" }).face.embedding;
      expect(cosineSimilarity(a, other)).toBeLessThan(FACE_COSINE_AT_GATE - 0.03);
    }
  });
});

describe("sandbox outcomes", () => {
  it("accepts bona fide captures of sandbox persons", () => {
    let passed = 0;
    for (let person = 1; person <= 400; person++) {
      if (evaluatePresence(simulateCapture({ person, nonce: `bona-fide-${person}` })).accepted) passed++;
    }
    expect(passed).toBeGreaterThanOrEqual(398);
    for (let person = 1; person <= 20; person++) {
      expect(evaluatePresence(simulateCapture({ person, nonce: `bona-fide-${person}` })).reason).toBeNull();
    }
  });

  it("refuses every attack type", () => {
    const refused: Record<string, number> = {};
    const reasons = new Set<string>();
    for (const attack of ATTACK_TYPES) {
      refused[attack] = 0;
      for (let person = 1; person <= 200; person++) {
        const r = evaluatePresence(simulateCapture({ person, attack, nonce: `attack-${attack}-${person}` }));
        if (!r.accepted) refused[attack]++;
        if (r.reason) reasons.add(`${attack}:${r.reason}`);
      }
    }
    expect(refused).toEqual({ photo: 200, replay: 200, lipsync: 200, screen: 200 });
    expect(reasons).toContain("photo:no_pulse");
    expect(reasons).toContain("replay:av_desync");
    expect(reasons).toContain("lipsync:no_pulse");
    expect(reasons).toContain("lipsync:pulse_speech_uncoupled");
    expect(reasons).toContain("screen:pulse_speech_uncoupled");
  });

  it("person 7 replay from the documented CLI example is refused as av_desync", () => {
    const d = simulateCapture({ person: 7, attack: "replay", nonce: "abcdefgh", seconds: 15 });
    expect(evaluatePresence(d).reason).toBe("av_desync");
  });

  it("signals coercion on a coerced capture against the person's calm baseline, and not on a calm one", () => {
    let enrolled = 0;
    let detected = 0;
    let falseSignals = 0;
    for (let person = 1; person <= 100; person++) {
      const baseline = baselineFromResult(evaluatePresence(simulateCapture({ person, nonce: `enrolment-${person}` })));
      if (!baseline) continue; // a bona fide capture the engine refused: no baseline to compare with
      enrolled++;
      const coerced = evaluatePresence(simulateCapture({ person, state: "coerced", nonce: `payment-${person}` }), { baseline });
      if (coerced.reason === "coercion_detected") detected++;
      const calm = evaluatePresence(simulateCapture({ person, nonce: `pay-calm-${person}` }), { baseline });
      if (calm.coercion.signal) falseSignals++;
    }
    expect(enrolled).toBeGreaterThanOrEqual(99);
    expect(detected).toBeGreaterThanOrEqual(enrolled - 3);
    expect(falseSignals).toBe(0);
    // A fixed example for HTTP tests.
    const baseline = baselineFromResult(evaluatePresence(simulateCapture({ person: 7, nonce: "enrolment-7" })));
    const r = evaluatePresence(simulateCapture({ person: 7, state: "coerced", nonce: "payment-7" }), { baseline });
    expect(r).toMatchObject({ accepted: false, reason: "coercion_detected", liveness: { passed: true } });
  });
});

describe("wild sessions", () => {
  it("are valid descriptors for every attack and nuisance draw", () => {
    for (let i = 0; i < 30; i++) {
      const rng = createRng(1000 + i);
      for (const attack of ["none", ...ATTACK_TYPES] as const) {
        const d = simulateSession({ person: 1 + i, attack, nuisance: wildNuisance(rng), nonce: `wild-${i}-xx`, seconds: 12, seed: i });
        expect(parseDescriptor(d).ok).toBe(true);
      }
    }
  });
});

describe("noise-free physiology (the benchmark's oracle)", () => {
  const nuisance = {
    ...wildNuisance(createRng(5)),
    heartRateBpm: 75,
    breathsPerMin: 12,
    rsaBpm: 8,
    mayerBpm: 0,
    driftBpm: 0,
    hrNoiseBpm: 0,
  };
  const attackerNuisance = { ...nuisance, breathsPerMin: 17 };
  const physiology = (pulse: "live" | "recorded" | "drifting", seed: number) =>
    simulatePhysiology({ pulse, nuisance, attackerNuisance, seconds: 20, sampleRateHz: 30, seed });
  const lock = (t: ReturnType<typeof physiology>) => {
    const times = t.beats.slice(1).map((b, k) => (b + (t.beats[k] as number)) / 2);
    const rates = t.beats.slice(1).map((b, k) => 60 / (b - (t.beats[k] as number)));
    return breathLock(times, rates, t.inhale, 30, 20, presenceConfig);
  };

  it("is deterministic, beats at the heart rate and breathes in for part of the time", () => {
    const t = physiology("live", 3);
    expect(physiology("live", 3)).toEqual(t);
    expect(t.beats.length).toBeGreaterThanOrEqual(23);
    expect(t.beats.length).toBeLessThanOrEqual(27);
    expect(t.beats.every((b, k) => k === 0 || b > (t.beats[k - 1] as number))).toBe(true);
    const inhaling = t.inhale.reduce((a, b) => a + b, 0) / t.inhale.length;
    expect(inhaling).toBeGreaterThan(0.05);
    expect(inhaling).toBeLessThan(0.5);
  });

  it("locks a live reader's heart rate to their own breath, and not a recorded or synthetic heart", () => {
    const live = [1, 2, 3, 4, 5].map((s) => lock(physiology("live", s))?.r ?? 0);
    const attacks = [1, 2, 3, 4, 5].flatMap((s) => [lock(physiology("recorded", s))?.r ?? 0, lock(physiology("drifting", s))?.r ?? 0]);
    expect(Math.min(...live)).toBeGreaterThan(0.8);
    expect(attacks.filter((r) => r > 0.8)).toEqual([]);
    expect(lock(physiology("live", 1))?.rsa).toBeGreaterThan(4);
  });
});
