import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { DESCRIPTOR_LIMITS, type PresenceDescriptor, parseDescriptor, presenceDescriptorSchema } from "../../../shared/engine";
import { simulateCapture } from "../../../shared/simulator";

const valid = (): PresenceDescriptor => simulateCapture({ person: 3, nonce: "nonce-desc-1", seconds: 10 });

function broken(mutate: (d: Record<string, any>) => void): unknown {
  const d = structuredClone(valid()) as Record<string, any>;
  mutate(d);
  return d;
}

describe("parseDescriptor", () => {
  it("accepts a simulator descriptor unchanged", () => {
    const d = valid();
    const r = parseDescriptor(d);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.descriptor).toEqual(d);
    expect(v.safeParse(presenceDescriptorSchema, d).success).toBe(true);
  });

  it("accepts a descriptor without the optional valid mask", () => {
    expect(parseDescriptor(broken((d) => delete d.signals.valid)).ok).toBe(true);
  });

  const cases: Array<[string, (d: Record<string, any>) => void, string[]]> = [
    ["unknown version", (d) => (d.version = 3), ["face_template.version"]],
    ["version 2 without the light challenge", (d) => (d.version = 2), ["face_template.signals.light"]],
    [
      "version 1 with the light challenge",
      (d) =>
        (d.signals.light = {
          sequence: "light-v1",
          skin: d.signals.pulse.map(() => [1, 2, 3]),
          background: d.signals.pulse.map(() => [1, 2, 3]),
        }),
      ["face_template.signals.light"],
    ],
    ["short nonce", (d) => (d.capture_nonce = "abc"), ["face_template.capture_nonce"]],
    ["nonce with a space", (d) => (d.capture_nonce = "abc def ghi"), ["face_template.capture_nonce"]],
    ["long nonce", (d) => (d.capture_nonce = "x".repeat(129)), ["face_template.capture_nonce"]],
    ["bad time", (d) => (d.captured_at = "yesterday"), ["face_template.captured_at"]],
    ["empty model", (d) => (d.face.model = ""), ["face_template.face.model"]],
    ["short embedding", (d) => d.face.embedding.pop(), ["face_template.face.embedding"]],
    ["embedding not normalised", (d) => (d.face.embedding = d.face.embedding.map((x: number) => x / 2)), ["face_template.face.embedding"]],
    ["embedding value out of range", (d) => (d.face.embedding[5] = 1.5), ["face_template.face.embedding"]],
    ["quality above 1", (d) => (d.face.quality = 1.2), ["face_template.face.quality"]],
    ["sample rate too high", (d) => (d.signals.sample_rate_hz = 120), ["face_template.signals.sample_rate_hz"]],
    ["pulse value out of range", (d) => (d.signals.pulse[10] = 11), ["face_template.signals.pulse"]],
    ["pulse with NaN", (d) => (d.signals.pulse[10] = Number.NaN), ["face_template.signals.pulse"]],
    ["pulse with Infinity", (d) => (d.signals.pulse[10] = Number.POSITIVE_INFINITY), ["face_template.signals.pulse"]],
    ["pulse with a string", (d) => (d.signals.pulse[10] = "1"), ["face_template.signals.pulse"]],
    ["mouth shorter than pulse", (d) => d.signals.mouth.pop(), ["face_template.signals.mouth"]],
    ["voice above 1", (d) => (d.signals.voice[0] = 1.01), ["face_template.signals.voice"]],
    ["valid mask not 0/1", (d) => (d.signals.valid[0] = 0.5), ["face_template.signals.valid"]],
    [
      "too long",
      (d) => {
        for (const k of ["pulse", "mouth", "voice", "valid"]) d.signals[k] = new Array(DESCRIPTOR_LIMITS.maxSamples + 1).fill(0);
      },
      ["face_template.signals.pulse", "face_template.signals.mouth", "face_template.signals.voice", "face_template.signals.valid"],
    ],
    [
      "under five seconds",
      (d) => {
        for (const k of ["pulse", "mouth", "voice", "valid"]) d.signals[k] = d.signals[k].slice(0, 120);
      },
      ["face_template.signals.pulse"],
    ],
    ["unknown field", (d) => (d.extra = 1), ["face_template.extra"]],
    ["unknown signal", (d) => (d.signals.rgb = []), ["face_template.signals.rgb"]],
    ["missing face", (d) => delete d.face, ["face_template.face"]],
  ];
  for (const [name, mutate, fields] of cases) {
    it(`names the field: ${name}`, () => {
      const r = parseDescriptor(broken(mutate));
      expect(r).toEqual({ ok: false, fields });
    });
  }

  it("uses the given path prefix", () => {
    expect(
      parseDescriptor(
        broken((d) => (d.face.quality = -1)),
        { path: "descriptor" },
      ),
    ).toEqual({
      ok: false,
      fields: ["descriptor.face.quality"],
    });
    expect(parseDescriptor(null)).toEqual({ ok: false, fields: ["face_template"] });
    expect(parseDescriptor([1, 2, 3])).toEqual({ ok: false, fields: ["face_template"] });
  });

  it("never throws, even on hostile objects", () => {
    const hostile = Object.defineProperty({}, "version", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    expect(() => parseDescriptor(hostile)).not.toThrow();
    expect(parseDescriptor(hostile).ok).toBe(false);
    const cyclic: Record<string, unknown> = { version: 1 };
    cyclic.face = cyclic;
    expect(parseDescriptor(cyclic).ok).toBe(false);
  });
});

describe("parseDescriptor, version 2 (the light challenge)", () => {
  const v2 = (): PresenceDescriptor => simulateCapture({ person: 3, nonce: "nonce-desc-2", seconds: 10, light: true });
  const brokenV2 = (mutate: (d: Record<string, any>) => void): unknown => {
    const d = structuredClone(v2()) as Record<string, any>;
    mutate(d);
    return d;
  };

  it("accepts a simulator descriptor v2 unchanged, and version 1 beside it", () => {
    const d = v2();
    expect(d.version).toBe(2);
    const r = parseDescriptor(d);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.descriptor).toEqual(d);
    expect(parseDescriptor(valid()).ok).toBe(true);
  });

  const cases: Array<[string, (d: Record<string, any>) => void, string[]]> = [
    ["another sequence", (d) => (d.signals.light.sequence = "light-v0"), ["face_template.signals.light.sequence"]],
    [
      "light shorter than pulse",
      (d) => {
        d.signals.light.skin.pop();
        d.signals.light.background.pop();
      },
      ["face_template.signals.light"],
    ],
    ["background shorter than skin", (d) => d.signals.light.background.pop(), ["face_template.signals.light.background"]],
    ["a colour above 255", (d) => (d.signals.light.skin[4] = [256, 10, 10]), ["face_template.signals.light.skin"]],
    ["a colour with two channels", (d) => (d.signals.light.background[4] = [10, 10]), ["face_template.signals.light.background"]],
    ["a NaN channel", (d) => (d.signals.light.skin[4][1] = Number.NaN), ["face_template.signals.light.skin"]],
    ["an unknown light field", (d) => (d.signals.light.gain = 1), ["face_template.signals.light.gain"]],
    ["no light", (d) => delete d.signals.light, ["face_template.signals.light"]],
  ];
  for (const [name, mutate, fields] of cases) {
    it(`names the field: ${name}`, () => {
      expect(parseDescriptor(brokenV2(mutate))).toEqual({ ok: false, fields });
    });
  }
});
