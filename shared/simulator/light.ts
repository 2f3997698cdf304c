/**
 * The physics of the light challenge for the simulator: what a camera reports of the skin and of
 * the background while the screen lights the face with lightSequence(nonce), and what it reports
 * for each way of presenting a face that is not there (shared/simulator/session.ts).
 *
 * The model (every number is an assumption; docs/benchmarks.md says which ones drive the result):
 * - The screen is a small Lambertian source: its illuminance at the face is luminance x area /
 *   distance² (a phone at 400 cd/m², 85 cm², 30 cm gives about 38 lx; a laptop at 300 cd/m²,
 *   600 cm², 50 cm about 72 lx), against an ambient of tens (evening room) to thousands (near a
 *   window) of lux with its own tint. The background, further away, gets the screen's light
 *   scaled by (face distance / background distance)²; part of the background region is the
 *   person's hair and shoulders, lit like the face (spill).
 * - The skin reflects each channel with its own albedo; head motion shades it slowly.
 * - The camera: auto-exposure drives the frame's mean towards mid-grey and auto white balance
 *   its channels towards grey, each with a time constant; local tone mapping compresses the
 *   face's contrast by a fraction; sRGB-like gamma; clipping at 255; the region means carry
 *   noise from the mask's jitter and the sensor, more with motion.
 */
import { lightOver, lightSequence } from "../engine/light.js";
import type { Rng } from "../engine/rng.js";

type Rgb = [number, number, number];

/** The conditions of one capture under the light challenge. */
export interface LightConditions {
  /** Illuminance of the room at the face, lux. */
  ambientLux: number;
  /** The ambient light's share per channel (mean 1): warm light has less blue. */
  ambientTint: Rgb;
  /** The screen's white luminance, cd/m². */
  screenNits: number;
  /** The screen's lit area, m². */
  screenAreaM2: number;
  /** Face to screen, m. */
  faceDistanceM: number;
  /** Background to screen, m. */
  backgroundDistanceM: number;
  backgroundAlbedo: number;
  /** Fraction of the background region that is the person (hair, shoulders), lit like the face. */
  backgroundSpill: number;
  skinAlbedo: Rgb;
  /** Share of the frame the face covers (what auto-exposure meters). */
  faceFraction: number;
  /** Time constants of auto-exposure and auto white balance, seconds. */
  aeTauS: number;
  awbTauS: number;
  /** Fraction by which local tone mapping flattens the face against the frame, 0 to 1. */
  toneMapping: number;
  /** Display latency: from the sequence's clock to the light leaving the screen, seconds. */
  displayLagS: number;
  /** Noise of the region means, 8-bit levels (standard deviation per frame), still and with full motion. */
  noiseLevels: number;
  /**
   * Residual of the reflection in the pulse after the client has removed it (relative to the pulse's
   * amplitude at a reflection depth of 0.2): the regression is not perfect (non-linearity, motion).
   */
  pulseResidual: number;
}

/** The screen's illuminance at the face, lux. */
export function screenLux(c: LightConditions): number {
  return (c.screenNits * c.screenAreaM2) / c.faceDistanceM ** 2;
}

/** The screen's light at the face over the ambient's. */
export function reflectionDepth(c: LightConditions): number {
  return screenLux(c) / c.ambientLux;
}

/**
 * About what the engine's `light.depth` reads in these conditions, and what the client's preflight
 * measures the same way: the camera's gamma and local tone mapping flatten the reflection, and
 * the log of (1 + depth) grows more slowly than the depth.
 */
export function measuredDepth(c: LightConditions): number {
  return GAMMA * (1 - c.toneMapping) * Math.log1p(reflectionDepth(c));
}

function logUniform(rng: Rng, lo: number, hi: number): number {
  return Math.exp(rng.uniform(Math.log(lo), Math.log(hi)));
}

function skinOf(rng: Rng): Rgb {
  // From pale to dark skin: albedo falls, red stays strongest.
  const tone = rng.uniform(0, 1);
  const r = 0.55 - 0.4 * tone;
  return [r, r * rng.uniform(0.62, 0.75), r * rng.uniform(0.5, 0.62)];
}

/**
 * Conditions anywhere: a phone or a laptop at whatever brightness and distance, a room from a dim
 * evening to a desk by the window, any camera.
 */
