/**
 * The nonce-paced reading challenge (`signals.schedule: "nonce-v1"`): the speak and
 * inhale-pause cues a client shows while the person reads, derived from the capture
 * nonce alone. Public and deterministic, so any client computes the same schedule;
 * unpredictable before the nonce is issued, so a recording made earlier follows
 * another schedule. docs/presence-descriptor.md, section 10, specifies it exactly.
 *
 * @example
 * const s = challengeSchedule('n_7f3a9c21e4', 30, 600);
 * s.segments[0] // { kind: 'pause', start_s: 0, end_s: 2.3 }
 */

/** The schedule identifier a paced descriptor declares in `signals.schedule`. */
export const SCHEDULE_NONCE_V1 = "nonce-v1";

/** Bounds of the segments, in tenths of a second (inclusive). */
export const SCHEDULE_LIMITS = {
  /** The opening pause is drawn from its own, wider range, so that schedules start out of phase. */
  firstPauseMinTenths: 5,
  firstPauseMaxTenths: 30,
  pauseMinTenths: 15,
  pauseMaxTenths: 30,
  speakMinTenths: 15,
  speakMaxTenths: 45,
} as const;

/** One cue: breathe in (`pause`, silent) or read aloud (`speak`), from `start_s` to `end_s`. */
export interface ScheduleSegment {
  kind: "pause" | "speak";
  start_s: number;
  end_s: number;
}

/** The cues of one capture and the per-sample speak indicator on the descriptor's grid. */
export interface ChallengeSchedule {
  /** Alternating segments from 0 s, starting with a pause, covering at least the capture. */
  segments: ScheduleSegment[];
  /** `speak[i]` is 1 when sample i (time i / sample_rate_hz) lies in a speak segment, 0 in a pause. */
  speak: Uint8Array;
}

/** FNV-1a, 32 bits, over the UTF-16 code units of `text` (for the ASCII nonce, its bytes). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a 32-bit generator returning unsigned 32-bit integers. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * The segments, in tenths of a second, until they cover `tenths` (prefix-stable:
 * a longer capture has the same first segments).
 */
export function scheduleTenths(captureNonce: string, tenths: number): Array<{ kind: "pause" | "speak"; start: number; end: number }> {
  const L = SCHEDULE_LIMITS;
  const next = mulberry32(fnv1a(`${SCHEDULE_NONCE_V1}:${captureNonce}`));
  const out: Array<{ kind: "pause" | "speak"; start: number; end: number }> = [];
  let t = 0;
  let kind: "pause" | "speak" = "pause";
  // The guard bounds the loop for any input (a 30 s capture needs about 12 segments).
  while (t < tenths && out.length < 10_000) {
    const d =
      t === 0
        ? L.firstPauseMinTenths + (next() % (L.firstPauseMaxTenths - L.firstPauseMinTenths + 1))
        : kind === "pause"
          ? L.pauseMinTenths + (next() % (L.pauseMaxTenths - L.pauseMinTenths + 1))
          : L.speakMinTenths + (next() % (L.speakMaxTenths - L.speakMinTenths + 1));
    out.push({ kind, start: t, end: t + d });
    t += d;
    kind = kind === "pause" ? "speak" : "pause";
  }
  return out;
}

/**
 * The challenge schedule of a capture: the cues to show and the speak indicator
 * per sample. `samples / sample_rate_hz` is the capture length.
 */
export function challengeSchedule(captureNonce: string, sampleRateHz: number, samples: number): ChallengeSchedule {
  const n = Math.max(0, Math.floor(samples));
  const fs = sampleRateHz > 0 && Number.isFinite(sampleRateHz) ? sampleRateHz : 1;
  const tenths = Math.ceil((10 * n) / fs);
  const segs = scheduleTenths(captureNonce, Math.max(1, tenths));
  const speak = new Uint8Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    // Sample i lies in segment k when start * fs <= 10 * i < end * fs.
    while (k < segs.length - 1 && (segs[k] as { end: number }).end * fs <= 10 * i) k++;
    speak[i] = (segs[k] as { kind: string }).kind === "speak" ? 1 : 0;
  }
  return {
    segments: segs.map((s) => ({ kind: s.kind, start_s: s.start / 10, end_s: s.end / 10 })),
    speak,
  };
}
