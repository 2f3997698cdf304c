/**
 * A real browser computes the descriptor of a real photograph whose skin carries a synthetic pulse
 * and whose mouth moves with synthesised speech (scripts/media/generate.ts), from Chromium's fake
 * camera and microphone: the face is found, the descriptor is valid, its heart rate is within 5
 * bpm of the synthetic one, and the service enrols it. Then the same page with the light
 * challenge (its default): in front of the lit camera it computes version 2 and the engine accepts
 * it; in front of a camera the screen's light does not reach, it says so and records nothing. The
 * page's costs are printed for docs/benchmarks.md.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PREFLIGHT } from "../../client/descriptor/light";
import { evaluatePresence, parseDescriptor } from "../../shared/engine";
import { merchantFactory } from "../harness/factories";
import { call } from "../harness/http";
import { CONSENT } from "../harness/identity";
import { serviceUnderTest } from "../harness/service";
import { type CheckPageCapture, captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";
import { litCamera } from "./lit-camera";

/** 12 s, not 20: the media loop is 8.5 s, and 12 s hold the 6 beats and 3 breath pauses the engine needs. */
const SECONDS = 12;

describe("the device check page on a bona fide reading", () => {
  const media = inject("media");
  let browser: GuardedBrowser;
  let capture: CheckPageCapture;

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.reading });
    capture = await captureOnCheckPage(browser, serviceUnderTest().baseUrl, SECONDS, { light: false });
    console.log(
      JSON.stringify({
        check_page: "v1",
        ready_ms: capture.readyMs,
        ready_bytes: capture.readyBytes,
        ...capture.stats,
        synthetic_bpm: media.bpm,
      }),
    );
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("finds the face and computes a valid descriptor v1 on the device", () => {
    const parsed = parseDescriptor(capture.descriptor);
    expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
    expect(capture.descriptor.face.model).toBe("face-api/resnet128");
    expect(capture.descriptor.face.quality).toBeGreaterThan(0.5);
    expect(capture.descriptor.signals.sample_rate_hz).toBe(15);
    expect(capture.descriptor.signals.pulse).toHaveLength(SECONDS * 15);
    const valid = capture.descriptor.signals.valid as number[];
    expect(valid.reduce((sum, x) => sum + x, 0) / valid.length, JSON.stringify(capture.stats)).toBeGreaterThanOrEqual(0.8);
  });

  it("carries the synthetic heart rate within 5 bpm, and the engine accepts it", () => {
    const result = evaluatePresence(capture.descriptor);
    const checks = JSON.stringify(result.liveness.checks);
    expect(result.liveness.checks, checks).toMatchObject({ pulse: { passed: true }, av_sync: { passed: true } });
    expect(Math.abs(result.heart_rate_bpm! - media.bpm)).toBeLessThanOrEqual(5);
    expect(result.accepted, checks).toBe(true);
  });

  it("is enrolled by the service", async () => {
    const merchant = await merchantFactory();
    const res = await call("process-biovital-enrollment", {
      key: merchant.keys.pk_test,
      body: { capture_nonce: capture.descriptor.capture_nonce, face_template: capture.descriptor, consent: CONSENT },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ success: true, status: "enrolled" });
  });

  it("kept every request on the service, and stays within its costs", () => {
    expect(browser.foreign).toEqual([]);
    expect(capture.stats.backend).toBe("wasm");
    expect(capture.stats.landmark_hz).toBeGreaterThan(4);
  });
});

describe("the device check page with the light challenge", () => {
  const media = inject("media");
  /** The length the engine's v2 figures are measured at (docs/benchmarks.md). */
  const LIT_SECONDS = 15;
  let browser: GuardedBrowser;

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.reading });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("in front of the lit camera: the preflight passes, the page computes version 2, and the engine accepts it", async () => {
    const page = await browser.newPage();
    await litCamera(page, media.light);
    const lit = await captureOnCheckPage(browser, serviceUnderTest().baseUrl, LIT_SECONDS, { light: true, page });
    console.log(JSON.stringify({ check_page: "v2", ...lit.stats }));
    expect(lit.stats.preflight_depth).toBeGreaterThanOrEqual(PREFLIGHT.minDepth);
    expect(lit.descriptor).toMatchObject({ version: 2, signals: { light: { sequence: "light-v1" } } });
    const result = evaluatePresence(lit.descriptor);
    expect(result.liveness.checks.light, JSON.stringify(result.assurance_inputs)).toMatchObject({ passed: true });
    expect(result.accepted, JSON.stringify(result.liveness.checks)).toBe(true);
  });

  it("in front of a camera the screen's light does not reach: it says so and records nothing", async () => {
    await expect(captureOnCheckPage(browser, serviceUnderTest().baseUrl, LIT_SECONDS, { light: true })).rejects.toThrow(
      /The screen's light does not reach the face/,
    );
    expect(await browser.page.isHidden("#descriptor")).toBe(true);
    expect(await browser.page.isEnabled("#start"), "and it can record again").toBe(true);
  });
});