export function wildLight(rng: Rng): LightConditions {
  const phone = rng.next() < 0.5;
  const warm = rng.uniform(0, 1);
  return {
    ambientLux: logUniform(rng, 20, 3000),
    ambientTint: [1 + 0.25 * warm, 1, 1 - 0.3 * warm],
    screenNits: phone ? rng.uniform(150, 600) : rng.uniform(120, 400),
    screenAreaM2: phone ? rng.uniform(0.006, 0.011) : rng.uniform(0.035, 0.09),
    faceDistanceM: phone ? rng.uniform(0.22, 0.5) : rng.uniform(0.35, 0.8),
    backgroundDistanceM: rng.uniform(0.8, 4),
    backgroundAlbedo: rng.uniform(0.1, 0.8),
    backgroundSpill: rng.uniform(0, 0.35),
    skinAlbedo: skinOf(rng),
    faceFraction: rng.uniform(0.05, 0.5),
    aeTauS: rng.uniform(0.2, 1.5),
    awbTauS: rng.uniform(0.5, 4),
    toneMapping: rng.uniform(0, 0.6),
    displayLagS: rng.uniform(0.015, 0.12),
    noiseLevels: rng.uniform(0.1, 1.5),
    pulseResidual: rng.uniform(0, 0.5),
  };
}

/** The reflection depth the client's preflight requires before it records (docs/presence-descriptor.md 11.3). */
export const PREFLIGHT_MIN_DEPTH = 0.04;

/**
 * Conditions a client enforces before it records: the screen at full brightness, the face close
 * enough to fill a fifth of the frame, and a preflight flash whose reflection shows the screen
 * lighting the face at least PREFLIGHT_MIN_DEPTH of the ambient (else the person is asked to dim
 * the room or come closer). Drawn as the wild conditions that pass those checks.
 */
export function controlledLight(rng: Rng): LightConditions {
  for (let attempt = 0; ; attempt++) {
    const c = wildLight(rng);
    c.screenNits = Math.max(c.screenNits, c.screenAreaM2 < 0.02 ? 450 : 300);
    c.faceFraction = Math.max(c.faceFraction, 0.2);
    c.faceDistanceM = Math.min(c.faceDistanceM, c.screenAreaM2 < 0.02 ? 0.35 : 0.6);
    c.noiseLevels = Math.min(c.noiseLevels, 0.8);
    if (measuredDepth(c) >= PREFLIGHT_MIN_DEPTH || attempt >= 200) return c;
  }
}

/** Studio conditions of the sandbox captures: a dim room, a bright laptop screen, a still face. */
export function sandboxLight(rng: Rng): LightConditions {
  return {
    ...controlledLight(rng),
    ambientLux: rng.uniform(80, 200),
    screenNits: 350,
    screenAreaM2: 0.06,
    faceDistanceM: rng.uniform(0.4, 0.5),
    noiseLevels: 0.2,
    toneMapping: rng.uniform(0, 0.2),
  };
}

/** How the light on the camera's "face" behaves. */
export type LightPresentation =
  /** A face (or a print of one) in front of the screen: it reflects the sequence of `nonce`, `delayS` late. */
  | { kind: "lit"; nonce: string; delayS?: number }
  /** Video injected into the camera: its own, steady light; nothing follows the screen. */
  | { kind: "unlit" }
  /** A display held to the camera showing a face: only the glare of the screen's light on its glass moves. */
  | { kind: "display"; nonce: string };

/** The device's light series: per sample, mean skin and background colour, 8-bit. */
export interface LightSeries {
  skin: number[][];
  background: number[][];
  /** The face's relative light change per unit of screen light (the true depth), for the pulse residual. */
  depth: number;
  /** The screen's light on the face over the capture (luminance, 0 to 1), per sample: what leaks into the pulse. */
  screenLuminance: Float64Array;
}

const GAMMA = 1 / 2.2;

/**
 * The light series at the camera's sample times `frameTimes` (capture clock, seconds), before the
 * device resamples them (the caller interpolates dropped frames). `motion` is the session's
 * motion (0 to 1).
 */
