/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser), with the fake camera
 * and microphone playing test media, and a guard that fails the test on any request to a host
 * other than the service. One browser per test file: the fake devices are chosen at launch.
 */
import { getPriority, setPriority } from "node:os";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

export const CHROMIUM = "/usr/bin/chromium";

/** The launch flags of DESIGN.md section 4; the dead proxy keeps Chromium's own calls on the machine. */
export function chromiumFlags(media?: { video: string; audio: string }): string[] {
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=127.0.0.1:9",
    ...(media
      ? [
          "--use-fake-device-for-media-stream",
          "--use-fake-ui-for-media-stream",
          `--use-file-for-fake-video-capture=${media.video}`,
          `--use-file-for-fake-audio-capture=${media.audio}`,
        ]
      : []),
  ];
}

/**
 * Launches Chromium with a higher scheduling priority than the test process (nice -10, where the
 * user may: root in CI), which its processes inherit. Chromium's fake camera reads its file on a
 * timer that never catches up: when other work on a busy machine delays it, the video falls behind
 * the fake microphone for good, which no real camera does, and the mouth and the voice drift apart.
 */
async function launchAhead(media?: { video: string; audio: string }): Promise<Browser> {
  const own = getPriority();
  try {
    setPriority(own - 10);
  } catch {
    // Not permitted: launch at the same priority.
  }
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: chromiumFlags(media) });
  } finally {
    try {
      setPriority(own);
    } catch {
      // Lowering one's own priority back is always permitted; nothing to undo otherwise.
    }
  }
}

export interface GuardedBrowser {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Every request to another host (answered with a network error); must stay empty. */
  foreign: string[];
  /** Bytes of every response body the pages (and their workers) received. */
  bytes(): number;
  /** Another page in a context of its own (its own locale and cookies), under the same guard. */
  newPage(options?: PageOptions): Promise<Page>;
  close(): Promise<void>;
}

export interface PageOptions {
  locale?: string;
  viewport?: { width: number; height: number };
}

/**
 * A browser whose pages may talk to `baseUrl`'s origin and nothing else: every other request is
 * recorded and refused. `close()` asserts that none happened.
 */
export async function openBrowser(
  baseUrl: string,
  options: { media?: { video: string; audio: string } } & PageOptions = {},
): Promise<GuardedBrowser> {
  const browser = await launchAhead(options.media);
  const origin = new URL(baseUrl).origin;
  const foreign: string[] = [];
  let bytes = 0;
  async function guardedContext(pageOptions: PageOptions): Promise<BrowserContext> {
    const context = await browser.newContext({ locale: pageOptions.locale ?? "en-GB", viewport: pageOptions.viewport });
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
      foreign.push(url);
      return route.abort("blockedbyclient");
    });
    context.on("response", (response) => {
      response.body().then(
        (body) => {
          bytes += body.length;
        },
        () => {},
      );
    });
    return context;
  }
  const context = await guardedContext(options);
  const page = await context.newPage();
  return {
    browser,
    context,
    page,
    foreign,
    bytes: () => bytes,
    async newPage(pageOptions = {}) {
      return (await guardedContext(pageOptions)).newPage();
    },
    async close() {
      await browser.close();
      expect(foreign, "requests to hosts other than the service").toEqual([]);
    },
  };
}

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
 * Opens the service's device check page (`hosted-capture/check`) in `guarded`, waits until it is
 * ready to record, records `seconds` and returns the descriptor it shows.
 */
export async function captureOnCheckPage(guarded: GuardedBrowser, baseUrl: string, seconds: number): Promise<CheckPageCapture> {
  const { page } = guarded;
  const started = Date.now();
  await page.goto(`${baseUrl}/functions/v1/hosted-capture/check?seconds=${seconds}`);
  await page.waitForFunction(() => !(document.getElementById("start") as HTMLButtonElement).disabled, null, { timeout: 90_000 });
  const readyMs = Date.now() - started;
  const readyBytes = guarded.bytes();
  await page.click("#start");
  const done = () => !document.getElementById("descriptor")!.hidden || /failed/.test(document.getElementById("status")!.textContent ?? "");
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
