import { createHash } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { createRng, hashSeed } from "../../shared/engine/rng";
import { TEMPLATE_DIMENSIONS, templateProtector } from "../../shared/lib/template-protection";
import { faceEmbeddingOfPerson } from "../../shared/simulator";

const KEY = "unit-test-template-key-0123456789abcdef";
const OTHER_KEY = "unit-test-template-key-fedcba9876543210";

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);
const norm = (a: readonly number[]) => Math.sqrt(dot(a, a));
const cosine = (a: readonly number[], b: readonly number[]) => dot(a, b) / (norm(a) * norm(b));

/** A Gaussian vector of any scale (not normalised): protect() must normalise it. */
function randomVector(scale = 1): number[] {
  return Array.from(
    { length: TEMPLATE_DIMENSIONS },
    () => scale * Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random()),
  );
}

/** Sandbox faces 1..n: fixed inputs, so the statistical bounds below are checked on the same data every run. */
const faces = (n: number) => Array.from({ length: n }, (_, i) => faceEmbeddingOfPerson(i + 1));

describe("templateProtector", () => {
  it("preserves cosine similarity between any two embeddings (to 1e-9)", async () => {
    const protector = await templateProtector(KEY);
    for (let i = 0; i < 200; i++) {
      const a = randomVector(1 + 10 * Math.random());
      const b = i % 2 ? randomVector(0.01) : a.map((x) => x + 0.3 * Math.random());
      expect(Math.abs(dot(protector.protect(a), protector.protect(b)) - cosine(a, b))).toBeLessThan(1e-9);
    }
    const [seven, sevenAgain] = [faceEmbeddingOfPerson(7), faceEmbeddingOfPerson(7)];
    expect(dot(protector.protect(seven), protector.protect(sevenAgain))).toBeCloseTo(1, 12);
  });

  it("outputs unit-norm vectors of the template dimension, whatever the input's scale", async () => {
    const protector = await templateProtector(KEY);
    for (const scale of [1e-3, 1, 42, 1e4]) {
      const out = protector.protect(randomVector(scale));
      expect(out).toHaveLength(TEMPLATE_DIMENSIONS);
      expect(Math.abs(norm(out) - 1)).toBeLessThan(1e-9);
    }
  });

  it("is an orthonormal rotation: the protected basis vectors are orthonormal", async () => {
    const protector = await templateProtector(KEY);
    const columns = Array.from({ length: TEMPLATE_DIMENSIONS }, (_, i) =>
      protector.protect(Array.from({ length: TEMPLATE_DIMENSIONS }, (_, j) => (i === j ? 1 : 0))),
    );
    for (let i = 0; i < TEMPLATE_DIMENSIONS; i++) {
      for (let j = i; j < TEMPLATE_DIMENSIONS; j++) {
        expect(Math.abs(dot(columns[i], columns[j]) - (i === j ? 1 : 0))).toBeLessThan(1e-9);
      }
    }
  });

  it("gives unrelated vectors under different keys: a template protected under one key is useless under another", async () => {
    const [a, b] = await Promise.all([templateProtector(KEY), templateProtector(OTHER_KEY)]);
    expect(a.keyId).not.toBe(b.keyId);
    // For independent random rotations in 128 dimensions the cosine is about N(0, 1/128): mean |cos| ~0.07.
    const cross = faces(200).map((face) => Math.abs(dot(a.protect(face), b.protect(face))));
    expect(Math.max(...cross)).toBeLessThan(0.4);
    expect(cross.reduce((s, x) => s + x, 0) / cross.length).toBeLessThan(0.12);
  });

  it("moves the protected vector far from the raw one (a dump is in an unknown basis)", async () => {
    const protector = await templateProtector(KEY);
    const similarity = faces(200).map((face) => Math.abs(cosine(protector.protect(face), face)));
    expect(Math.max(...similarity)).toBeLessThan(0.4);
    expect(similarity.reduce((s, x) => s + x, 0) / similarity.length).toBeLessThan(0.12);
  });

  it("is deterministic per key, also across a fresh build of the rotation", async () => {
    const protector = await templateProtector(KEY);
    const face = faceEmbeddingOfPerson(7);
    expect(protector.protect(face)).toEqual(protector.protect([...face]));
    vi.resetModules();
    const fresh = await import("../../shared/lib/template-protection");
    const rebuilt = await fresh.templateProtector(KEY);
    expect(rebuilt).not.toBe(protector);
    expect(rebuilt.keyId).toBe(protector.keyId);
    expect(rebuilt.protect(face)).toEqual(protector.protect(face));
    // Pinned: a change to the derivation would silently revoke every stored template. The input is a
    // fixed unit vector (drawn as sandbox faces once were), so a change of the simulator's faces leaves it be.
    const rng = createRng(hashSeed("presence-sim/face", 7));
    const drawn = Array.from({ length: 128 }, () => rng.normal());
    const fixed = drawn.map((x) => x / Math.hypot(...drawn));
    expect(
      protector
        .protect(fixed)
        .slice(0, 4)
        .map((x) => Number(x.toFixed(9))),
    ).toEqual([0.050112137, 0.075051734, 0.173946503, -0.098004583]);
  });

  it("has a stable keyId: the first 16 hex characters of SHA-256('template-key-id:' + secret)", async () => {
    const protector = await templateProtector(KEY);
    expect(protector.keyId).toBe(createHash("sha256").update(`template-key-id:${KEY}`).digest("hex").slice(0, 16));
    expect(protector.keyId).toBe("ccc9c8d10a3f4283");
    expect((await templateProtector(KEY)).keyId).toBe(protector.keyId);
    expect((await templateProtector(OTHER_KEY)).keyId).toMatch(/^[0-9a-f]{16}$/);
  });
});
