/**
 * The microphone's blocks on the capture clock (client/capture/microphone.ts, D-770, D-780): the
 * blocks of a recording as the page receives them, each with its first sample on the source's own
 * clock and that clock's reading when it came, are timed where their samples were recorded: after
 * the audio thread missed its turns and a stretch of samples was dropped (as Chromium does under
 * load), after reads that came late, and, from the track's own timestamps, after a stretch held
 * back for the rest of the recording.
 */
import { describe, expect, it } from "vitest";
import { blockTimes } from "../../../client/capture/microphone";

const RATE = 48_000;
const BLOCK = 2048;
const BLOCK_MS = (BLOCK / RATE) * 1000;

/** A small, repeatable read delay (ms) for block i: the render quantum and the page's turn. */
const readDelay = (i: number) => 2 + ((i * 7919) % 11);

interface Recording {
  count?: number;
  /** From this block on, `dropped` blocks' worth of samples were lost before it. */
  dropAt?: number;
  dropped?: number;
  /** Extra delay (ms) of a block's read: the page busy, the block waiting. */
  lateReads?: Map<number, number>;
  /** From this block on, every read comes `heldMs` later: a stretch held back for the rest of the recording. */
  heldAt?: number;
  heldMs?: number;
}

/**
 * A recording's blocks as each source reports them. The audio context's clock counts rendered
 * samples only (a lost stretch is not counted); the track's timestamps are capture times on the
 * browser's clock, 5 s off `performance.now()`.
 */
function recording({ count = 300, dropAt = -1, dropped = 0, lateReads = new Map(), heldAt = -1, heldMs = 0 }: Recording = {}) {
  const startMs = 10_000;
  const audioContext: { receivedMs: number; clockMs: number; readMs: number }[] = [];
  const track: typeof audioContext = [];
  const truth: number[] = [];
  for (let i = 0; i < count; i++) {
    const capturedMs = startMs + i * BLOCK_MS + (dropAt >= 0 && i >= dropAt ? dropped * BLOCK_MS : 0);
    const receivedMs = capturedMs + BLOCK_MS + readDelay(i) + (lateReads.get(i) ?? 0) + (heldAt >= 0 && i >= heldAt ? heldMs : 0);
    const audioClockMs = i * BLOCK_MS;
    audioContext.push({ receivedMs, clockMs: audioClockMs, readMs: audioClockMs + BLOCK_MS });
    track.push({ receivedMs, clockMs: capturedMs - 5_000, readMs: capturedMs - 5_000 + BLOCK_MS });
    truth.push(capturedMs / 1000);
  }
  return { audioContext, track, truth };
}

const worstError = (times: number[], truth: number[]) => Math.max(...times.map((t, i) => Math.abs(t - truth[i]!) * 1000));

describe("the microphone's blocks on the audio context's clock (the worklet)", () => {
  it("times a recording with nothing dropped to within a read's delay", () => {
    const { audioContext, truth } = recording();
    expect(worstError(blockTimes(audioContext, "audio-context", 0), truth)).toBeLessThanOrEqual(12);
  });

  it("times every block after a dropped stretch where it was recorded, not early by the stretch", () => {
    // Eight blocks lost half-way (341 ms): the capture that the engine refused for mouth-voice sync.
    const { audioContext, truth } = recording({ dropAt: 150, dropped: 8 });
    const times = blockTimes(audioContext, "audio-context", 0);
    expect(worstError(times, truth)).toBeLessThanOrEqual(12);
    expect(worstError(times.slice(150), truth.slice(150))).toBeLessThanOrEqual(12);
  });

  it("times blocks the page received late (a busy page, no samples lost) by the prompt reads after them", () => {
    const lateReads = new Map<number, number>();
    for (let i = 100; i < 110; i++) lateReads.set(i, 250 - (i - 100) * 25);
    const { audioContext, truth } = recording({ lateReads });
    expect(worstError(blockTimes(audioContext, "audio-context", 0), truth)).toBeLessThanOrEqual(12);
  });

  it("takes the track's input latency off every block", () => {
    const { audioContext, truth } = recording({ dropAt: 40, dropped: 3 });
    const times = blockTimes(audioContext, "audio-context", 0.02);
    expect(
      worstError(
        times.map((t) => t + 0.02),
        truth,
      ),
    ).toBeLessThanOrEqual(12);
  });
});

describe("the microphone's blocks on the track's own timestamps", () => {
  it("times every block where it was recorded: nothing lost, a stretch lost, late reads, a stretch held back for the rest", () => {
    const lateReads = new Map<number, number>([
      [30, 180],
      [31, 120],
    ]);
    for (const shape of [{}, { dropAt: 150, dropped: 8 }, { lateReads }, { heldAt: 120, heldMs: 300 }]) {
      const { track, truth } = recording(shape);
      expect(worstError(blockTimes(track, "capture", 0), truth), JSON.stringify(shape)).toBeLessThanOrEqual(12);
    }
  });

  it("keeps the bound the microphone found before the recording, when every read of the recording came late", () => {
    const { track, truth } = recording({ heldAt: 0, heldMs: 400 });
    // Before the recording the page read a chunk promptly: its offset is the clocks' own (5 s) plus the shortest delay.
    expect(worstError(blockTimes(track, "capture", 0, 5_000 + 2), truth)).toBeLessThanOrEqual(12);
  });
});
