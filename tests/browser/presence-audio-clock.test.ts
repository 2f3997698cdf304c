/**
 * The microphone's samples are timed on the input side (client/capture/microphone.ts, D-389): a
 * constant output latency (a Bluetooth headset's, 150 ms here) must not move the audio against the
 * video. The device check page captures a reading with the audio context reporting 150 ms more
 * output latency than it has; timed by the output side, every block would be stamped 150 ms later,
 * after the page had it in hand. Timed by the input side, no block is stamped after it arrived, and
 * none far before (the check page's `audio_lead_ms`), and the engine's mouth-voice lag stays in
 * its window. (Comparing two captures' lags would not do: on a loaded machine the fake camera falls
 * behind the fake microphone by different amounts from one capture to the next.)
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { evaluatePresence } from "../../shared/engine";
import { serviceUnderTest } from "../harness/service";
import { type CheckPageCapture, captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";

const SECONDS = 12;
const OUTPUT_LATENCY_MS = 150;

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
