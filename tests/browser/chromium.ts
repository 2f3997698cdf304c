/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser), with the fake camera
 * and microphone playing test media, and a guard that fails the test on any request to a host
 * other than the service. One browser per test file: the fake devices are chosen at launch.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { launchAhead } from "./launch";

export { type CheckPageCapture, captureOnCheckPage } from "./check-page";
export { CHROMIUM, chromiumFlags } from "./launch";

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
  /**
   * Other origins this page may reach besides the service's (a merchant's page the screen sends
   * the person back to, served by the test on this machine), and whether their certificates may be
   * self-signed.
   */
  allow?: string[];
  ignoreHTTPSErrors?: boolean;
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
    const context = await browser.newContext({
      locale: pageOptions.locale ?? "en-GB",
      viewport: pageOptions.viewport,
      ignoreHTTPSErrors: pageOptions.ignoreHTTPSErrors ?? false,
    });
    const allowed = new Set([origin, ...(pageOptions.allow ?? [])]);
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (allowed.has(new URL(url).origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
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
