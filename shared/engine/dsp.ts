/**
 * Small, allocation-light signal processing for the presence engine: FFT,
 * zero-phase FFT band-pass, Hann power spectrum with an interpolated peak,
 * detrending, smoothing, lagged correlation and beat (zero-crossing) detection.
 *
 * Pure TypeScript, no I/O, no Node APIs. Every function returns finite numbers
 * for finite input, including constant or all-zero series.
 */

const twiddleCache = new Map<number, { cos: Float64Array; sin: Float64Array; rev: Uint32Array }>();

function tables(n: number): { cos: Float64Array; sin: Float64Array; rev: Uint32Array } {
  const hit = twiddleCache.get(n);
  if (hit) return hit;
  const cos = new Float64Array(n / 2);
  const sin = new Float64Array(n / 2);
  for (let i = 0; i < n / 2; i++) {
    cos[i] = Math.cos((2 * Math.PI * i) / n);
    sin[i] = Math.sin((2 * Math.PI * i) / n);
  }
  const rev = new Uint32Array(n);
  const bits = Math.round(Math.log2(n));
  for (let i = 0; i < n; i++) {
    let r = 0;
    for (let b = 0; b < bits; b++) r = (r << 1) | ((i >>> b) & 1);
    rev[i] = r;
  }
  const t = { cos, sin, rev };
  twiddleCache.set(n, t);
  return t;
}

/** Smallest power of two that is at least n (and at least 2). */
function nextPow2(n: number): number {
  let p = 2;
  while (p < n) p *= 2;
  return p;
}

/**
 * In-place iterative radix-2 FFT. `re.length` must be a power of two.
 * With `inverse`, computes the unscaled inverse transform (divide by n yourself).
 */
export function fft(re: Float64Array, im: Float64Array, inverse = false): void {
  const n = re.length;
  const { cos, sin, rev } = tables(n);
  for (let i = 0; i < n; i++) {
    const j = rev[i] as number;
    if (j > i) {
      const tr = re[i] as number;
      re[i] = re[j] as number;
      re[j] = tr;
      const ti = im[i] as number;
      im[i] = im[j] as number;
      im[j] = ti;
    }
  }
  const sign = inverse ? 1 : -1;
  for (let size = 2; size <= n; size *= 2) {
    const half = size / 2;
    const step = n / size;
    for (let start = 0; start < n; start += size) {
      for (let k = 0; k < half; k++) {
        const wr = cos[k * step] as number;
        const wi = sign * (sin[k * step] as number);
        const a = start + k;
        const b = a + half;
        const br = re[b] as number;
        const bi = im[b] as number;
        const xr = br * wr - bi * wi;
        const xi = br * wi + bi * wr;
        re[b] = (re[a] as number) - xr;
        im[b] = (im[a] as number) - xi;
        re[a] = (re[a] as number) + xr;
        im[a] = (im[a] as number) + xi;
      }
    }
  }
}

/** Arithmetic mean (0 for an empty series). */
export function mean(x: ArrayLike<number>, start = 0, end = x.length): number {
  if (end <= start) return 0;
  let s = 0;
  for (let i = start; i < end; i++) s += x[i] as number;
  return s / (end - start);
}

/** Population standard deviation (0 for fewer than two samples). */
export function std(x: ArrayLike<number>, start = 0, end = x.length): number {
  const n = end - start;
  if (n < 2) return 0;
  const m = mean(x, start, end);
  let s = 0;
  for (let i = start; i < end; i++) {
    const d = (x[i] as number) - m;
    s += d * d;
  }
  return Math.sqrt(s / n);
}

/** Removes the least-squares straight line from a series. */
export function detrendLinear(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  if (n === 0) return out;
  const tMean = (n - 1) / 2;
  const xMean = mean(x);
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dt = i - tMean;
    sxy += dt * ((x[i] as number) - xMean);
    sxx += dt * dt;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  for (let i = 0; i < n; i++) out[i] = (x[i] as number) - xMean - slope * (i - tMean);
  return out;
}

/**
 * Zero-phase band-pass by FFT masking with raised-cosine edges of width `taperHz`.
 * The series is linearly detrended and mirrored at both ends first, which keeps
 * edge transients small (callers still ignore the first and last second or so). Returns a series of the input's length.
 */
