/**
 * The attacks of the browser tests, one browser each (the fake devices are fixed at launch): the
 * check page computes the descriptor from the attack's media, the engine refuses it with the
 * attack's reason, and so does the service.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { evaluatePresence } from "../../shared/engine";
import { merchantFactory } from "../harness/factories";
import { call } from "../harness/http";
import { CONSENT } from "../harness/identity";
import { serviceUnderTest } from "../harness/service";
import { type CheckPageCapture, captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";

export function refusesAttack(media: { video: string; audio: string }, reason: string, seconds = 12): void {
  let browser: GuardedBrowser;
  let pending: Promise<CheckPageCapture> | undefined;
  /**
   * The attack's one capture, made by the first test that needs it rather than in a hook: a capture
   * that fails (the page not getting ready on a loaded machine) fails that test, which the browser
   * project's retry runs again with a fresh capture; a failing hook would skip both tests untried.
   */
  const captured = () =>
    (pending ??= captureOnCheckPage(browser, serviceUnderTest().baseUrl, seconds, { light: false }).catch((error: unknown) => {
      pending = undefined;
      throw error;
    }));

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it(`still finds the face, and the engine refuses the capture: ${reason}`, { timeout: (seconds + 120) * 1000 }, async () => {
    const capture = await captured();
    expect(capture.descriptor.face.quality).toBeGreaterThan(0.5);
    const result = evaluatePresence(capture.descriptor);
    expect(result.reason, JSON.stringify(result.liveness.checks)).toBe(reason);
  });

  it(`is refused by the service with 403 BIOMETRIC_LIVENESS_FAILED: ${reason}`, { timeout: (seconds + 120) * 1000 }, async () => {
    const capture = await captured();
    const merchant = await merchantFactory();
    const res = await call("process-biovital-enrollment", {
      key: merchant.keys.pk_test,
      body: { capture_nonce: capture.descriptor.capture_nonce, face_template: capture.descriptor, consent: CONSENT },
    });
    expect(res.status, res.text).toBe(403);
    expect(res.body).toMatchObject({ code: "BIOMETRIC_LIVENESS_FAILED", reason });
  });
}
