/**
 * The device check page (`hosted-capture/check`) driven through one capture: for the browser tests
 * (through chromium.ts's guarded browser) and the browser benchmark (scripts/bench/browser.ts).
 * Free of vitest, so scripts can use it.
 */
import type { Page } from "playwright-core";

/** What the device check page computed in one capture, and what getting ready cost. */
export interface CheckPageCapture {
  descriptor: any;
  stats: any;
  /** From navigation to the page being ready to record (models loaded, camera on, gates passed), ms. */
  readyMs: number;
  /** Bytes transferred until then. */
  readyBytes: number;
}

/**
 * Opens the service's device check page (`hosted-capture/check`) on `options.page` (the guarded
 * browser's first page by default), waits until it is ready to record, records `seconds` and
 * returns the descriptor it shows. `light: false` records without the light challenge (version 1);
 * with it (the page's default) the page's preflight must pass first, which takes the lit camera.
 */
export async function captureOnCheckPage(
  guarded: { page: Page; bytes(): number },
  baseUrl: string,
  seconds: number,
  options: { light: boolean; page?: Page },
): Promise<CheckPageCapture> {
  const page = options.page ?? guarded.page;
  const started = Date.now();
  await page.goto(`${baseUrl}/functions/v1/hosted-capture/check?seconds=${seconds}${options.light ? "" : "&light=0"}`);
  await page
    .waitForFunction(() => (document.getElementById("start") as HTMLButtonElement | null)?.disabled === false, null, {
      timeout: 90_000,
    })
    .catch(async (error: Error) => {
      throw new Error(`${error.message}; the check page says: ${await page.textContent("#status").catch(() => "(no status)")}`);
    });
  const readyMs = Date.now() - started;
  const readyBytes = guarded.bytes();
  await page.click("#start");
  const done = () =>
    !document.getElementById("descriptor")!.hidden || /failed|does not reach/.test(document.getElementById("status")!.textContent ?? "");
  await page.waitForFunction(done, null, { timeout: (seconds + 30) * 1000 }).catch(async (error: Error) => {
    throw new Error(`${error.message}; the check page says: ${await page.textContent("#status")}`);
  });
  if (await page.isHidden("#descriptor")) throw new Error(`the check page: ${await page.textContent("#status")}`);
  return {
    descriptor: JSON.parse((await page.textContent("#descriptor"))!),
    stats: JSON.parse((await page.textContent("#stats"))!),
    readyMs,
    readyBytes,
  };
}