export function bandPass(x: ArrayLike<number>, fs: number, loHz: number, hiHz: number, taperHz = 0.1): Float64Array {
  const n = x.length;
  const d = detrendLinear(x);
  if (n < 4) return d;
  const pad = Math.min(n - 1, Math.round(fs * 2));
  const total = n + 2 * pad;
  const size = nextPow2(total);
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  for (let i = 0; i < pad; i++) re[i] = d[pad - i] as number;
  for (let i = 0; i < n; i++) re[pad + i] = d[i] as number;
  for (let i = 0; i < pad; i++) re[pad + n + i] = d[n - 2 - i] as number;
  fft(re, im);
  const df = fs / size;
  for (let k = 0; k <= size / 2; k++) {
    const f = k * df;
    let g: number;
    if (f < loHz - taperHz || f > hiHz + taperHz) g = 0;
    else if (f < loHz) g = 0.5 - 0.5 * Math.cos((Math.PI * (f - (loHz - taperHz))) / taperHz);
    else if (f > hiHz) g = 0.5 + 0.5 * Math.cos((Math.PI * (f - hiHz)) / taperHz);
    else g = 1;
    re[k] = (re[k] as number) * g;
    im[k] = (im[k] as number) * g;
    if (k > 0 && k < size / 2) {
      const m = size - k;
      re[m] = (re[m] as number) * g;
      im[m] = (im[m] as number) * g;
    }
  }
  fft(re, im, true);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = (re[pad + i] as number) / size;
  return out;
}

/** A one-sided power spectrum: `power[k]` is the power at frequency `k * df`. */
interface Spectrum {
  power: Float64Array;
  df: number;
}

/** Hann-windowed power spectrum, zero-padded to at least `minSize` points. */
export function powerSpectrum(x: ArrayLike<number>, fs: number, minSize = 4096): Spectrum {
  const n = x.length;
  const size = nextPow2(Math.max(minSize, n));
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  const m = mean(x);
  for (let i = 0; i < n; i++) {
    const w = n > 1 ? 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)) : 1;
    re[i] = ((x[i] as number) - m) * w;
  }
  fft(re, im);
  const power = new Float64Array(size / 2 + 1);
  for (let k = 0; k <= size / 2; k++) {
    const r = re[k] as number;
    const q = im[k] as number;
    power[k] = r * r + q * q;
  }
  return { power, df: fs / size };
}

/** Sum of spectral power between two frequencies (inclusive bins). */
export function bandPower(s: Spectrum, loHz: number, hiHz: number): number {
  const k0 = Math.max(0, Math.ceil(loHz / s.df));
  const k1 = Math.min(s.power.length - 1, Math.floor(hiHz / s.df));
  let sum = 0;
  for (let k = k0; k <= k1; k++) sum += s.power[k] as number;
  return sum;
}

/**
 * Frequency of the highest spectral bin between two frequencies, refined by
 * parabolic interpolation on the log power. Returns 0 Hz when the band is empty
 * or flat at zero.
 */
export function spectralPeak(s: Spectrum, loHz: number, hiHz: number): { hz: number; power: number } {
  const k0 = Math.max(1, Math.ceil(loHz / s.df));
  const k1 = Math.min(s.power.length - 2, Math.floor(hiHz / s.df));
  let best = -1;
  let bestP = 0;
  for (let k = k0; k <= k1; k++) {
    const p = s.power[k] as number;
    if (p > bestP) {
      bestP = p;
      best = k;
    }
  }
  if (best < 0) return { hz: 0, power: 0 };
  const a = Math.log((s.power[best - 1] as number) + 1e-300);
  const b = Math.log(bestP + 1e-300);
  const c = Math.log((s.power[best + 1] as number) + 1e-300);
  const den = a - 2 * b + c;
  const shift = den < 0 ? Math.max(-0.5, Math.min(0.5, (0.5 * (a - c)) / den)) : 0;
  return { hz: (best + shift) * s.df, power: bestP };
}

/** Centred moving average with an odd window of `w` samples (edges use what exists). */
export function movingAverage(x: ArrayLike<number>, w: number): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  const half = Math.max(0, Math.floor(w / 2));
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = (prefix[i] as number) + (x[i] as number);
  for (let i = 0; i < n; i++) {
    const a = Math.max(0, i - half);
    const b = Math.min(n, i + half + 1);
    out[i] = ((prefix[b] as number) - (prefix[a] as number)) / (b - a);
  }
  return out;
}

/** The p-th quantile (0..1) by linear interpolation; 0 for an empty series. */
export function quantile(x: ArrayLike<number>, p: number): number {
  const n = x.length;
  if (n === 0) return 0;
  const sorted = Float64Array.from(x as ArrayLike<number>).sort();
  const pos = Math.min(1, Math.max(0, p)) * (n - 1);
  const i = Math.floor(pos);
  const frac = pos - i;
  const lo = sorted[i] as number;
  const hi = sorted[Math.min(n - 1, i + 1)] as number;
  return lo + (hi - lo) * frac;
}

/** Median of a series. */
export function median(x: ArrayLike<number>): number {
  return quantile(x, 0.5);
}

