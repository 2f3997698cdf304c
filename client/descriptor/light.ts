/**
 * The light challenge's preflight (docs/presence-descriptor.md 11.2 step 1 and 11.3): before the
 * recording the screen shows white, then black, and the client measures how strongly the face
 * reflects the screen, the way the engine measures the reflection during the capture (11.4). Too
 * weak a reflection (a bright room, a dim screen, a face too far) would fail the light check after
 * the whole reading, so the person is asked to change it first. Pure: samples in, a number out.
 *
 * @example
 * const depth = preflightDepth(samples, startedAt); // 0.12: strong enough (PREFLIGHT.minDepth)
 */

/** A colour's mean R, G and B, 0 to 255. */
export interface Rgb {
  r: number;
  g: number;
  b: number;
}

/** One frame under the light: the skin's and the background's mean colours, at the frame's capture time (seconds). */
export interface LitSample {
  t: number;
  skin: Rgb;
  background: Rgb;
}

/**
 * The preflight's flash: each step shown for `stepSeconds` from the start, white then black (one
 * change a second, well below WCAG 2.3.1's three flashes), the first `settleSeconds` of each step
 * left out of the measure (the display's latency and the frame that straddles the change). A depth
 * below `minDepth` (11.3) sends the person somewhere dimmer or closer to the screen.
 */
export const PREFLIGHT = {
  steps: [
    { hex: "#ffffff", linear: 1 },
    { hex: "#000000", linear: 0 },
  ],
  stepSeconds: 0.5,
  settleSeconds: 0.2,
  minDepth: 0.04,
} as const;

/** How long the preflight shows its flash, seconds. */
export const PREFLIGHT_SECONDS = PREFLIGHT.steps.length * PREFLIGHT.stepSeconds;

/**
 * The reflection's depth in the preflight that started at `start` (capture clock, seconds): per
 * channel the log colour ratio `ln(1 + skin) - ln(1 + background)` (the camera's exposure and
 * white balance cancel in it, as in 11.4 step 1), its mean over the settled part of the white step
 * less its mean over the settled part of the black step, per unit of light between them; the mean
 * over the three channels. Null when a step has no frame to measure.
 */
export function preflightDepth(samples: readonly LitSample[], start: number): number | null {
  const [white, black] = PREFLIGHT.steps.map((step, k) => {
    const from = start + k * PREFLIGHT.stepSeconds + PREFLIGHT.settleSeconds;
    const to = start + (k + 1) * PREFLIGHT.stepSeconds;
    return { linear: step.linear, frames: samples.filter((s) => s.t >= from && s.t < to) };
  }) as [{ linear: number; frames: LitSample[] }, { linear: number; frames: LitSample[] }];
  if (white.frames.length === 0 || black.frames.length === 0) return null;
  const ratio = (frames: readonly LitSample[], channel: keyof Rgb) =>
    frames.reduce((sum, s) => sum + Math.log1p(s.skin[channel]) - Math.log1p(s.background[channel]), 0) / frames.length;
  const channels = ["r", "g", "b"] as const;
  const gains = channels.map((channel) => (ratio(white.frames, channel) - ratio(black.frames, channel)) / (white.linear - black.linear));
  return gains.reduce((sum, g) => sum + g, 0) / gains.length;
}
