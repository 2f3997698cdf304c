/**
 * The microphone's samples are timed on the input side (client/capture/microphone.ts, D-389): a
 * constant output latency (a Bluetooth headset's, 150 ms here) must not move the audio against the
 * video. The device check page captures a reading with the audio context reporting 150 ms more
 * output latency than it has; timed by the output side, every block would be stamped 150 ms later,
 * after the page had it in hand. Timed by the input side, no block is stamped after it arrived, and
 * none far before (the check page's `audio_lead_ms`), and the engine's mouth-voice lag stays in
 * its window. (Comparing two captures' lags would not do: on a loaded machine the fake camera falls
 * behind the fake microphone by different amounts from one capture to the next.)
 *
 * And a stretch of samples the audio thread drops (D-770): under load Chromium's audio thread
 * misses its turns, the samples of that stretch never reach the page and the audio clock falls
 * behind for the rest of the capture. Here the page's audio context is suspended for 400 ms in the
 * middle of a reading, which drops the microphone's samples the same way; every later block must
 * still be stamped where it was recorded (by the smallest offset seen before it, they came 400 ms
 * early, and the engine refused the mouth-voice sync).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { evaluatePresence } from "../../shared/engine";
import { serviceUnderTest } from "../harness/service";
import { type CheckPageCapture, captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";

const SECONDS = 12;
const OUTPUT_LATENCY_MS = 150;
const SUSPENDED_MS = 400;

/** Runs in the page before its scripts: 5 s after "Start" is pressed, the page's audio contexts stop for `ms`. */
function suspendAudioAfterStart(ms: number): void {
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
        for (const context of contexts) void context.suspend().then(() => setTimeout(() => void context.resume(), ms));
      }, 5_000);
    },
    true,
  );
}

/** Runs in the page before its scripts: every output timestamp and `outputLatency` this much later. */
function addOutputLatency(extraMs: number): void {
  const original = AudioContext.prototype.getOutputTimestamp;
  AudioContext.prototype.getOutputTimestamp = function (this: AudioContext) {
    const stamp = original.call(this);
    return { contextTime: stamp.contextTime, performanceTime: (stamp.performanceTime ?? performance.now()) + extraMs };
  };
  Object.defineProperty(AudioContext.prototype, "outputLatency", { get: () => extraMs / 1000 });
}

describe("the microphone's clock under a 150 ms output latency", () => {
  const media = inject("media");
  let browser: GuardedBrowser;
  let capture: CheckPageCapture;

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.reading });
    await browser.page.addInitScript(addOutputLatency, OUTPUT_LATENCY_MS);
    capture = await captureOnCheckPage(browser, serviceUnderTest().baseUrl, SECONDS, { light: false });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("stamps no microphone block after it arrived, nor long before", () => {
    const lead = (capture.stats as { audio_lead_ms: { p50: number; max: number; blocks: number } }).audio_lead_ms;
    expect(lead.blocks).toBeGreaterThan(100);
    expect(lead.max).toBeLessThanOrEqual(5);
    expect(lead.p50).toBeGreaterThan(-OUTPUT_LATENCY_MS);
  });

  it("keeps the mouth-voice lag in the engine's window, and the engine accepts the capture", () => {
    const result = evaluatePresence(capture.descriptor);
    console.log(
      JSON.stringify({
        av_sync: result.liveness.checks.av_sync,
        audio_lead_ms: (capture.stats as { audio_lead_ms: unknown }).audio_lead_ms,
      }),
    );
    expect(result.liveness.checks.av_sync.passed, JSON.stringify(result.liveness.checks.av_sync)).toBe(true);
    expect(result.liveness.passed, JSON.stringify(result.liveness.checks)).toBe(true);
  });
});

describe("the microphone's clock after the audio thread drops a stretch of samples", () => {
  const media = inject("media");
  let browser: GuardedBrowser;
  let capture: CheckPageCapture;

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.reading });
    await browser.page.addInitScript(suspendAudioAfterStart, SUSPENDED_MS);
    capture = await captureOnCheckPage(browser, serviceUnderTest().baseUrl, SECONDS, { light: false });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("lost the stretch: fewer blocks than the reading's length holds", () => {
    const lead = (capture.stats as { audio_lead_ms: { blocks: number } }).audio_lead_ms;
    const sampleRate = 48_000;
    // The recording and the quarter second after it, in blocks of 2048 samples, less the stretch.
    const whole = ((SECONDS + 0.25) * sampleRate) / 2048;
    expect(lead.blocks, JSON.stringify(lead)).toBeLessThan(whole - ((SUSPENDED_MS / 1000) * sampleRate) / 2048 / 2);
  });

  it("stamps the blocks after the stretch where they were recorded, and the engine accepts the mouth-voice sync", () => {
    const lead = (capture.stats as { audio_lead_ms: { p50: number; max: number; blocks: number } }).audio_lead_ms;
    const result = evaluatePresence(capture.descriptor);
    console.log(JSON.stringify({ av_sync: result.liveness.checks.av_sync, audio_lead_ms: lead }));
    expect(lead.max).toBeLessThanOrEqual(5);
    expect(lead.p50).toBeGreaterThan(-SUSPENDED_MS / 2);
    expect(result.liveness.checks.av_sync.passed, JSON.stringify(result.liveness.checks.av_sync)).toBe(true);
  });
});
