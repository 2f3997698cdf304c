/**
 * The microphone's blocks on the capture clock (client/capture/microphone.ts, D-770): the blocks of
 * a recording as the page receives them, each with the audio clock's frame number and the offset
 * between `performance.now()` and the audio clock read when it came (the clocks' true offset plus a
 * read's delay), are timed where their samples were recorded, including after the audio thread
 * missed its turns and a stretch of samples was dropped (as Chromium does under load).
 */
import { describe, expect, it } from "vitest";
import { blockTimes } from "../../../client/capture/microphone";

const RATE = 48_000;
const BLOCK = 2048;
const BLOCK_MS = (BLOCK / RATE) * 1000;

/** A small, repeatable read delay (ms) for block i: the render quantum and the page's turn. */
const readDelay = (i: number) => 2 + ((i * 7919) % 11);

/**
 * A recording of `count` blocks whose samples start at capture time `startMs`; `dropAt` blocks in,
 * `dropped` blocks' worth of samples are lost (the audio clock stops counting while the capture
 * clock runs on), and `lateReads` delays some reads by more (the page busy, the blocks waiting).
 */
function recording({ count = 300, dropAt = -1, dropped = 0, lateReads = new Map<number, number>() } = {}) {
  const startMs = 10_000;
  const blocks: { frame: number; offsetMs: number }[] = [];
  const truth: number[] = [];
  for (let i = 0; i < count; i++) {
    const frame = i * BLOCK;
    // Capture time of the block's first sample: after a drop, later by the dropped samples.
    const capturedMs = startMs + i * BLOCK_MS + (dropAt >= 0 && i >= dropAt ? dropped * BLOCK_MS : 0);
    const audioClockMs = (frame / RATE) * 1000;
    // The page reads the clock once the block's last sample is rendered, plus a delay.
    const receivedMs = capturedMs + BLOCK_MS + readDelay(i) + (lateReads.get(i) ?? 0);
    blocks.push({ frame, offsetMs: receivedMs - (audioClockMs + BLOCK_MS) });
    truth.push(capturedMs / 1000);
  }
  return { blocks, truth };
}

const worstError = (times: number[], truth: number[]) => Math.max(...times.map((t, i) => Math.abs(t - truth[i]!) * 1000));

describe("the microphone's blocks on the capture clock", () => {
  it("times a recording with nothing dropped to within a read's delay", () => {
    const { blocks, truth } = recording();
    expect(worstError(blockTimes(blocks, RATE, 0), truth)).toBeLessThanOrEqual(12);
  });

  it("times every block after a dropped stretch where it was recorded, not early by the stretch", () => {
    // Eight blocks lost half-way (341 ms): the capture that the engine refused for mouth-voice sync.
    const { blocks, truth } = recording({ dropAt: 150, dropped: 8 });
    const times = blockTimes(blocks, RATE, 0);
    expect(worstError(times, truth)).toBeLessThanOrEqual(12);
    expect(worstError(times.slice(150), truth.slice(150))).toBeLessThanOrEqual(12);
  });

  it("times blocks the page received late (a busy page, no samples lost) by the prompt reads after them", () => {
    const lateReads = new Map<number, number>();
    for (let i = 100; i < 110; i++) lateReads.set(i, 250 - (i - 100) * 25);
    const { blocks, truth } = recording({ lateReads });
    expect(worstError(blockTimes(blocks, RATE, 0), truth)).toBeLessThanOrEqual(12);
  });

  it("takes the track's input latency off every block", () => {
    const { blocks, truth } = recording({ dropAt: 40, dropped: 3 });
    const times = blockTimes(blocks, RATE, 0.02);
    expect(worstError(times.map((t) => t + 0.02), truth)).toBeLessThanOrEqual(12);
  });
});
