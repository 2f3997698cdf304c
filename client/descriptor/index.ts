/**
 * Descriptors v1 and v2 from per-frame measurements, exactly as docs/presence-descriptor.md
 * sections 3 and 11 say; the browser client feeds it, the unit tests feed it synthetic frames.
 * Pure: no DOM, no clock, no randomness.
 *
 * @example
 * const descriptor = buildDescriptor({ nonce, capturedAt, grid, skin, mouth, voice: meter.envelope(), faces });
 */
import { presenceConfig } from "../../shared/engine/config";
import type { LightSignals, PresenceDescriptor } from "../../shared/engine/descriptor";
import { finishPulse, interpolate, movingAverage } from "../../shared/engine/dsp";
import { expectedLight, LIGHT_CHIP_SECONDS, LIGHT_PALETTE, LIGHT_SEQUENCE_V1, lightSequence } from "../../shared/engine/light";
import { fitLight, solveSymmetric } from "../../shared/engine/reflection";
import { type FaceObservation, summariseFace } from "./face";
import { posPulse } from "./pos";
import { type CaptureGrid, onGrid, validMask } from "./series";

export { EMBEDDING_FRAMES, type FaceObservation, summariseFace } from "./face";
export { type LitSample, PREFLIGHT, PREFLIGHT_SECONDS, preflightDepth, type Rgb } from "./light";
export { posPulse } from "./pos";
export { type CaptureGrid, gridTimes, mouthOpening, onGrid, VoiceMeter, validMask } from "./series";
export {
  backgroundBands,
  interOcularDistance,
  meanBackgroundRgb,
  meanSkinRgb,
  type PixelBox,
  type Point,
  regionMask,
  type SkinMask,
  skinMask,
} from "./skin";

/** Mean skin colour of one frame with a tracked face, at its capture time (seconds). */
export interface SkinSample {
  t: number;
  r: number;
  g: number;
  b: number;
}

/** Mouth opening of one frame with landmarks, at its capture time (seconds). */
export interface MouthSample {
  t: number;
  opening: number;
}

/** Everything one capture measured, on one clock. */
export interface CaptureMeasurements {
  nonce: string;
  /** Wall-clock time of `grid.t0`, ISO 8601. */
  capturedAt: string;
  grid: CaptureGrid;
  /** One sample per frame with a tracked face, ascending in time. */
  skin: readonly SkinSample[];
  /** One sample per frame with landmarks, ascending in time. */
  mouth: readonly MouthSample[];
  /** The `voice` series already on the grid (VoiceMeter.envelope()). */
  voice: readonly number[];
  /** Detections with face descriptors from a few frames. */
  faces: readonly FaceObservation[];
  /** `nonce-v1` when the reading was paced by challengeSchedule(nonce). */
  schedule?: "nonce-v1";
  /**
   * The light challenge: the screen showed lightSequence(nonce) on the capture clock, and this is
   * the mean background colour (meanBackgroundRgb) of the frames of `skin`, ascending in time.
   * Present: descriptor v2.
   */
  background?: readonly SkinSample[];
}

/**
 * The descriptor: `pulse` by POS from the skin colour, `mouth` from the landmarks, `voice` as
 * measured, `valid` from the frame times, `face` from the best detections; with `background`,
 * version 2 with the skin and background colours of the light challenge, the reflection taken out
 * of the skin colour before POS. Throws when no face was observed (nothing to describe); every
 * other shortfall is the engine's to judge.
 */
export function buildDescriptor(m: CaptureMeasurements): PresenceDescriptor {
  const face = summariseFace(m.faces);
  if (!face) throw new Error("no face was observed during the capture");
  const fs = m.grid.sampleRateHz;
  const times = m.skin.map((s) => s.t);
  const rgb = coloursOnGrid(m.skin, m.grid);
  const mouth = onGrid(
    m.mouth.map((s) => s.t),
    m.mouth.map((s) => s.opening),
    m.grid,
  );
  const light: LightSignals | undefined = m.background
    ? { sequence: LIGHT_SEQUENCE_V1, skin: colourTriples(rgb), background: colourTriples(coloursOnGrid(m.background, m.grid)) }
    : undefined;
  return {
    version: light ? 2 : 1,
    capture_nonce: m.nonce,
    captured_at: m.capturedAt,
    face,
    signals: {
      sample_rate_hz: fs,
      pulse: finishPulse(posPulse(light ? withoutReflection(rgb, light, m.nonce, fs) : rgb, fs), fs),
      mouth: Array.from(mouth, (x) => Math.round(Math.min(1, Math.max(0, x)) * 1e4) / 1e4),
      voice: [...m.voice],
      valid: validMask(times, m.grid),
      ...(m.schedule ? { schedule: m.schedule } : {}),
      ...(light ? { light } : {}),
    },
  };
}

type Rgb = { r: Float64Array; g: Float64Array; b: Float64Array };

function coloursOnGrid(samples: readonly SkinSample[], grid: CaptureGrid): Rgb {
  const times = samples.map((s) => s.t);
  return {
    r: onGrid(
      times,
      samples.map((s) => s.r),
      grid,
    ),
    g: onGrid(
      times,
      samples.map((s) => s.g),
      grid,
    ),
    b: onGrid(
      times,
      samples.map((s) => s.b),
      grid,
    ),
  };
}

/** The grid's colours as `[R, G, B]` per sample, clipped to [0, 255], 2 decimals (section 11.2). */
function colourTriples(c: Rgb): number[][] {
  const round = (x: number) => Math.round(Math.min(255, Math.max(0, x)) * 100) / 100;
  return Array.from(c.r, (r, i) => [round(r), round(c.g[i] as number), round(c.b[i] as number)]);
}

