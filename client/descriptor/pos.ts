/**
 * The `pulse` series (docs/presence-descriptor.md 3.2, steps 3 to 5): remote photoplethysmography
 * by POS, "plane orthogonal to skin" (Wang, den Brinker, Stuijk and de Haan, Algorithmic principles
 * of remote PPG, IEEE TBME 2017); `finishPulse` (shared/engine/dsp.ts) band-passes and z-scores it.
 * Pure.
 */
import { mean, std } from "../../shared/engine/dsp";

/** Mean skin R, G and B on the capture grid, one value a sample. */
export interface RgbSeries {
  r: ArrayLike<number>;
  g: ArrayLike<number>;
  b: ArrayLike<number>;
}

/**
 * POS over sliding windows of `round(1.6 * fs)` samples, stepping one sample: each window's colour
 * is divided by its own mean (temporal normalisation), projected on the plane orthogonal to the
 * skin tone (`S1 = G - B`, `S2 = G + B - 2R`), the two projections are combined with the ratio of
 * their spreads (`h = S1 + std(S1) / std(S2) * S2`, which cancels what both share: intensity
 * changes and specular light), and the zero-mean `h` is overlap-added into the output.
 *
 * @example
 * const raw = posPulse({ r, g, b }, 30); // then finishPulse(raw, 30)
 */
export function posPulse(rgb: RgbSeries, fs: number): Float64Array {
  const n = rgb.r.length;
  const window = Math.max(2, Math.round(1.6 * fs));
  const out = new Float64Array(n);
  if (n < window) return out;
  const s1 = new Float64Array(window);
  const s2 = new Float64Array(window);
  for (let start = 0; start + window <= n; start++) {
    const end = start + window;
    const mr = mean(rgb.r, start, end);
    const mg = mean(rgb.g, start, end);
    const mb = mean(rgb.b, start, end);
    if (!(mr > 0 && mg > 0 && mb > 0)) continue;
    for (let k = 0; k < window; k++) {
      const r = (rgb.r[start + k] as number) / mr;
      const g = (rgb.g[start + k] as number) / mg;
      const b = (rgb.b[start + k] as number) / mb;
      s1[k] = g - b;
      s2[k] = g + b - 2 * r;
    }
    const spread2 = std(s2);
    const alpha = spread2 > 1e-12 ? std(s1) / spread2 : 0;
    let hMean = 0;
    for (let k = 0; k < window; k++) hMean += (s1[k] as number) + alpha * (s2[k] as number);
    hMean /= window;
    for (let k = 0; k < window; k++) out[start + k] = (out[start + k] as number) + (s1[k] as number) + alpha * (s2[k] as number) - hMean;
  }
  return out;
}
