import { describe, expect, it } from "vitest";
import {
  bandPass,
  cosineSimilarity,
  detrendLinear,
  fft,
  interpolate,
  laggedCorrelation,
  maxLaggedCorrelation,
  powerSpectrum,
  quantile,
  spectralPeak,
  upwardZeroCrossings,
} from "../../../shared/engine/dsp";

const fs = 30;
const sine = (hz: number, n: number, phase = 0) => Array.from({ length: n }, (_, i) => Math.sin((2 * Math.PI * hz * i) / fs + phase));

describe("fft", () => {
  it("matches a direct DFT", () => {
    const n = 16;
    const x = Array.from({ length: n }, (_, i) => Math.cos(i * 0.7) + 0.3 * i);
    const re = Float64Array.from(x);
    const im = new Float64Array(n);
    fft(re, im);
    for (let k = 0; k < n; k++) {
      let r = 0;
      let q = 0;
      for (let t = 0; t < n; t++) {
        r += (x[t] as number) * Math.cos((-2 * Math.PI * k * t) / n);
        q += (x[t] as number) * Math.sin((-2 * Math.PI * k * t) / n);
      }
      expect(re[k]).toBeCloseTo(r, 9);
      expect(im[k]).toBeCloseTo(q, 9);
    }
  });

  it("inverts", () => {
    const re = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const im = new Float64Array(8);
    fft(re, im);
    fft(re, im, true);
    expect(Array.from(re, (v) => v / 8)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((v) => expect.closeTo(v, 9)));
  });
});

describe("spectrum and band-pass", () => {
  it("finds the frequency of a sinusoid to a fraction of a bpm", () => {
    const peak = spectralPeak(powerSpectrum(sine(1.23, 450), fs), 0.6, 3);
    expect(peak.hz * 60).toBeCloseTo(73.8, 0);
  });

  it("keeps the band and removes what is outside", () => {
    const x = sine(1.2, 600).map((v, i) => v + 3 * Math.sin((2 * Math.PI * 0.1 * i) / fs) + Math.sin((2 * Math.PI * 8 * i) / fs));
    const y = bandPass(x, fs, 0.7, 3);
    const mid = y.slice(60, 540);
    const ref = sine(1.2, 600).slice(60, 540);
    expect(Math.max(...mid.map((v, i) => Math.abs(v - (ref[i] as number))))).toBeLessThan(0.1);
  });

  it("returns zeros, not NaN, for a constant series", () => {
    expect(Array.from(bandPass(new Array(100).fill(5), fs, 1, 2)).every((v) => v === 0 || Math.abs(v) < 1e-12)).toBe(true);
    expect(spectralPeak(powerSpectrum(new Array(100).fill(0), fs), 0.6, 3)).toEqual({ hz: 0, power: 0 });
  });

  it("detrends a straight line to zero", () => {
    expect(Math.max(...Array.from(detrendLinear([1, 3, 5, 7, 9]), Math.abs))).toBeLessThan(1e-12);
  });
});

describe("correlation, crossings, interpolation", () => {
  it("finds the lag between two copies", () => {
    const a = sine(2.3, 300).map((v, i) => v + Math.sin(i * 1.7));
    const b = a.slice(3).concat([0, 0, 0]); // b leads a by 3 samples
    expect(maxLaggedCorrelation(a, b, -5, 5).lag).toBe(3);
    expect(laggedCorrelation(a, b, 3)).toBeGreaterThan(0.99);
  });

  it("is zero without variance", () => {
    expect(laggedCorrelation([1, 1, 1, 1], [1, 2, 3, 4], 0)).toBe(0);
  });

  it("counts one upward crossing per period", () => {
    const c = upwardZeroCrossings(sine(1.5, 300, 0.3), fs, 0.3);
    expect(c.length).toBe(14); // 15 periods; the 15th crossing falls after the last sample
    const ibi = c.slice(1).map((t, i) => t - (c[i] as number));
    for (const d of ibi) expect(d).toBeCloseTo(1 / 1.5, 2);
  });

  it("interpolates and holds the ends", () => {
    expect(Array.from(interpolate([0, 1, 2], [0, 10, 20], [-1, 0.5, 1.5, 3]))).toEqual([0, 5, 15, 20]);
  });

  it("quantile and cosine similarity", () => {
    expect(quantile([3, 1, 2], 0.5)).toBe(2);
    expect(cosineSimilarity([1, 0], [0, 1])).toBe(0);
    expect(cosineSimilarity([1, 2], [2, 4])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([0, 0], [1, 1])).toBe(0);
  });
});