/**
 * The skin colour with the screen's reflection taken out (section 11.2, step 4), in two steps. The
 * engine's fit (fitLight) gives the lag and each channel's gain of the log colour per unit of
 * screen light; the light cast on the face at that lag is `c`, and a channel reflects it as a
 * factor 1 + d c. d starts at exp(gain) - 1 and is refined by least squares on the high-passed log
 * colour (the log of 1 + d c is not linear in c where a frame straddles a change of colour); each
 * channel is divided by 1 + d c. What remains there leaks into the pulse as broadband noise, most
 * of it at the changes of colour: how much of each colour a frame saw there depends on the camera's
 * exposure and shutter, which no model of the client knows. So the samples within one sample
 * period of a change (at the fitted lag), and those before the first chip, are replaced by linear
 * interpolation between the nearest samples on either side, or the nearest one at the start (4
 * samples in 15 at 15 Hz, 2 in 15 at 30 Hz; the pulse, below 3 Hz, passes).
 *
 * Then what a channel's own share of the light does not explain (D-498): the camera's colour
 * filters overlap and its colour matrix and video path (RGB to YUV with subsampled chroma, and
 * back) mix the channels, so a channel reflects two colours that light it alike differently (in
 * the browser, red under a green screen and under a blue one: 0.7 and 0.1 thousandths of the log
 * colour apart from the division's fit, the same sign in most captures). With five colours in the
 * palette that is one level per colour and channel, whatever the camera: each channel's log
 * colour is fitted by least squares, on its high-pass and away from the bridged samples, to one
 * step per colour of the palette but the first (whose level the high-pass takes as the constant),
 * and divided by the exponential of the fitted steps. A pulse, one frequency, projects little on
 * four broadband steps.
 */
export function withoutReflection(rgb: Rgb, light: LightSignals, nonce: string, fs: number): Rgb {
  const n = rgb.r.length;
  const fit = fitLight(light, nonce, fs, presenceConfig);
  const cast = expectedLight(lightSequence(nonce, n / fs), fs, n, fit.lagS);
  const window = Math.max(3, Math.round(presenceConfig.light.highPassSeconds * fs)) | 1;
  const highPass = (x: Float64Array) => {
    const slow = movingAverage(x, window);
    return x.map((v, i) => v - (slow[i] as number));
  };
  const clean = (x: Float64Array, ch: 0 | 1 | 2): Float64Array => {
    const c = cast[ch];
    const y = highPass(x.map((v) => Math.log(Math.max(v, 1e-6))));
    let d = Math.expm1(fit.gains[ch]);
    for (let iteration = 0; iteration < 3 && d > 0; iteration++) {
      const u = highPass(c.map((v) => Math.log1p(d * v)));
      let uy = 0;
      let uu = 0;
      for (let i = 0; i < n; i++) {
        uy += (u[i] as number) * (y[i] as number);
        uu += (u[i] as number) ** 2;
      }
      if (!(uu > 1e-18)) break;
      d = Math.max(0, Math.expm1((uy / uu) * Math.log1p(d)));
    }
    return x.map((v, i) => v / (1 + d * (c[i] as number)));
  };
  // Before the first chip (at the fitted lag) the face saw whatever the screen showed before the
  // capture, which no model here knows: bridged like a change.
  const chip = (t: number) => Math.floor((t - fit.lagS) / LIGHT_CHIP_SECONDS);
  const atChange = Array.from({ length: n }, (_, i) => {
    const before = chip(i / fs - 1 / fs);
    return before < 0 || before !== chip(i / fs + 1 / fs);
  });
  // The palette colour sample i saw at the fitted lag (-1 before the first chip), one step per colour but the first.
  const chips = lightSequence(nonce, n / fs);
  const steps = LIGHT_PALETTE.slice(1).map((_, j) =>
    Float64Array.from({ length: n }, (_, i) => {
      const k = chip(i / fs);
      return k >= 0 && chips[Math.min(k, chips.length - 1)] === j + 1 ? 1 : 0;
    }),
  );
  const regressors = steps.map(highPass);
  const edge = Math.min(Math.floor(n / 4), window >> 1);
  const fitted = Array.from({ length: n }, (_, i) => !atChange[i] && i >= edge && i < n - edge);
  const dot = (a: Float64Array, b: Float64Array) => {
    let s = 0;
    for (let i = 0; i < n; i++) if (fitted[i]) s += (a[i] as number) * (b[i] as number);
    return s;
  };
  const gram = regressors.map((a) => regressors.map((b) => dot(a, b)));
  const byColour = (x: Float64Array): Float64Array => {
    const y = highPass(x.map((v) => Math.log(Math.max(v, 1e-6))));
    const gains = solveSymmetric(
      gram,
      regressors.map((a) => dot(a, y)),
    );
    return x.map((v, i) => {
      let level = 0;
      for (let j = 0; j < steps.length; j++) level += (gains[j] as number) * (steps[j]![i] as number);
      return v * Math.exp(-level);
    });
  };
  const cleaned = (x: Float64Array, ch: 0 | 1 | 2) => byColour(bridged(clean(x, ch), atChange));
  return { r: cleaned(rgb.r, 0), g: cleaned(rgb.g, 1), b: cleaned(rgb.b, 2) };
}

/**
 * `x` with every sample where `gap` is true replaced by linear interpolation between the nearest
 * samples outside the gap (the nearest one held beyond them); unchanged when every sample is in it.
 */
function bridged(x: Float64Array, gap: readonly boolean[]): Float64Array {
  const kept = Array.from(x.keys()).filter((i) => !gap[i]);
  if (kept.length === 0) return Float64Array.from(x);
  const filled = interpolate(
    kept,
    kept.map((i) => x[i] as number),
    Array.from(x.keys()),
  );
  return x.map((v, i) => (gap[i] ? (filled[i] as number) : v));
}