/**
 * Pearson correlation of `a[i]` with `b[i - lag]` over the overlap.
 * Returns 0 when either side has no variance or the overlap is shorter than 3.
 */
export function laggedCorrelation(a: ArrayLike<number>, b: ArrayLike<number>, lag: number): number {
  const n = Math.min(a.length, b.length);
  const start = Math.max(0, lag);
  const end = Math.min(n, n + lag);
  const m = end - start;
  if (m < 3) return 0;
  let sa = 0;
  let sb = 0;
  for (let i = start; i < end; i++) {
    sa += a[i] as number;
    sb += b[i - lag] as number;
  }
  const ma = sa / m;
  const mb = sb / m;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = start; i < end; i++) {
    const da = (a[i] as number) - ma;
    const db = (b[i - lag] as number) - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  const den = Math.sqrt(saa * sbb);
  if (!(den > 1e-12)) return 0;
  const r = sab / den;
  return Number.isFinite(r) ? Math.max(-1, Math.min(1, r)) : 0;
}

/** Highest `laggedCorrelation(a, b, lag)` for lag in [minLag, maxLag]. */
export function maxLaggedCorrelation(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  minLag: number,
  maxLag: number,
): { r: number; lag: number } {
  let best = -Infinity;
  let bestLag = 0;
  for (let lag = minLag; lag <= maxLag; lag++) {
    const r = laggedCorrelation(a, b, lag);
    if (r > best) {
      best = r;
      bestLag = lag;
    }
  }
  return best === -Infinity ? { r: 0, lag: 0 } : { r: best, lag: bestLag };
}

/**
 * Times (seconds) of upward zero crossings of a zero-mean, narrow-band series,
 * linearly interpolated between samples. A crossing closer than `minInterval`
 * seconds to the previous accepted one is ignored.
 */
export function upwardZeroCrossings(x: ArrayLike<number>, fs: number, minInterval: number): number[] {
  const out: number[] = [];
  let last = -Infinity;
  for (let i = 1; i < x.length; i++) {
    const a = x[i - 1] as number;
    const b = x[i] as number;
    if (a < 0 && b >= 0) {
      const t = (i - 1 + a / (a - b)) / fs;
      if (t - last >= minInterval) {
        out.push(t);
        last = t;
      }
    }
  }
  return out;
}

/**
 * Linear interpolation of points (`times` ascending) at `at`; values outside the
 * points' span are held at the nearest end value.
 */
export function interpolate(times: ArrayLike<number>, values: ArrayLike<number>, at: ArrayLike<number>): Float64Array {
  const out = new Float64Array(at.length);
  const n = times.length;
  if (n === 0) return out;
  let j = 0;
  for (let i = 0; i < at.length; i++) {
    const t = at[i] as number;
    if (t <= (times[0] as number)) {
      out[i] = values[0] as number;
      continue;
    }
    if (t >= (times[n - 1] as number)) {
      out[i] = values[n - 1] as number;
      continue;
    }
    while (j < n - 2 && (times[j + 1] as number) < t) j++;
    const t0 = times[j] as number;
    const t1 = times[j + 1] as number;
    const f = t1 > t0 ? (t - t0) / (t1 - t0) : 0;
    out[i] = (values[j] as number) + f * ((values[j + 1] as number) - (values[j] as number));
  }
  return out;
}

/** Cosine similarity of two equal-length vectors (0 when either is all zeros). */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  const den = Math.sqrt(aa * bb);
  if (!(den > 0)) return 0;
  const r = ab / den;
  return Number.isFinite(r) ? Math.max(-1, Math.min(1, r)) : 0;
}

/** The `pulse` series' band-pass starts here, Hz (finishPulse): below it the device leaves nothing. */
export const PULSE_FILTER_LO_HZ = 0.65;

/**
 * The device's finishing of the `pulse` series (docs/presence-descriptor.md 3.2, steps 4 and 5),
 * shared by the browser client and the simulator: band-pass 0.65 to 4 Hz (zero-phase, the upper
 * edge held below the grid's Nyquist frequency), z-score over the whole capture (a constant series
 * becomes zeros), clip to [-10, 10], round to 3 decimals.
 */
export function finishPulse(raw: ArrayLike<number>, fs: number): number[] {
  const filtered = bandPass(raw, fs, PULSE_FILTER_LO_HZ, Math.min(4, fs * 0.45));
  const m = mean(filtered);
  const sd = std(filtered);
  const out = new Array<number>(filtered.length);
  for (let i = 0; i < filtered.length; i++) {
    const z = sd > 1e-12 ? ((filtered[i] as number) - m) / sd : 0;
    out[i] = Math.round(Math.min(10, Math.max(-10, z)) * 1000) / 1000;
  }
  return out;
}
