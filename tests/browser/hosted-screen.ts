/**
 * Driving the hosted screen (`hosted-capture/session`) in the browser tests: open a session's URL,
 * wait for a view, go through the gates and the recording, and photograph each state in the light
 * and the dark scheme.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { evaluatePresence, type PresenceDescriptor } from "../../shared/engine";

/** A phone-sized viewport (the screenshots in docs/screens/ are taken at it). */
export const PHONE = { width: 390, height: 780 };

/**
 * Where screenshots go: docs/screens/ when UPDATE_SCREENSHOTS=1 (the ones the README shows, kept
 * in git), else dist/screens/ (taken all the same, so a state that cannot be photographed fails).
 */
const SCREENSHOTS = join(process.cwd(), process.env.UPDATE_SCREENSHOTS === "1" ? "docs/screens" : "dist/screens");

/** The screen's URL for a capture of `seconds` (the session's `url` with `?seconds=`, its fragment kept). */
export function screenUrl(url: string, seconds?: number): string {
  if (seconds === undefined) return url;
  const [address, fragment] = url.split("#");
  return `${address}?seconds=${seconds}#${fragment}`;
}

/**
 * Makes every hosted screen `target` opens (a page, or a context with every window it opens) record
 * `seconds`, as `screenUrl` does, for a screen whose URL another page chooses (the person's page
 * opens the one its sign-in answered): the `?seconds=` is added to the screen's address before its
 * script reads it.
 */
export async function readingSecondsOf(target: Page | BrowserContext, seconds: number): Promise<void> {
  await target.addInitScript((wanted) => {
    const address = new URL(location.href);
    if (!address.pathname.endsWith("/hosted-capture/session") || address.searchParams.has("seconds")) return;
    address.searchParams.set("seconds", String(wanted));
    history.replaceState(history.state, "", address);
  }, seconds);
}

export type ScreenView = "loading" | "handoff" | "intro" | "capture" | "sending" | "outcome" | "error";

/** Waits until the screen shows `view` (failing with what it shows otherwise). */
export async function waitForView(page: Page, view: ScreenView, timeout = 60_000): Promise<void> {
  await page
    .waitForFunction((wanted) => document.body.dataset.state === wanted, view, { timeout })
    .catch(async (error: Error) => {
      const shown = await page.evaluate(() => `${document.body.dataset.state}: ${document.querySelector("main")?.innerText}`);
      throw new Error(`${error.message}; the screen shows ${shown}`);
    });
}

/**
 * Saves `name`-light.png and `name`-dark.png of the page as it is now (the scheme switched live);
 * `name` may name a folder below the screenshots' (`me/en-signed-in`); `fullPage` takes the whole
 * page rather than the viewport.
 */
