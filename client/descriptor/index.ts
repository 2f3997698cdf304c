/**
 * Descriptor v1 from per-frame measurements, exactly as docs/presence-descriptor.md section 3
 * says; the browser client feeds it, the unit tests feed it synthetic frames. Pure: no DOM, no
 * clock, no randomness.
 *
 * @example
 * const descriptor = buildDescriptor({ nonce, capturedAt, grid, skin, mouth, voice: meter.envelope(), faces });
 */
import type { PresenceDescriptor } from "../../shared/engine/descriptor";
import { finishPulse } from "../../shared/engine/dsp";
import { type FaceObservation, summariseFace } from "./face";
import { posPulse } from "./pos";
import { type CaptureGrid, onGrid, validMask } from "./series";

export { EMBEDDING_FRAMES, type FaceObservation, summariseFace } from "./face";
export { posPulse } from "./pos";
export { type CaptureGrid, gridTimes, mouthOpening, onGrid, VoiceMeter, validMask } from "./series";
export { interOcularDistance, meanSkinRgb, type PixelBox, type Point, type SkinMask, skinMask } from "./skin";

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
}

/**
 * Descriptor v1: `pulse` by POS from the skin colour, `mouth` from the landmarks, `voice` as
 * measured, `valid` from the frame times, `face` from the best detections. Throws when no face
 * was observed (nothing to describe); every other shortfall is the engine's to judge.
 */
export function buildDescriptor(m: CaptureMeasurements): PresenceDescriptor {
  const face = summariseFace(m.faces);
  if (!face) throw new Error("no face was observed during the capture");
  const fs = m.grid.sampleRateHz;
  const times = m.skin.map((s) => s.t);
  const rgb = {
    r: onGrid(
      times,
      m.skin.map((s) => s.r),
      m.grid,
    ),
    g: onGrid(
      times,
      m.skin.map((s) => s.g),
      m.grid,
    ),
    b: onGrid(
      times,
      m.skin.map((s) => s.b),
      m.grid,
    ),
  };
  const mouth = onGrid(
    m.mouth.map((s) => s.t),
    m.mouth.map((s) => s.opening),
    m.grid,
  );
  return {
    version: 1,
    capture_nonce: m.nonce,
    captured_at: m.capturedAt,
    face,
    signals: {
      sample_rate_hz: fs,
      pulse: finishPulse(posPulse(rgb, fs), fs),
      mouth: Array.from(mouth, (x) => Math.round(Math.min(1, Math.max(0, x)) * 1e4) / 1e4),
      voice: [...m.voice],
      valid: validMask(times, m.grid),
      ...(m.schedule ? { schedule: m.schedule } : {}),
    },
  };
}
