/**
 * The `mouth` and `voice` series and the capture grid (docs/presence-descriptor.md 1.4, 3.3, 3.4,
 * 3.5). Pure: landmarks, timestamps and audio samples in, numbers out.
 */
import { interpolate } from "../../shared/engine/dsp";
import type { Point } from "./skin";

/** The capture's uniform clock: `t_i = t0 + i / sampleRateHz`, i = 0 .. samples - 1, in seconds. */
export interface CaptureGrid {
  t0: number;
  sampleRateHz: number;
  samples: number;
}

/** The grid's sample times. */
export function gridTimes(grid: CaptureGrid): Float64Array {
  return Float64Array.from({ length: grid.samples }, (_, i) => grid.t0 + i / grid.sampleRateHz);
}

/**
 * Values measured at frame times (ascending), linearly interpolated onto the grid; the first and
 * last values are held beyond the measured span. All zeros when nothing was measured.
 */
export function onGrid(times: readonly number[], values: readonly number[], grid: CaptureGrid): Float64Array {
  return interpolate(times, values, gridTimes(grid));
}

/**
 * `valid_i` (3.5): 1 when the sample stands on real frames, else 0. `frameTimes` are the capture
 * times of the frames with a tracked face, ascending. A sample stands on real frames when a frame
 * lies within half a sample period of `t_i`, or when `t_i` lies between two consecutive frames at
 * most 1.5 sample periods apart (the camera's own cadence). The second rule is what makes a
 * camera running at the grid's rate count whatever its phase against the grid: with frames half a
 * period off the grid, a few milliseconds of timestamp jitter put two frames nearest one sample
 * and none nearest the next, though no frame was missed.
 */
export function validMask(frameTimes: readonly number[], grid: CaptureGrid): number[] {
  const period = 1 / grid.sampleRateHz;
  const times = gridTimes(grid);
  const valid = new Array<number>(grid.samples).fill(0);
  let after = 0; // the first frame later than the sample
  for (let i = 0; i < grid.samples; i++) {
    const t = times[i]!;
    while (after < frameTimes.length && frameTimes[after]! <= t) after++;
    const before = after > 0 ? frameTimes[after - 1] : undefined;
    const next = frameTimes[after];
    const near = (before !== undefined && t - before <= period / 2) || (next !== undefined && next - t <= period / 2);
    const bridged = before !== undefined && next !== undefined && next - before <= 1.5 * period;
    if (near || bridged) valid[i] = 1;
  }
  return valid;
}

/**
 * Mouth opening of one frame (3.3): the gap between the inner lips' centres (landmarks 62 and 66)
 * over the distance between the outer eye corners (36 and 45), clipped to [0, 1].
 */
export function mouthOpening(landmarks: readonly Point[]): number {
  const [upper, lower, left, right] = [landmarks[62]!, landmarks[66]!, landmarks[36]!, landmarks[45]!];
  const eyes = Math.hypot(right.x - left.x, right.y - left.y);
  if (!(eyes > 0)) return 0;
  return Math.min(1, Math.max(0, Math.hypot(lower.x - upper.x, lower.y - upper.y) / eyes));
}

/**
 * The speech envelope (3.4), fed block by block as the microphone delivers samples: a first-order
 * high-pass at 80 Hz, then for each grid time `t_i` the RMS of the samples in
 * `[t_i - 1/(2 fs), t_i + 1/(2 fs))`, mapped from [-60, 0] dBFS to [0, 1].
 *
 * @example
 * const meter = new VoiceMeter(grid, 48000);
 * meter.push(block, timeOfFirstSample); // from the AudioWorklet, on the capture clock
 * const voice = meter.envelope();
 */
export class VoiceMeter {
  private readonly sumSquares: Float64Array;
  private readonly counts: Uint32Array;
  /** High-pass coefficient: RC / (RC + dt) with RC = 1 / (2 pi 80 Hz). */
  private readonly alpha: number;
  private previousInput = 0;
  private previousOutput = 0;

  constructor(
    private readonly grid: CaptureGrid,
    private readonly audioSampleRate: number,
  ) {
    this.sumSquares = new Float64Array(grid.samples);
    this.counts = new Uint32Array(grid.samples);
    const rc = 1 / (2 * Math.PI * 80);
    this.alpha = rc / (rc + 1 / audioSampleRate);
  }

  /** Adds consecutive samples (full scale 1.0); `t` is the capture-clock time of `samples[0]`, seconds. */
  push(samples: ArrayLike<number>, t: number): void {
    const { t0, sampleRateHz, samples: n } = this.grid;
    for (let k = 0; k < samples.length; k++) {
      const x = samples[k] as number;
      const y = this.alpha * (this.previousOutput + x - this.previousInput);
      this.previousInput = x;
      this.previousOutput = y;
      const i = Math.floor((t + k / this.audioSampleRate - t0) * sampleRateHz + 0.5);
      if (i < 0 || i >= n) continue;
      this.sumSquares[i] = (this.sumSquares[i] as number) + y * y;
      this.counts[i] = (this.counts[i] as number) + 1;
    }
  }

  /** The `voice` series: one value a grid sample, 3 decimals (a sample no audio reached is 0). */
  envelope(): number[] {
    return Array.from(this.sumSquares, (sum, i) => {
      const count = this.counts[i] as number;
      const rms = count > 0 ? Math.sqrt(sum / count) : 0;
      const level = (20 * Math.log10(Math.max(rms, 1e-6)) + 60) / 60;
      return Math.round(Math.min(1, Math.max(0, level)) * 1000) / 1000;
    });
  }
}