export async function photograph(
  page: Page,
  name: string,
  options: { fullPage?: boolean; schemes?: readonly ("light" | "dark")[] } = {},
): Promise<void> {
  mkdirSync(dirname(join(SCREENSHOTS, name)), { recursive: true });
  for (const scheme of options.schemes ?? (["light", "dark"] as const)) {
    await emulateScheme(page, scheme);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${scheme}.png`), fullPage: options.fullPage ?? false });
  }
  await emulateScheme(page, "light");
}

/** Switches the device's colour scheme and waits until the screen has repainted its theme for it. */
export async function emulateScheme(page: Page, scheme: "light" | "dark"): Promise<void> {
  await page.emulateMedia({ colorScheme: scheme });
  await page.waitForFunction((wanted) => (document.documentElement.dataset.scheme ?? wanted) === wanted, scheme);
}

/** From the capture view: waits until the screen is ready to record (models, camera, quality gates). */
export async function waitForGates(page: Page): Promise<void> {
  await page.waitForFunction(() => !(document.getElementById("record") as HTMLButtonElement).disabled, null, { timeout: 90_000 });
}

/** From the capture view: waits for the gates, starts the reading and returns once it records. */
export async function startReading(page: Page): Promise<void> {
  await waitForGates(page);
  await page.click("#record");
  await page.waitForFunction(() => !document.getElementById("recording")!.hidden);
}

/** The outcome as the screen shows it. */
export async function outcomeOf(page: Page) {
  return page.evaluate(() => ({
    kind: document.getElementById("outcome")!.dataset.kind,
    reason: document.getElementById("outcome")!.dataset.reason,
    title: document.getElementById("outcome-title")!.textContent,
    message: document.getElementById("outcome-message")!.textContent,
    receipt: document.getElementById("outcome-receipt")!.hidden ? null : document.getElementById("receipt-code")!.textContent,
  }));
}

/** What the screen sent to /complete: the capture nonce and the descriptor. */
export interface SentCapture {
  capture_nonce: string;
  face_template: PresenceDescriptor;
}

/** The capture the screen sends to /complete (awaited once it has). Call before the reading starts. */
export function sentCapture(page: Page): Promise<SentCapture> {
  const sent = page
    .waitForRequest((request) => request.url().endsWith("/hosted-capture/complete"), { timeout: 120_000 })
    .then((request) => request.postDataJSON() as SentCapture);
  // A test that fails before the screen sends anything closes the page: that rejection is not the failure to report.
  sent.catch(() => {});
  return sent;
}

/**
 * A reading's figures as the engine judges them, for a failure message: the reason, the quality
 * inputs, the pulse, the voice and the light, and where the grid had no frame (`start+length`
 * runs of samples), so a refusal the test did not expect says whether frames were missing or a
 * signal was weak.
 */
export function readingFigures(descriptor: PresenceDescriptor): string {
  const judged = evaluatePresence(descriptor);
  const valid = descriptor.signals.valid ?? [];
  const missing: string[] = [];
  for (let i = 0; i < valid.length; i++) {
    if (valid[i] !== 0) continue;
    const start = i;
    while (i + 1 < valid.length && valid[i + 1] === 0) i++;
    missing.push(`${start}+${i - start + 1}`);
  }
  const { liveness_score, face_quality, valid_fraction, pulse_snr_db, av_correlation, light_correlation, light_lag_ms, light_depth } =
    judged.assurance_inputs;
  return JSON.stringify({
    reason: judged.reason,
    liveness_score,
    face_quality,
    valid_fraction,
    missing: missing.join(" "),
    pulse_snr_db,
    av_correlation,
    light_correlation,
    light_lag_ms,
    light_depth,
  });
}

/** axe-core's browser build, read once. */
let axeSource: string | undefined;

/**
 * The WCAG 2.1 A and AA rules axe-core finds broken on the page as it is now, in the light and the
 * dark scheme: each as `scheme rule: selectors`, so a failure names what to fix. axe is evaluated
 * through the DevTools protocol, which the page's CSP (scripts from the service only) does not govern.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  const found: string[] = [];
  for (const scheme of ["light", "dark"] as const) {
    await emulateScheme(page, scheme);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: any[] }> } }).axe;
      const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
      return result.violations.map((v) => `${v.id}: ${v.nodes.map((n: { target: string[] }) => n.target.join(" ")).join(", ")}`);
    });
    found.push(...violations.map((violation) => `${scheme} ${violation}`));
  }
  await emulateScheme(page, "light");
  return found;
}

/**
 * One capture on the screen at `url` in `page`: the intro (the consent ticked when asked), the
 * gates, a reading of `seconds`, and the outcome as the screen shows it.
 */
export async function captureThrough(page: Page, url: string, seconds: number) {
  // A new document: session URLs differ in their fragment only, and a fragment change loads nothing.
  await page.goto("about:blank");
  await page.goto(screenUrl(url, seconds));
  await waitForView(page, "intro");
  if (await page.isVisible("#consent")) await page.check("#consent");
  await page.click("#continue");
  await waitForView(page, "capture");
  await startReading(page);
  await waitForView(page, "outcome", (seconds + 40) * 1000);
  return outcomeOf(page);
}
