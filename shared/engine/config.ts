/**
 * Every threshold and tuning constant of the presence engine, in one object.
 * The benchmark (scripts/bench-engine.ts) measures error rates at these values;
 * change them only together with a new benchmark run and docs/benchmarks.md.
 */
export const presenceConfig = deepFreeze({
  quality: {
    /** `face.quality` below this is `low_quality`. */
    minFaceQuality: 0.5,
    /** Fraction of real (not interpolated) frames below this is `low_quality`. */
    minValidFraction: 0.8,
    /** Logistic scale of the quality margin in the liveness score. */
    scale: 0.05,
  },
  speech: {
    /** Smoothing of the voice envelope before segmentation, seconds. */
    smoothSeconds: 0.2,
    /** Segmentation threshold between the 10th and 90th percentiles of the envelope (0..1). */
    thresholdPosition: 0.4,
    /** The 10th-90th percentile range of the envelope must reach this (about 9 dB). */
    minRange: 0.15,
    /** Speech must cover at least this fraction of the capture... */
    minSpeechFraction: 0.25,
    /** ...and at most this (breath pauses must exist). */
    maxSpeechFraction: 0.97,
    /** Silences shorter than this are gaps between words, not breaths, seconds. */
    minPauseSeconds: 0.3,
    /** Logistic scale of the range margin. */
    scale: 0.03,
  },
  pulse: {
    minBpm: 40,
    maxBpm: 180,
    /** Noise band of the SNR, Hz. */
    bandLoHz: 0.6,
    bandHiHz: 4.0,
    /** Half-width of the peak window around the heart rate and its harmonic, Hz (at least 1.5 / seconds). */
    peakHalfWidthHz: 0.12,
    /** Spectral SNR (peak + harmonic vs the rest of the band), dB. */
    minSnrDb: 0,
    scale: 1.0,
  },
  avSync: {
    /** Largest mouth-to-voice lag accepted, ms. */
    maxLagMs: 150,
    /** Syllabic band in which mouth and voice are compared, Hz. */
    bandLoHz: 1.0,
    bandHiHz: 7.0,
    minCorrelation: 0.3,
    scale: 0.05,
  },
  coupling: {
    /** Half-width of the narrow band around the heart rate used for beat detection, Hz. */
    beatBandHalfWidthHz: 0.45,
    /** Beats whose rate departs from the spectral rate by more than this fraction are discarded. */
    maxBeatDeviation: 0.35,
    /** At least this many beat intervals. */
    minBeats: 6,
    /** Resampling grid of the heart-rate and breath series, Hz. */
    gridHz: 4,
    /** Time constant of the heart-rate response to an inhalation pause, seconds. */
    responseTauS: 1.2,
    /** Physiological lag window of that response, seconds. */
    minLagS: 0,
    maxLagS: 2.5,
    /** Correlation of heart rate with the breath drive at the best lag. */
    minCorrelation: 0.35,
    scale: 0.05,
  },
  coercion: {
    /** Heart rate this far above the baseline resting rate, bpm... */
    minHrRiseBpm: 25,
    /** ...and variability at most this fraction of the baseline's... */
    maxVariabilityRatio: 0.5,
    /** ...raise the signal. Without a baseline the signal is never raised. */
  },
});

/** The type of {@link presenceConfig} (tests pass modified copies). */
export type PresenceConfig = typeof presenceConfig;

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v as object);
  return Object.freeze(o);
}