export function lightSeries(
  rng: Rng,
  c: LightConditions,
  presentation: LightPresentation,
  frameTimes: ArrayLike<number>,
  fs: number,
  motion: number,
): LightSeries {
  const n = frameTimes.length;
  const seconds = n / fs + 2;
  const chips = presentation.kind === "unlit" ? [] : lightSequence(presentation.nonce, seconds + 2);
  const screen = screenLux(c);
  const ambient = c.ambientTint.map((t) => c.ambientLux * t) as Rgb;
  const farFactor = (c.faceDistanceM / c.backgroundDistanceM) ** 2;
  // A display held to the camera: the face it shows glows at its own luminance; its glass reflects a little.
  const displayNits = presentation.kind === "display" ? rng.uniform(80, 300) : 0;
  const glare = presentation.kind === "display" ? rng.uniform(0.005, 0.04) : 0;
  const displayFillsFrame = rng.next() < 0.5;
  // An injected video: the recording's own light, drifting slowly.
  const recordedLight = rng.uniform(0.5, 2);
  const delay = c.displayLagS + (presentation.kind === "lit" ? (presentation.delayS ?? 0) : 0);

  const shadingSd = 0.01 + 0.04 * motion;
  const shadingStep = Math.exp(-1 / (fs * 1.5));
  let shading = 0;
  let aeGain = Number.NaN;
  const awb: Rgb = [1, 1, 1];
  const aeStep = 1 - Math.exp(-1 / (fs * c.aeTauS));
  const awbStep = 1 - Math.exp(-1 / (fs * c.awbTauS));
  const noise = c.noiseLevels * (0.3 + 0.7 * motion);
  const skinOut: number[][] = [];
  const backgroundOut: number[][] = [];
  const luminance = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = frameTimes[i] as number;
    const lit = chips.length > 0 ? lightOver(chips, t - delay - 0.5 / fs, t - delay + 0.5 / fs) : ([0, 0, 0] as Rgb);
    luminance[i] = 0.2126 * lit[0] + 0.7152 * lit[1] + 0.0722 * lit[2];
    shading = shading * shadingStep + shadingSd * Math.sqrt(1 - shadingStep * shadingStep) * rng.normal();
    const skinRad: Rgb = [0, 0, 0];
    const bgRad: Rgb = [0, 0, 0];
    for (let ch = 0; ch < 3; ch++) {
      const onFace = ambient[ch]! + screen * lit[ch]!;
      const onBackground = ambient[ch]! + screen * farFactor * lit[ch]!;
      const room = c.backgroundAlbedo * onBackground;
      if (presentation.kind === "lit") {
        skinRad[ch] = c.skinAlbedo[ch]! * onFace * Math.exp(shading);
        bgRad[ch] = (1 - c.backgroundSpill) * room + c.backgroundSpill * 0.1 * onFace;
      } else if (presentation.kind === "unlit") {
        const steady = recordedLight * c.ambientLux * Math.exp(shading);
        skinRad[ch] = c.skinAlbedo[ch]! * steady * c.ambientTint[ch]!;
        bgRad[ch] = c.backgroundAlbedo * steady * c.ambientTint[ch]! * (1 + 0.3 * shading);
      } else {
        // Luminance of an emissive display in lux-equivalents (x pi), plus the glare of the light on its glass.
        const shown = Math.PI * displayNits * Math.exp(shading);
        const glass = glare * onFace;
        skinRad[ch] = c.skinAlbedo[ch]! * 2 * shown + glass;
        const displayBackground = c.backgroundAlbedo * shown + glass;
        bgRad[ch] = displayFillsFrame ? displayBackground : room;
      }
    }
    // Auto-exposure meters the frame; auto white balance pulls its channels to grey.
    const frame = skinRad.map((s, ch) => c.faceFraction * s + (1 - c.faceFraction) * bgRad[ch]!) as Rgb;
    const frameLuma = (frame[0] + frame[1] + frame[2]) / 3;
    const target = 0.18 / Math.max(1e-9, frameLuma);
    aeGain = Number.isNaN(aeGain) ? target : Math.exp(Math.log(aeGain) + aeStep * (Math.log(target) - Math.log(aeGain)));
    for (let ch = 0; ch < 3; ch++) {
      const grey = frameLuma / Math.max(1e-9, frame[ch]!);
      awb[ch] = i === 0 ? grey : awb[ch]! + awbStep * (grey - awb[ch]!);
    }
    // Local tone mapping pulls the face's level part of the way back to where the frame's is.
    const flatten = (ch: number): number => (frame[ch]! / Math.max(1e-9, skinRad[ch]!)) ** c.toneMapping;
    const encode = (x: number): number => Math.min(255, Math.max(0, 255 * Math.max(0, x) ** GAMMA + noise * rng.normal()));
    skinOut.push([0, 1, 2].map((ch) => round2(encode(aeGain * awb[ch]! * skinRad[ch]! * flatten(ch)))));
    backgroundOut.push([0, 1, 2].map((ch) => round2(encode(aeGain * awb[ch]! * bgRad[ch]!))));
  }
  return { skin: skinOut, background: backgroundOut, depth: screen / c.ambientLux, screenLuminance: luminance };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
