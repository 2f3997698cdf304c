/**
 * What the face worker runs on the frame it takes next, besides the landmarks it runs on every one
 * (D-720). Pure, so it is tested without a browser.
 *
 * The worker takes one frame at a time, and the mouth is measured only on the frames it takes: the
 * engine compares mouth and voice in the syllabic band (1 to 7 Hz), which a landmark rate of 4 to 6
 * a second does not carry (D-552). So while recording every turn goes to the landmarks: the
 * detector runs only when no face is followed (the track follows the landmarks in between), and
 * the faces for the embedding are only cut out of the frame (a small copy, no network) and
 * described after the recording, when the page asks. The embedding averages EMBEDDING_FRAMES faces
 * (client/descriptor/face.ts); with no detection during the recording they all carry the score of
 * the last one before it, so that many are cut, spread over the recording, and no more. Before the
 * recording the detector runs about once a second, for the quality gates.
 */
import { EMBEDDING_FRAMES } from "../descriptor";

/** Before the recording, the detector runs on a frame at least this long after the last detection, seconds. */
export const DETECT_EVERY_S = 1;

export interface TurnState {
  /** Capture-clock time of the frame, seconds. */
  t: number;
  /** Whether a face is being followed (the worker's latest result had one). */
  tracking: boolean;
  /** When the detector last ran, seconds (-Infinity: never). */
  lastDetectT: number;
  /** The recording under way: its start, its length, and the faces cut from it so far. */
  recording: null | { t0: number; seconds: number; cuts: number; lastCutT: number };
}

/** Whether the worker runs the detector on this frame, and whether it cuts the face out to describe after the recording. */
export function workerTurn(state: TurnState): { detect: boolean; describe: boolean } {
  const { t, tracking, lastDetectT, recording } = state;
  if (!recording) return { detect: !tracking || t - lastDetectT >= DETECT_EVERY_S, describe: false };
  const every = recording.seconds / EMBEDDING_FRAMES;
  const describe = t >= recording.t0 && recording.cuts < EMBEDDING_FRAMES && t - recording.lastCutT >= every;
  return { detect: !tracking, describe };
}
