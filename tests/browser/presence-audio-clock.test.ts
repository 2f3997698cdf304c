/**
 * The microphone's samples are timed where they were recorded (client/capture/microphone.ts), on
 * both of the client's paths.
 *
 * On the audio track's own chunks (Chromium's MediaStreamTrackProcessor, D-780), each carrying its
 * capture time: the page's audio contexts stopped for 400 ms and its main thread busy for 600 ms in
 * the middle of a reading must move no block, and the engine accepts the mouth-voice sync.
 *
 * On the AudioWorklet, the path of browsers without a processor for audio (forced here by a
 * processor that refuses audio tracks): a constant output latency (a Bluetooth headset's, 150 ms
 * here: the audio context reports it, D-389) must not move the audio against the video; and a
 * stretch of samples the audio thread drops (the audio context stopped for 400 ms, which drops the
 * microphone's samples as Chromium's audio thread does when it misses its turns under load) must
 * not stamp the blocks after it early by the stretch (D-770: by the smallest offset seen before
 * them, they came 400 ms early and the engine refused the mouth-voice sync). No block is stamped
 * after it arrived, nor long before (the check page's `audio_lead_ms`). (Comparing two captures'
 * lags would not do: on a loaded machine the fake camera and microphone fall out of step by
 * different amounts from one capture to the next.)
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { evaluatePresence } from "../../shared/engine";
import { serviceUnderTest } from "../harness/service";
import { captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";

const SECONDS = 12;
const OUTPUT_LATENCY_MS = 150;
const SUSPENDED_MS = 400;
const BUSY_MS = 600;

/** Runs in the page before its scripts: every output timestamp and `outputLatency` this much later. */
function addOutputLatency(extraMs: number): void {
  const original = AudioContext.prototype.getOutputTimestamp;
  AudioContext.prototype.getOutputTimestamp = function (this: AudioContext) {
    const stamp = original.call(this);
    return { contextTime: stamp.contextTime, performanceTime: (stamp.performanceTime ?? performance.now()) + extraMs };
  };
  Object.defineProperty(AudioContext.prototype, "outputLatency", { get: () => extraMs / 1000 });
}

/** Runs in the page before its scripts: a track processor that refuses audio tracks, as a browser with one for video only. */
function processorForVideoOnly(): void {
  const Original = (globalThis as unknown as { MediaStreamTrackProcessor?: new (init: { track: MediaStreamTrack }) => object })
    .MediaStreamTrackProcessor;
  if (!Original) return;
  (globalThis as unknown as { MediaStreamTrackProcessor: unknown }).MediaStreamTrackProcessor = class extends Original {
    constructor(init: { track: MediaStreamTrack; maxBufferSize?: number }) {
      if (init.track.kind === "audio") throw new TypeError("no processor for audio here");
      super(init);
    }
  };
}

/**
 * Runs in the page before its scripts: 5 s after "Start" is pressed the page's audio contexts stop
 * for `suspendMs`, and 2 s later its main thread is busy for `busyMs` (0: not).
 */
function disturbAfterStart({ suspendMs, busyMs }: { suspendMs: number; busyMs: number }): void {
  const contexts: AudioContext[] = [];
  const Original = AudioContext;
  globalThis.AudioContext = class extends Original {
    constructor(options?: AudioContextOptions) {
      super(options);
      contexts.push(this);
    }
  };
  document.addEventListener(
    "click",
    (event) => {
      if ((event.target as Element | null)?.id !== "start") return;
      setTimeout(() => {
        for (const context of contexts) void context.suspend().then(() => setTimeout(() => void context.resume(), suspendMs));
      }, 5_000);
      if (busyMs > 0)
        setTimeout(() => {
          const until = performance.now() + busyMs;
          while (performance.now() < until) {
            // the page's main thread taken, as a slow device's is
          }
        }, 7_000);
    },
    true,
  );
}

interface AudioStats {
  audio_lead_ms: { p50: number; max: number; blocks: number };
  audio_seconds: number;
  audio_clock: string;
}

/** A reading on the check page with `scripts` run in the page first; its stats and the engine's verdict logged. */
async function disturbedCapture(scripts: ((browser: GuardedBrowser) => Promise<unknown>)[]) {
  const media = inject("media");
  const browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.reading });
  for (const script of scripts) await script(browser);
  const capture = await captureOnCheckPage(browser, serviceUnderTest().baseUrl, SECONDS, { light: false });
  const stats = capture.stats as unknown as AudioStats;
  const result = evaluatePresence(capture.descriptor);
  console.log(JSON.stringify({ av_sync: result.liveness.checks.av_sync, audio: stats }));
  return { browser, stats, result };
}

describe("the microphone on the audio track's own timestamps (Chromium)", () => {
  let run: Awaited<ReturnType<typeof disturbedCapture>>;

  beforeAll(async () => {
    run = await disturbedCapture([(b) => b.page.addInitScript(disturbAfterStart, { suspendMs: SUSPENDED_MS, busyMs: BUSY_MS })]);
  });

  afterAll(async () => {
    await run?.browser.close();
  });

  it("takes the track's chunks, and stamps none after it arrived, nor long before, through the stopped audio and the busy page", () => {
    expect(run.stats.audio_clock).toBe("capture");
    expect(run.stats.audio_seconds).toBeGreaterThan(SECONDS - 1);
    expect(run.stats.audio_lead_ms.max).toBeLessThanOrEqual(5);
    expect(run.stats.audio_lead_ms.p50).toBeGreaterThan(-SUSPENDED_MS / 2);
  });

  it("keeps the mouth-voice lag in the engine's window, and the engine accepts the capture", () => {
    expect(run.result.liveness.checks.av_sync.passed, JSON.stringify(run.result.liveness.checks.av_sync)).toBe(true);
    expect(run.result.liveness.passed, JSON.stringify(run.result.liveness.checks)).toBe(true);
  });
});

describe("the microphone on the audio worklet: a 150 ms output latency, and a stretch the audio thread drops", () => {
  let run: Awaited<ReturnType<typeof disturbedCapture>>;

  beforeAll(async () => {
    run = await disturbedCapture([
      (b) => b.page.addInitScript(processorForVideoOnly),
      (b) => b.page.addInitScript(addOutputLatency, OUTPUT_LATENCY_MS),
      (b) => b.page.addInitScript(disturbAfterStart, { suspendMs: SUSPENDED_MS, busyMs: 0 }),
    ]);
  });

  afterAll(async () => {
    await run?.browser.close();
  });

  it("took the worklet's blocks and lost the stretch: less sound than the reading's length", () => {
    expect(run.stats.audio_clock).toBe("audio-context");
    // The recording and the quarter second after it, less at least half the stopped stretch.
    expect(run.stats.audio_seconds, JSON.stringify(run.stats)).toBeLessThan(SECONDS + 0.25 - SUSPENDED_MS / 2000);
  });

  it("stamps no block after it arrived, nor long before", () => {
    expect(run.stats.audio_lead_ms.blocks).toBeGreaterThan(100);
    expect(run.stats.audio_lead_ms.max).toBeLessThanOrEqual(5);
    expect(run.stats.audio_lead_ms.p50).toBeGreaterThan(-OUTPUT_LATENCY_MS);
  });

  it("keeps the mouth-voice lag in the engine's window, and the engine accepts the capture", () => {
    expect(run.result.liveness.checks.av_sync.passed, JSON.stringify(run.result.liveness.checks.av_sync)).toBe(true);
    expect(run.result.liveness.passed, JSON.stringify(run.result.liveness.checks)).toBe(true);
  });
});
