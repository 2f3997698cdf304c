import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  evaluatePresence,
  DESCRIPTOR_LIMITS as L,
  PRESENCE_REASONS,
  type PresenceDescriptor,
  type PresenceResult,
  parseDescriptor,
} from "../../../shared/engine";
import { simulateCapture } from "../../../shared/simulator";

/** A series of length n in [lo, hi]: random values or an extreme pattern. */
function series(n: number, lo: number, hi: number): fc.Arbitrary<number[]> {
  const value = fc.double({ min: lo, max: hi, noNaN: true });
  const pattern = fc.oneof(
    value.map((c) => new Array<number>(n).fill(c)),
    fc.constant(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? lo : hi))),
    fc.integer({ min: 0, max: n - 1 }).map((k) => Array.from({ length: n }, (_, i) => (i === k ? hi : lo))),
    fc.integer({ min: 0, max: n - 1 }).map((k) => Array.from({ length: n }, (_, i) => (i < k ? lo : hi))),
    fc
      .record({ hz: fc.double({ min: 0.01, max: 30, noNaN: true }), phase: fc.double({ min: 0, max: 7, noNaN: true }) })
      .map(({ hz, phase }) => Array.from({ length: n }, (_, i) => lo + ((hi - lo) * (1 + Math.sin(hz * i + phase))) / 2)),
  );
  return n <= 400 ? fc.oneof(fc.array(value, { minLength: n, maxLength: n }), pattern) : pattern;
}

const unit = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 128, maxLength: 128 }).map((xs) => {
  const norm = Math.hypot(...xs);
  return norm > 1e-6 ? xs.map((x) => x / norm) : xs.map((_, i) => (i === 0 ? 1 : 0));
});

/** N colours [R, G, B] in [0, 255]: each channel a series, sometimes black or saturated throughout. */
function colours(n: number): fc.Arbitrary<number[][]> {
  return fc
    .tuple(series(n, 0, 255), series(n, 0, 255), series(n, 0, 255))
    .map(([r, g, b]) => r.map((x, i) => [x, g[i] as number, b[i] as number]));
}

const descriptorArb: fc.Arbitrary<PresenceDescriptor> = fc
  .record({
    fs: fc.oneof(fc.constantFrom(10, 30, 60), fc.double({ min: L.sampleRateMinHz, max: L.sampleRateMaxHz, noNaN: true })),
    seconds: fc.double({ min: L.minSeconds, max: L.maxSeconds, noNaN: true }),
  })
  .map(({ fs, seconds }) => ({
    fs,
    n: Math.min(Math.floor(L.maxSeconds * fs), Math.max(Math.ceil(L.minSeconds * fs), Math.round(seconds * fs))),
  }))
  .chain(({ fs, n }) =>
    fc.record({
      version: fc.constantFrom(1 as const, 2 as const),
      capture_nonce: fc.string({ unit: fc.constantFrom(..."abcXYZ019-_.~!"), minLength: 8, maxLength: 128 }),
      captured_at: fc.constant("2026-05-01T12:00:00.000Z"),
      face: fc.record({
        model: fc.constantFrom("face-api/resnet128", "other-model"),
        embedding: unit,
        quality: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      signals: fc
        .record({
          pulse: series(n, -L.pulseMaxAbs, L.pulseMaxAbs),
          mouth: series(n, 0, 1),
          voice: series(n, 0, 1),
          valid: fc.option(
            series(n, 0, 1).map((xs) => xs.map((x) => (x >= 0.5 ? 1 : 0))),
            { nil: undefined },
          ),
          light: fc.record({ sequence: fc.constant("light-v1" as const), skin: colours(n), background: colours(n) }),
        })
        .map(({ valid, ...rest }) => ({ sample_rate_hz: fs, ...rest, ...(valid ? { valid } : {}) })),
    }),
  )
  // Version 1 carries no light; version 2 must.
  .map((d) => {
    if (d.version === 2) return d;
    const { light: _light, ...signals } = d.signals;
    return { ...d, signals };
  });

const baselineArb = fc.option(
  fc.record({
    heart_rate_bpm: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
    hr_variability_bpm: fc.double({ min: -1e3, max: 1e6, noNaN: true }),
  }),
  { nil: undefined },
);

function finiteEverywhere(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(finiteEverywhere);
  if (value && typeof value === "object") return Object.values(value).every(finiteEverywhere);
  return true;
}

function wellFormed(r: PresenceResult): void {
  expect(finiteEverywhere(r)).toBe(true);
  expect(r.reason === null || PRESENCE_REASONS.includes(r.reason)).toBe(true);
  expect(r.accepted).toBe(r.reason === null);
  expect(r.liveness.score).toBeGreaterThanOrEqual(0);
  expect(r.liveness.score).toBeLessThanOrEqual(1);
  expect(r.liveness.passed).toBe(r.liveness.reason === null);
  expect(r.coercion.score).toBeGreaterThanOrEqual(0);
  expect(r.coercion.score).toBeLessThanOrEqual(1);
  if (r.coercion.signal) expect(r.coercion.basis).toBe("baseline");
}

describe("property: the engine never throws", () => {
  it("evaluates any valid descriptor, extremes included, to a well-formed result", () => {
    fc.assert(
      fc.property(descriptorArb, baselineArb, (d, baseline) => {
        expect(parseDescriptor(d).ok).toBe(true);
        wellFormed(evaluatePresence(d, { baseline: baseline ?? null, now: "2026-05-01T12:01:00.000Z", expectedNonce: d.capture_nonce }));
      }),
      { numRuns: 150 },
    );
  });

  it("parses anything without throwing and names at least one field on failure", () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
          withNullPrototype: true,
        }),
        (x) => {
          const r = parseDescriptor(x);
          if (!r.ok) expect(r.fields.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("survives any single-field mutation of a real descriptor", () => {
    const base = simulateCapture({ person: 11, nonce: "property-base", seconds: 10 });
    const paths: string[][] = [
      ["version"],
      ["capture_nonce"],
      ["captured_at"],
      ["face"],
      ["face", "model"],
      ["face", "embedding"],
      ["face", "quality"],
      ["signals"],
      ["signals", "sample_rate_hz"],
      ["signals", "pulse"],
      ["signals", "mouth"],
      ["signals", "voice"],
      ["signals", "valid"],
      ["signals", "pulse", "3"],
      ["face", "embedding", "0"],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.jsonValue(), (path, value) => {
        const d = structuredClone(base) as unknown as Record<string, unknown>;
        let at: Record<string, unknown> = d;
        for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
        at[path[path.length - 1] as string] = value;
        const r = parseDescriptor(d);
        if (r.ok) wellFormed(evaluatePresence(r.descriptor));
        else for (const f of r.fields) expect(f.startsWith("face_template")).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
