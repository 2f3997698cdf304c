/**
 * The photograph without a pulse (mouth and speech still move together): refused for no pulse,
 * without the light challenge (version 1) and under it (version 2), where the print reflects the
 * screen's light like a face and the light check passes: the screen's light left in its "pulse"
 * must not read as one (D-395). Several lit captures, each for its own nonce.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { evaluatePresence, presenceConfig } from "../../shared/engine";
import { checkPulse } from "../../shared/engine/checks";
import { serviceUnderTest } from "../harness/service";
import { captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";
import { litCamera } from "./lit-camera";
import { refusesAttack } from "./presence-attacks";

describe("the device check page on a still photograph", () => {
  refusesAttack(inject("media").still, "no_pulse");
});

describe("the device check page on a still photograph lit by the screen", () => {
  const media = inject("media");
  /** Lit captures, each for its own nonce: the browser passed about one in five before D-395. */
  const RUNS = Number(process.env.PHOTO_LIT_RUNS ?? 4);
  const SECONDS = 12;
  let browser: GuardedBrowser;

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.still });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it(`follows the light and is refused for no pulse, ${RUNS} captures of ${RUNS}`, { timeout: RUNS * 60_000 }, async () => {
    const verdicts: { reason: string | null; light: boolean | undefined; pulse_db: number; bpm: number; unregressed_db: number }[] = [];
    for (let run = 0; run < RUNS; run++) {
      const page = await browser.newPage();
      await litCamera(page, media.light);
      const capture = await captureOnCheckPage(browser, serviceUnderTest().baseUrl, SECONDS, { light: true, page });
      await page.close();
      expect(capture.descriptor.version).toBe(2);
      const result = evaluatePresence(capture.descriptor);
      const { pulse, light } = result.liveness.checks;
      // The pulse as the engine judged it before D-395 (the light left in), for the record.
      const unregressed = checkPulse(capture.descriptor.signals.pulse, capture.descriptor.signals.sample_rate_hz, presenceConfig);
      verdicts.push({
        reason: result.reason,
        light: light?.passed,
        pulse_db: pulse.snr_db,
        bpm: pulse.heart_rate_bpm,
        unregressed_db: unregressed.snr_db,
      });
    }
    console.log(JSON.stringify({ photo_lit: verdicts }));
    expect(verdicts.map((v) => v.reason)).toEqual(verdicts.map(() => "no_pulse"));
  });
});
