/**
 * The light challenge: the sequence derived from the nonce (SHA-256), the light a camera sample
 * expects, and the engine's light check on simulated reflections, on hand-made ones (where the
 * camera's gains, gamma and a late relighting are applied exactly), and in the verdict.
 */
import { describe, expect, it } from "vitest";
import {
  evaluatePresence,
  expectedLight,
  LIGHT_CHIP_SECONDS,
  LIGHT_PALETTE,
  type LightSignals,
  lightSequence,
  type PresenceDescriptor,
  presenceConfig,
} from "../../../shared/engine";
import { sha256 } from "../../../shared/engine/light";
import { checkLight } from "../../../shared/engine/reflection";
import { createRng } from "../../../shared/engine/rng";
import { controlledNuisance, LIGHT_ATTACK_TYPES, simulateCapture, simulateSession } from "../../../shared/simulator";
import { controlledLight, lightSeries, reflectionDepth, wildLight } from "../../../shared/simulator/light";

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

describe("sha256", () => {
  it("matches the FIPS 180-4 test vectors", () => {
    expect(hex(sha256(ascii("")))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hex(sha256(ascii("abc")))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hex(sha256(ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
    expect(hex(sha256(ascii("a".repeat(1000))))).toBe("41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  });
});

describe("lightSequence", () => {
  it("is the documented reference vector", () => {
    // docs/presence-descriptor.md, section 11.1.
    expect(lightSequence("n_7f3a9c21e4", 5)).toEqual([3, 2, 4, 2, 1, 3, 4, 1, 2, 1]);
  });

  it("is deterministic, prefix-stable, and covers the capture in chips of 0.5 s", () => {
    const a = lightSequence("nonce-abc-123", 20);
    expect(a).toHaveLength(20 / LIGHT_CHIP_SECONDS);
    expect(lightSequence("nonce-abc-123", 20)).toEqual(a);
    expect(lightSequence("nonce-abc-123", 30).slice(0, a.length)).toEqual(a);
    expect(lightSequence("nonce-abc-123", 20.1)).toHaveLength(41);
  });

  it("never repeats a colour twice in a row and uses every colour about equally", () => {
    const counts = new Array(LIGHT_PALETTE.length).fill(0);
    for (let k = 0; k < 200; k++) {
      const chips = lightSequence(`nonce-${k}`, 30);
      for (let j = 1; j < chips.length; j++) expect(chips[j]).not.toBe(chips[j - 1]);
      for (const c of chips) counts[c]++;
    }
    const total = counts.reduce((a, b) => a + b, 0);
    for (const c of counts) expect(Math.abs(c / total - 1 / LIGHT_PALETTE.length)).toBeLessThan(0.02);
  });

  it("differs between nonces: two sequences agree on about a fifth of their chips, as chance would", () => {
    let same = 0;
    let total = 0;
    for (let k = 0; k < 100; k++) {
      const a = lightSequence(`nonce-${k}`, 30);
      const b = lightSequence(`nonce-${k}x`, 30);
      for (let j = 0; j < a.length; j++) if (a[j] === b[j]) same++;
      total += a.length;
    }
    expect(same / total).toBeGreaterThan(0.15);
    expect(same / total).toBeLessThan(0.25);
  });
});

describe("expectedLight", () => {
  it("is the chip's colour inside a chip and a mix of two across a change, shifted by the lag", () => {
    const chips = [0, 1, 2];
    const [r, g] = expectedLight(chips, 10, 15, 0);
    expect(r[2]).toBe(1); // 0.2 s: red
    expect(g[7]).toBe(1); // 0.7 s: green
    expect(r[5]).toBeCloseTo((1 + 0.019) / 2, 6); // 0.5 s: half a frame each side of the change
    expect(g[5]).toBeCloseTo((0.019 + 1) / 2, 6);
    const [, late] = expectedLight(chips, 10, 15, 0.2);
    expect(late[6]).toBe(0.019); // 0.6 s - 0.2 s: still red
  });
});

/** A hand-made reflection of `chips`: skin lit by ambient plus `depth` x the screen, background by ambient alone. */
function handmade(
  chips: number[],
  fs: number,
  samples: number,
  o: { depth: number; lagS?: number; gain?: (i: number, ch: number) => number; gamma?: number },
): LightSignals {
  const [r, g, b] = expectedLight(chips, fs, samples, o.lagS ?? 0.05);
  const skin: number[][] = [];
  const background: number[][] = [];
  for (let i = 0; i < samples; i++) {
    const lit = [r[i]!, g[i]!, b[i]!];
    const camera = (x: number, ch: number) => Math.min(255, 255 * ((o.gain?.(i, ch) ?? 1) * x) ** (o.gamma ?? 1));
    skin.push([0, 1, 2].map((ch) => camera(0.3 * (1 + o.depth * lit[ch]!), ch)));
    background.push([0, 1, 2].map((ch) => camera(0.2, ch)));
  }
  return { sequence: "light-v1", skin, background };
}

describe("checkLight", () => {
  const fs = 30;
  const samples = 450;
  const nonce = "nonce-light-check";
  const chips = lightSequence(nonce, samples / fs);

  it("passes a reflection of the nonce's sequence, measuring its lag and depth", () => {
    const c = checkLight(handmade(chips, fs, samples, { depth: 0.2, lagS: 0.06 }), nonce, fs, presenceConfig);
    expect(c.passed).toBe(true);
    expect(c.correlation).toBeGreaterThan(0.95);
    expect(Math.abs(c.lag_ms - 60)).toBeLessThanOrEqual(10);
    expect(c.depth).toBeGreaterThan(0.1);
    expect(c.depth).toBeLessThan(0.2);
  });

  it("is blind to the camera's auto-exposure, white balance and gamma: they scale skin and background alike", () => {
    const plain = checkLight(handmade(chips, fs, samples, { depth: 0.2 }), nonce, fs, presenceConfig);
    const camera = checkLight(
      handmade(chips, fs, samples, {
        depth: 0.2,
        gamma: 1 / 2.2,
        gain: (i, ch) => (1 + 0.5 * Math.sin(i / 20)) * [1.2, 1, 0.8][ch]! * (1 + 0.3 * Math.cos(i / 45 + ch)),
      }),
      nonce,
      fs,
      presenceConfig,
    );
    expect(camera.passed).toBe(true);
    expect(Math.abs(camera.correlation - plain.correlation)).toBeLessThan(0.01);
    expect(camera.lag_ms).toBe(plain.lag_ms);
    // Gamma scales the log ratio by 1 / 2.2.
    expect(camera.depth).toBeCloseTo(plain.depth / 2.2, 2);
  });

  it("refuses the reflection of another nonce's sequence", () => {
    const other = lightSequence("another-nonce-0001", samples / fs);
    const c = checkLight(handmade(other, fs, samples, { depth: 0.2 }), nonce, fs, presenceConfig);
    expect(c.passed).toBe(false);
    expect(c.correlation).toBeLessThan(0.6);
  });

  it("refuses a relighting 300 ms late, and shows where it fits", () => {
    const c = checkLight(handmade(chips, fs, samples, { depth: 0.2, lagS: 0.35 }), nonce, fs, presenceConfig);
    expect(c.passed).toBe(false);
    expect(Math.abs(c.best_lag_ms - 350)).toBeLessThanOrEqual(20);
    expect(c.best_correlation).toBeGreaterThan(0.95);
  });

  it("refuses a reflection too faint to be a face in front of the screen, and a steady light", () => {
    expect(checkLight(handmade(chips, fs, samples, { depth: 0.01 }), nonce, fs, presenceConfig).passed).toBe(false);
    const steady = checkLight(handmade(chips, fs, samples, { depth: 0 }), nonce, fs, presenceConfig);
    expect(steady).toMatchObject({ passed: false, depth: 0 });
  });

  it("never throws on black, saturated or constant regions", () => {
    const flat = (x: number): LightSignals => ({
      sequence: "light-v1",
      skin: Array.from({ length: samples }, () => [x, x, x]),
      background: Array.from({ length: samples }, () => [x, x, x]),
    });
    for (const x of [0, 255, 128]) expect(checkLight(flat(x), nonce, fs, presenceConfig)).toMatchObject({ passed: false, correlation: 0 });
  });
});

describe("the simulator's light physics", () => {
  it("reflects the screen in proportion to its light over the ambient", () => {
    const rng = createRng(5);
    const c = { ...controlledLight(rng), toneMapping: 0, backgroundSpill: 0, noiseLevels: 0.01 };
    const times = Float64Array.from({ length: 450 }, (_, i) => i / 30);
    const s = lightSeries(createRng(6), c, { kind: "lit", nonce: "nonce-physics" }, times, 30, 0);
    const check = checkLight({ sequence: "light-v1", skin: s.skin, background: s.background }, "nonce-physics", 30, presenceConfig);
    expect(check.passed).toBe(true);
    // The camera's gamma (1 / 2.2) and the log of (1 + depth): what the engine reads is about that.
    expect(check.depth).toBeGreaterThan(0.5 * (Math.log1p(reflectionDepth(c)) / 2.2));
    expect(check.depth).toBeLessThan(1.5 * (Math.log1p(reflectionDepth(c)) / 2.2));
  });

  it("draws controlled conditions only where the reflection is strong enough, wild ones also where it is not", () => {
    const wild = Array.from({ length: 300 }, (_, i) => reflectionDepth(wildLight(createRng(i))));
    const controlled = Array.from({ length: 300 }, (_, i) => reflectionDepth(controlledLight(createRng(i))));
    expect(Math.min(...controlled)).toBeGreaterThan(0.05);
    expect(Math.min(...wild)).toBeLessThan(0.05);
  });
});

describe("evaluatePresence on version 2", () => {
  const bona = (seed: number): PresenceDescriptor => simulateCapture({ person: 11, seed, light: true, nonce: `nonce-v2-${seed}` });

  it("accepts sandbox bona fide captures with the light check reported, the coupling reported but not a gate", () => {
    for (let seed = 0; seed < 5; seed++) {
      const r = evaluatePresence(bona(seed));
      expect(r.accepted).toBe(true);
      expect(r.liveness.checks.light?.passed).toBe(true);
      expect(r.assurance_inputs).toMatchObject({ light_sequence: "light-v1" });
      expect(r.assurance_inputs.light_correlation).toBeGreaterThan(0.9);
    }
    // A v2 capture whose coupling fails is still live: the light proved it is now.
    const strict = structuredClone(presenceConfig) as typeof presenceConfig;
    (strict.coupling as { minCorrelation: number }).minCorrelation = 1.1;
    const r = evaluatePresence(bona(0), { config: strict });
    expect(r.liveness.checks.pulse_speech_coupling.passed).toBe(false);
    expect(r.accepted).toBe(true);
  });

  it("refuses the same capture under another nonce as light_not_followed", () => {
    const d = bona(1);
    const r = evaluatePresence({ ...d, capture_nonce: "rewritten-nonce" });
    expect(r.reason).toBe("light_not_followed");
    expect(r.liveness.checks.light?.passed).toBe(false);
  });

  it("refuses every sandbox attack, each for its reason", () => {
    const expected: Record<(typeof LIGHT_ATTACK_TYPES)[number], string[]> = {
      photo: ["no_pulse", "av_desync"],
      replay: ["av_desync", "light_not_followed"],
      lipsync: ["no_pulse", "light_not_followed"],
      screen: ["light_not_followed"],
      earlier_capture: ["light_not_followed"],
      injected: ["light_not_followed"],
      relit_puppet: ["no_pulse", "light_not_followed"],
    };
    for (const attack of LIGHT_ATTACK_TYPES) {
      for (let seed = 0; seed < 6; seed++) {
        const r = evaluatePresence(simulateCapture({ person: 21, attack, seed, light: true }));
        expect(r.accepted, `${attack} seed ${seed}`).toBe(false);
        expect(expected[attack], `${attack} seed ${seed}: ${r.reason}`).toContain(r.reason);
      }
    }
  });

  it("judges version 1 exactly as before: no light check, the coupling a gate", () => {
    const d = simulateCapture({ person: 11, seed: 3 });
    const r = evaluatePresence(d);
    expect(r.liveness.checks.light).toBeUndefined();
    expect(r.assurance_inputs.light_sequence).toBeUndefined();
    const strict = structuredClone(presenceConfig) as typeof presenceConfig;
    (strict.coupling as { minCorrelation: number }).minCorrelation = 1.1;
    expect(evaluatePresence(d, { config: strict }).reason).toBe("pulse_speech_uncoupled");
  });

  it("needs the light challenge for the attacks against it", () => {
    expect(() => simulateCapture({ person: 1, attack: "injected" })).toThrow(RangeError);
  });
});

describe("the screen's light left in the pulse (D-395)", () => {
  /**
   * A still photograph and a live face under the light, the client's reflection removal leaving
   * `pulseResidual` of the screen's light in the skin colour before POS (the browser leaves about
   * this much: the still's "pulse" is mostly the light sequence, band-passed, at 40 to 56 bpm).
   */
  const pulseUnder = (attack: "photo" | "none", seed: number, pulseResidual: number) => {
    const rng = createRng(seed * 7919 + 17);
    const light = { ...controlledLight(rng), pulseResidual };
    const nuisance = controlledNuisance(rng);
    const d = simulateSession({ person: 5, attack, nuisance, nonce: `residual-${seed}`, seed, light });
    return { pulse: evaluatePresence(d).liveness.checks.pulse };
  };

  it("does not read the light's residual in a still photograph as a pulse", () => {
    // Without the light regressed out of the pulse, about one still in five passes the pulse check.
    for (const residual of [0.3, 2]) {
      const passed = Array.from({ length: 40 }, (_, i) => pulseUnder("photo", i + 1, residual).pulse).filter((p) => p.passed);
      expect(passed, `residual ${residual}`).toEqual([]);
    }
  });

  it("keeps a live face's pulse under the same residual", () => {
    for (const residual of [0.3, 2]) {
      const refused = Array.from({ length: 40 }, (_, i) => pulseUnder("none", i + 1, residual).pulse).filter((p) => !p.passed);
      expect(refused, `residual ${residual}`).toEqual([]);
    }
  });
});
