/**
 * The face worker on a slow network (D-407): the detector and the landmarks are ready first and the
 * capture may start; the recognition network (most of the bytes) arrives after the reading began.
 * The faces to describe seen before it wait in the worker and are described once it is ready, so
 * the descriptor still carries the face's embedding. The recognition weights are held back by the
 * test (a route on the page, which also sees its worker's requests) until the reading is under way.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { serviceUnderTest } from "../harness/service";
import { type GuardedBrowser, openBrowser } from "./chromium";

const SECONDS = 8;

describe("the recognition network arriving after the reading began", () => {
  let browser: GuardedBrowser;

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media: inject("media").reading });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("the capture starts on the detector and landmarks; the faces seen before the recognition network come are described once it does", {
    timeout: 120_000,
  }, async () => {
    const { page } = browser;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked = false;
    await page.route(/\/models\/face_recognition_model\.bin$/, async (route) => {
      asked = true;
      await held;
      await route.continue();
    });
    await page.goto(`${serviceUnderTest().baseUrl}/functions/v1/hosted-capture/check?seconds=${SECONDS}&light=0`);
    await page.waitForFunction(() => (document.getElementById("start") as HTMLButtonElement | null)?.disabled === false, null, {
      timeout: 90_000,
    });
    expect(asked, "the worker asked for the recognition weights (and the test holds them)").toBe(true);
    expect(await page.evaluate(() => performance.getEntriesByName("face-recognition-ready").length), "not ready yet").toBe(0);
    await page.click("#start");
    // Half the reading without the recognition network: the faces to describe wait in the worker.
    await page.waitForTimeout((SECONDS / 2) * 1000);
    release();
    await page.waitForFunction(
      () => !document.getElementById("descriptor")!.hidden || /failed/.test(document.getElementById("status")!.textContent ?? ""),
      null,
      {
        timeout: (SECONDS + 60) * 1000,
      },
    );
    expect(await page.evaluate(() => performance.getEntriesByName("face-recognition-ready").length)).toBe(1);
    const descriptor = JSON.parse((await page.textContent("#descriptor"))!);
    const stats = JSON.parse((await page.textContent("#stats"))!);
    expect(descriptor.face, "the descriptor carries the face").toMatchObject({ model: "face-api/resnet128" });
    expect(descriptor.face.embedding).toHaveLength(128);
    expect(Math.hypot(...descriptor.face.embedding)).toBeCloseTo(1, 3);
    expect(stats.describe_ms.runs, "faces described, those that waited among them").toBeGreaterThanOrEqual(3);
  });
});
