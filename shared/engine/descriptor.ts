/**
 * Presence descriptors v1 and v2: what the device sends instead of video or audio.
 * The shape, its bounds and the parser. The document is docs/presence-descriptor.md.
 * Version 2 is version 1 plus the light challenge (`signals.light`).
 */
import * as v from "valibot";
import { LIGHT_SEQUENCE_V1 } from "./light.js";

/** Identifier of the reference on-device face model (@vladmandic/face-api, 128-d ResNet descriptor). */
export const REFERENCE_FACE_MODEL = "face-api/resnet128";

/** Every bound of descriptor v1 in one place (the schema and the document use these). */
export const DESCRIPTOR_LIMITS = {
  nonceMinLength: 8,
  nonceMaxLength: 128,
  modelMaxLength: 64,
  embeddingLength: 128,
  embeddingMinNorm: 0.9,
  embeddingMaxNorm: 1.1,
  sampleRateMinHz: 10,
  sampleRateMaxHz: 60,
  minSeconds: 5,
  maxSeconds: 30,
  /** maxSeconds * sampleRateMaxHz */
  maxSamples: 1800,
  /** minSeconds * sampleRateMinHz */
  minSamples: 50,
  pulseMaxAbs: 10,
  /** Mean colour of a region, on the camera's 8-bit scale. */
  colourMax: 255,
} as const;

/** The descriptor versions the engine judges. */
export const DESCRIPTOR_VERSIONS = [1, 2] as const;

/**
 * The light challenge of descriptor v2 (docs/presence-descriptor.md, section 11): while the
 * person reads, the screen shows lightSequence(capture_nonce); the device reports, per sample,
 * the mean colour of the skin region and of a background region on the grid of the other series.
 */
export interface LightSignals {
  /** The sequence the screen showed: `light-v1`. */
  sequence: "light-v1";
  /** Per sample, the mean [R, G, B] of the skin region as the camera delivered it, 0 to 255. */
  skin: number[][];
  /** Per sample, the mean [R, G, B] of the background region (the frame outside the head), 0 to 255. */
  background: number[][];
}

/** Descriptor v1 or v2 (see docs/presence-descriptor.md for how each field is computed on the device). */
export interface PresenceDescriptor {
  /** 1, or 2 with `signals.light` (required in 2, refused in 1). */
  version: 1 | 2;
  /** The nonce of the request this capture answers; 8 to 128 printable ASCII characters. */
  capture_nonce: string;
  /** ISO 8601 time of the first sample (UTC recommended, e.g. `2026-05-01T12:00:00.000Z`). */
  captured_at: string;
  face: {
    /** Which on-device model produced the embedding, e.g. `face-api/resnet128`. */
    model: string;
    /** 128 numbers, L2-normalised on the device. */
    embedding: number[];
    /** Face detection / alignment quality, 0 to 1. */
    quality: number;
  };
  signals: {
    /** Samples per second of every series, 10 to 60. */
    sample_rate_hz: number;
    /** Remote photoplethysmography (POS), z-scored, each value in [-10, 10]. */
    pulse: number[];
    /** Inner-lip gap over the outer-eye-corner distance, each value in [0, 1]. */
    mouth: number[];
    /** Speech envelope: RMS level mapped from [-60, 0] dBFS to [0, 1]. */
    voice: number[];
    /** Optional: 1 when a face was tracked in a real frame at this sample, 0 when interpolated. */
    valid?: number[];
    /**
     * Optional: `nonce-v1` when the client paced the reading with
     * challengeSchedule(capture_nonce) (shared/engine/schedule.ts); the engine then
     * applies the paced checks. Absent: a free reading, judged as before.
     */
    schedule?: "nonce-v1";
    /** Version 2 only (and required there): the reflection of the light challenge. */
    light?: LightSignals;
  };
}

const L = DESCRIPTOR_LIMITS;

function boundedSeries(min: number, max: number) {
  return v.pipe(
    v.array(v.number()),
    v.minLength(L.minSamples),
    v.maxLength(L.maxSamples),
    v.check((xs) => {
      for (let i = 0; i < xs.length; i++) {
        const x = xs[i] as number;
        if (!(x >= min && x <= max)) return false;
      }
      return true;
    }, `every value must be a finite number in [${min}, ${max}]`),
  );
}

const validMask = v.pipe(
  v.array(v.number()),
  v.minLength(L.minSamples),
  v.maxLength(L.maxSamples),
  v.check((xs) => xs.every((x) => x === 0 || x === 1), "every value must be 0 or 1"),
);

/** N mean colours [R, G, B], each channel a finite number in [0, 255]. */
const colourSeries = v.pipe(
  v.array(v.array(v.number())),
  v.minLength(L.minSamples),
  v.maxLength(L.maxSamples),
  v.check((xs) => {
    for (const c of xs) {
      if (c.length !== 3) return false;
      for (let k = 0; k < 3; k++) {
        const x = c[k] as number;
        if (!(x >= 0 && x <= L.colourMax)) return false;
      }
    }
    return true;
  }, `every sample must be [R, G, B] with finite values in [0, ${L.colourMax}]`),
);

const lightSchema = v.pipe(
  v.strictObject({
    sequence: v.literal(LIGHT_SEQUENCE_V1),
    skin: colourSeries,
    background: colourSeries,
  }),
  v.forward(
    v.check((l) => l.background.length === l.skin.length, "must have the length of skin"),
    ["background"],
  ),
);

