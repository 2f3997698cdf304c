/**
 * The cues of the nonce-paced reading (docs/presence-descriptor.md section 10.2): the capture's
 * schedule from its nonce, each speak segment carrying the next words of the reading, about 2.5
 * words a second, and each pause none (the person breathes in).
 */
import { challengeSchedule } from "../../shared/engine/schedule";

export interface Cue {
  kind: "pause" | "speak";
  start_s: number;
  end_s: number;
  /** The words to read in a speak segment; empty in a pause. */
  text: string;
}

const WORDS_PER_SECOND = 2.5;

/**
 * The cues covering `seconds` of capture for `nonce`, the reading's words taken in order (and
 * again from the start when they run out).
 *
 * @example pacedCues("n_7f3a9c21e4", 30, ["I", "am", "here"])[1] // { kind: "speak", start_s: 1, end_s: 5.4, text: "I am here I am here …" }
 */
export function pacedCues(nonce: string, seconds: number, words: readonly string[]): Cue[] {
  const { segments } = challengeSchedule(nonce, 10, Math.round(seconds * 10));
  let next = 0;
  return segments.map((segment) => {
    if (segment.kind !== "speak" || words.length === 0) return { ...segment, kind: segment.kind, text: "" };
    const count = Math.max(1, Math.round((segment.end_s - segment.start_s) * WORDS_PER_SECOND));
    const taken = Array.from({ length: count }, (_, i) => words[(next + i) % words.length]);
    next = (next + count) % words.length;
    return { ...segment, kind: "speak", text: taken.join(" ") };
  });
}

/** The cue at `elapsedS` seconds into the capture (the last one past the end). */
export function cueAt(cues: readonly Cue[], elapsedS: number): Cue | undefined {
  return cues.find((cue) => elapsedS < cue.end_s) ?? cues[cues.length - 1];
}
