/**
 * The face worker's turns (client/capture/turns.ts, D-720): before the recording the detector runs
 * about once a second; during it every turn goes to the landmarks, the detector runs only when no
 * face is followed, and the faces for the embedding are cut out EMBEDDING_FRAMES times, spread over
 * the recording, to be described after it.
 */
import { describe, expect, it } from "vitest";
import { DETECT_EVERY_S, type TurnState, workerTurn } from "../../../client/capture/turns";
import { EMBEDDING_FRAMES } from "../../../client/descriptor";

/** The turns of a camera at `fps` from 0 to `until` s, every frame taken, with `recording` from t0 for `seconds`. */
function run(fps: number, until: number, recordFrom: number | null, seconds: number, lost: (t: number) => boolean = () => false) {
  let lastDetectT = -Infinity;
  let recording: TurnState["recording"] = null;
  const turns: { t: number; detect: boolean; describe: boolean }[] = [];
  for (let i = 0; i <= until * fps; i++) {
    const t = i / fps;
    if (recordFrom !== null && t >= recordFrom && !recording) recording = { t0: recordFrom, seconds, cuts: 0, lastCutT: -Infinity };
    if (recording && t > recording.t0 + seconds) recording = null;
    const turn = workerTurn({ t, tracking: !lost(t) && i > 0, lastDetectT, recording });
    if (turn.detect) lastDetectT = t;
    if (turn.describe && recording) recording = { ...recording, cuts: recording.cuts + 1, lastCutT: t };
    turns.push({ t, ...turn });
  }
  return turns;
}

describe("the face worker's turns", () => {
  it("before the recording: the detector about once a second, no face described", () => {
    const turns = run(15, 5, null, 0);
    const detections = turns.filter((x) => x.detect).map((x) => x.t);
    expect(detections.length).toBe(Math.floor(5 / DETECT_EVERY_S) + 1);
    expect(turns.some((x) => x.describe)).toBe(false);
  });

  it("while recording: no detector while the face is followed, and EMBEDDING_FRAMES faces cut, spread over the recording", () => {
    const turns = run(15, 20, 2, 15).filter((x) => x.t >= 2 && x.t <= 17);
    expect(turns.filter((x) => x.detect)).toEqual([]);
    const cuts = turns.filter((x) => x.describe).map((x) => x.t);
    expect(cuts).toHaveLength(EMBEDDING_FRAMES);
    expect(cuts[0]).toBe(2);
    expect(cuts.at(-1)!).toBeGreaterThanOrEqual(2 + 15 * ((EMBEDDING_FRAMES - 1) / EMBEDDING_FRAMES) - 1e-9);
    // The same at a slow landmark rate (the worker took 4 frames a second) and in a short recording.
    const slow = run(4, 20, 2, 8).filter((x) => x.describe);
    expect(slow).toHaveLength(EMBEDDING_FRAMES);
  });

  it("while recording: the detector runs when the face is lost, and frames from before the start are not cut", () => {
    const turns = run(15, 20, 2, 15, (t) => t > 6 && t < 6.2);
    expect(turns.filter((x) => x.detect && x.t >= 2 && x.t <= 17).map((x) => x.t)).toEqual(
      turns.filter((x) => x.t > 6 && x.t < 6.2).map((x) => x.t),
    );
    expect(
      workerTurn({ t: 1.9, tracking: true, lastDetectT: 1.5, recording: { t0: 2, seconds: 15, cuts: 0, lastCutT: -Infinity } }),
    ).toEqual({
      detect: false,
      describe: false,
    });
  });

  it("after the recording: back to the detector once a second", () => {
    const turns = run(15, 22, 2, 15).filter((x) => x.t > 17);
    expect(turns[0]!.detect).toBe(true);
    expect(turns.filter((x) => x.detect).length).toBeGreaterThanOrEqual(4);
  });
});