function norm(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x * x;
  return Math.sqrt(s);
}

type SignalsShape = {
  sample_rate_hz: number;
  pulse: number[];
  mouth: number[];
  voice: number[];
  valid?: number[] | undefined;
  schedule?: "nonce-v1" | undefined;
  light?: { skin: number[][]; background: number[][] } | undefined;
};

function samplesFit(s: SignalsShape): boolean {
  // An out-of-range rate is reported on its own field; do not blame the series for it.
  if (!(s.sample_rate_hz >= L.sampleRateMinHz && s.sample_rate_hz <= L.sampleRateMaxHz)) return true;
  const n = s.pulse.length;
  const seconds = n / s.sample_rate_hz;
  return seconds >= L.minSeconds - 1e-9 && seconds <= L.maxSeconds + 1e-9;
}

const signalsEntries = {
  sample_rate_hz: v.pipe(v.number(), v.finite(), v.minValue(L.sampleRateMinHz), v.maxValue(L.sampleRateMaxHz)),
  pulse: boundedSeries(-L.pulseMaxAbs, L.pulseMaxAbs),
  mouth: boundedSeries(0, 1),
  voice: boundedSeries(0, 1),
  valid: v.optional(validMask),
  schedule: v.optional(v.literal("nonce-v1")),
};

/** The signals of a version: v1's series, and in v2 the light challenge as well. */
const signalsSchema = (version: 1 | 2) =>
  v.pipe(
    version === 1 ? v.strictObject(signalsEntries) : v.strictObject({ ...signalsEntries, light: lightSchema }),
    v.forward(
      v.check((s: SignalsShape) => samplesFit(s), `duration must be ${L.minSeconds} to ${L.maxSeconds} seconds`),
      ["pulse"],
    ),
    v.forward(
      v.check((s: SignalsShape) => s.mouth.length === s.pulse.length, "must have the length of pulse"),
      ["mouth"],
    ),
    v.forward(
      v.check((s: SignalsShape) => s.voice.length === s.pulse.length, "must have the length of pulse"),
      ["voice"],
    ),
    v.forward(
      v.check((s: SignalsShape) => s.valid === undefined || s.valid.length === s.pulse.length, "must have the length of pulse"),
      ["valid"],
    ),
    v.forward(
      v.check((s: SignalsShape) => s.light === undefined || s.light.skin.length === s.pulse.length, "must have the length of pulse"),
      ["light"],
    ),
  );

const descriptorSchema = (version: 1 | 2) =>
  v.strictObject({
    version: v.literal(version),
    capture_nonce: v.pipe(
      v.string(),
      v.minLength(L.nonceMinLength),
      v.maxLength(L.nonceMaxLength),
      v.regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces"),
    ),
    captured_at: v.pipe(
      v.string(),
      v.maxLength(40),
      v.isoTimestamp(),
      v.check((s) => Number.isFinite(Date.parse(s)), "must be a valid time"),
    ),
    face: v.strictObject({
      model: v.pipe(v.string(), v.minLength(1), v.maxLength(L.modelMaxLength), v.regex(/^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/)),
      embedding: v.pipe(
        v.array(v.pipe(v.number(), v.finite(), v.minValue(-1), v.maxValue(1))),
        v.length(L.embeddingLength),
        v.check((xs) => {
          const n = norm(xs);
          return n >= L.embeddingMinNorm && n <= L.embeddingMaxNorm;
        }, "must be L2-normalised"),
      ),
      quality: v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1)),
    }),
    signals: signalsSchema(version),
  });

/**
 * The valibot schema of descriptors v1 and v2. Every array length and every value is bounded.
 *
 * @example
 * const r = v.safeParse(presenceDescriptorSchema, body.face_template);
 */
export const presenceDescriptorSchema = v.variant("version", [descriptorSchema(1), descriptorSchema(2)]);

/** The outcome of {@link parseDescriptor}. */
export type ParseDescriptorResult = { ok: true; descriptor: PresenceDescriptor } | { ok: false; fields: string[] };

/**
 * Validates an untrusted descriptor. Never throws. On failure, names each bad
 * field by its dotted path under `path` (array indices are dropped), e.g.
 * `face_template.signals.pulse`.
 *
 * @example
 * const r = parseDescriptor(body.face_template);
 * if (!r.ok) return invalidInput(r.fields);
 * const result = evaluatePresence(r.descriptor);
 */
export function parseDescriptor(input: unknown, options: { path?: string } = {}): ParseDescriptorResult {
  const prefix = options.path ?? "face_template";
  if (typeof input !== "object" || input === null || Array.isArray(input)) return { ok: false, fields: [prefix] };
  let result: ReturnType<typeof v.safeParse<typeof presenceDescriptorSchema>>;
  try {
    result = v.safeParse(presenceDescriptorSchema, input);
  } catch {
    return { ok: false, fields: [prefix] };
  }
  if (result.success) return { ok: true, descriptor: result.output as PresenceDescriptor };
  const fields: string[] = [];
  for (const issue of result.issues) {
    const keys: string[] = [];
    for (const item of issue.path ?? []) {
      if (typeof item.key === "string") keys.push(item.key);
      else break;
    }
    const field = [prefix, ...keys].filter((s) => s.length > 0).join(".");
    if (!fields.includes(field)) fields.push(field);
  }
  return { ok: false, fields: fields.length > 0 ? fields : [prefix] };
}
