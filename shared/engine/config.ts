/**
 * Every threshold and tuning constant of the presence engine, in one object.
 * The benchmark (scripts/bench/engine.ts) measures error rates at these values;
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
    /** Speech level above the pause level (envelope units; 0.08 is about 5 dB). */
    minRange: 0.08,
    /** Speech must cover at least this fraction of the capture... */
    minSpeechFraction: 0.1,
    /** ...and at most this (breath pauses must exist). */
    maxSpeechFraction: 0.97,
    /** Mouth movement (1-7 Hz band energy) is averaged over this window, seconds... */
    articulationSeconds: 0.5,
    /** ...and the mouth articulates where it exceeds this fraction of its 90th percentile. */
    articulationFraction: 0.15,
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
    minCorrelation: 0.4,
    scale: 0.05,
  },
  coupling: {
    /** Half-width of the narrow band around the heart rate used for beat detection, Hz. */
    beatBandHalfWidthHz: 0.45,
    /** Beats within this many seconds of either end are ignored (filter transients). */
    edgeTrimS: 1.5,
    /** Beats whose rate departs from the spectral rate by more than this fraction are discarded. */
    maxBeatDeviation: 0.35,
    /** At least this many beat intervals. */
    minBeats: 6,
    /** Resampling grid of the heart-rate and breath series, Hz. */
    gridHz: 4,
    /** Time constant of the heart-rate response to an inhalation pause, seconds. */
    responseTauS: 1.2,
    /** Physiological lag window of that response, seconds. */
    minLagS: 0.5,
    maxLagS: 2.25,
    /** Correlation of heart rate with the breath drive at the best lag. */
    minCorrelation: 0.35,
    /** ...and a breath-locked heart-rate swing of at least this, bpm (a constant-rate rhythm has none). */
    minRsaBpm: 1.2,
    /** ...and at least this multiple of the beat-to-beat measurement noise. */
    minRsaToNoise: 1.0,
    scale: 0.05,
    /** Logistic scale of the RSA margin, bpm. */
    rsaScale: 0.3,
    /**
     * When coupling fails and the beat-to-beat noise exceeds this (bpm), the reason is
     * `low_quality`: the pulse was too noisy to time the beats (poor light or motion).
     */
    maxBeatNoiseBpm: 3,
  },
  /**
   * The nonce-paced reading challenge (`signals.schedule: "nonce-v1"`, shared/engine/schedule.ts).
   * Applied only to descriptors that declare it; the statistics are compared with the same
   * statistic against the schedules of `surrogates` other nonces (a z-score).
   */
  paced: {
    /** Grid of the voice-activity, heart-rate and schedule series, Hz. */
    gridHz: 4,
    /** Schedules of other nonces the statistics are calibrated against. */
    surrogates: 24,
    /**
     * Every schedule opens with a pause at 0 s (at most 3 s long): the statistics start
     * after it, where one nonce's cues no longer resemble another's.
     */
    analysisStartS: 3,
    /** The voice may follow the cues by 0 to this many seconds (reaction time). */
    voiceMaxLagS: 1.0,
    /** Correlation of voice activity with the speak cues at the best lag... */
    minVoiceCorrelation: 0.3,
    /** ...and its z-score against the other nonces' schedules. */
    minVoiceZ: 1.3,
    /** Time constant of the heart-rate response to an inhalation pause, seconds. */
    responseTauS: 1.2,
    /** Lag window of that response after the pause cue (reaction plus physiology), seconds. */
    minLagS: 0.5,
    maxLagS: 3.0,
    /**
     * Correlation of the heart rate with the cue-derived breath drive at the best lag, with the
     * RSA floor of `coupling` (minRsaBpm, minRsaToNoise)...
     */
    minCorrelation: 0.4,
    /** ...and its z-score against the other nonces' schedules (0: at least the surrogates' mean). */
    minZ: 0,
    /** Logistic scales of the margins (correlation units, z units). */
    scale: 0.05,
    zScale: 0.5,
  },
  /**
   * The light challenge of descriptor v2 (shared/engine/reflection.ts): the skin's colour,
   * relative to the background's, follows lightSequence(capture_nonce).
   */
  light: {
    /** High-pass of the log colour ratio and of the expected light (moving average), seconds. */
    highPassSeconds: 1.5,
    /** Left out at either end (the high-pass's edges), seconds. */
    edgeS: 0.75,
    /**
     * The plausible lag of the reflection after the sequence's clock: the screen's display
     * latency (one to three refreshes and the panel's response) and the exposure's midpoint, ms.
     */
    minLagMs: 0,
    maxLagMs: 150,
    lagStepMs: 10,
    /** The wide search that reports where a reflection fits best when it is late, ms. */
    wideMinLagMs: -300,
    wideMaxLagMs: 1000,
    /** Fit of the reflected colour to the sequence (square root of R²) at the best plausible lag... */
    minCorrelation: 0.8,
    /** ...no lag outside the window fitting better by more than this (correlation units)... */
    maxLateGain: 0.02,
    /** ...and a reflection of at least this strength (mean gain of the log colour ratio per unit of screen light). */
    minDepth: 0.02,
    /** Logistic scales of the margins: correlation units, and natural-log units of depth. */
    scale: 0.05,
    depthLogScale: 0.3,
  },
  coercion: {
    /** Heart rate at least this far above the baseline, bpm... */
    minHrRiseBpm: 25,
    /** ...with variability at most this fraction of the baseline's at that rise... */
    maxVariabilityRatio: 0.6,
    /** ...a fraction allowed to grow by this much per bpm of further rise... */
    variabilityRatioPerBpm: 0.02,
    /** ...up to this cap, raises the signal. Without a baseline the signal is never raised. */
    maxVariabilityRatioCap: 1.0,
  },
});

/** The type of {@link presenceConfig} (tests pass modified copies). */
export type PresenceConfig = typeof presenceConfig;

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === "object") deepFreeze(v as object);
  return Object.freeze(o);
}
