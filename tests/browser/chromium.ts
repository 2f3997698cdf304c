/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser), with the fake camera
 * and microphone playing test media, and a guard that fails the test on any request to a host
 * other than the service. One browser per test file: the fake devices are chosen at launch.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

/** A CPU cgroup the browser runs in: its processes file, and the one the test process returns to. */
interface CpuGroup {
  procs: string;
  home: string;
}

/** The browser's CPU share against the rest of the machine: eight times a default process's. */
const BROWSER_SHARE = { shares: "8192", weight: "800" };

/**
 * The browser's CPU cgroup, made if missing: under cgroup v1's `cpu` hierarchy (`cpu.shares`), or
 * v2's where the cpu controller is delegated (`cpu.weight`). Null where cgroups cannot be made
 * (not root, or neither is mounted).
 */
function browserCpuGroup(): CpuGroup | null {
  if (!existsSync("/proc/self/cgroup")) return null;
  const own = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  const layouts = [
    {
      root: "/sys/fs/cgroup/cpu",
      line: own.find((l) => l.split(":")[1]?.split(",").includes("cpu")),
      file: "cpu.shares",
      value: BROWSER_SHARE.shares,
    },
    { root: "/sys/fs/cgroup", line: own.find((l) => l.startsWith("0::")), file: "cpu.weight", value: BROWSER_SHARE.weight },
  ];
  for (const { root, line, file, value } of layouts) {
    const dir = join(root, "hauth-browser");
    try {
      if (!line || !existsSync(join(root, "cgroup.procs"))) continue;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, file), value);
      return { procs: join(dir, "cgroup.procs"), home: join(root, line.split(":").slice(2).join(":"), "cgroup.procs") };
    } catch {
      // This layout is not mounted, or not ours to change: try the next.
    }
  }
  return null;
}

/**
 * Launches Chromium in a CPU cgroup with a larger share than the test process, the service under
 * test and the database (where the user may make one: root in CI); every process the browser
 * starts later (renderers, the fake camera's capture service) is in it too. Chromium's fake camera
 * reads its file on a timer that never catches up: when other work on a busy machine delays it,
 * the video falls behind the fake microphone for good, which no real camera does, and the mouth
 * and the voice drift apart. A nice value would not do: Chromium sets its own threads' priorities,
 * and starts renderers and services at the default one.
 */
async function launchAhead(media?: { video: string; audio: string }): Promise<Browser> {
  const group = browserCpuGroup();
  const enter = (procs: string) => {
    try {
      writeFileSync(procs, String(process.pid));
      return true;
    } catch {
      return false;
    }
  };
  // The test process steps into the group for the launch only, so the browser starts inside it.
  const moved = group !== null && enter(group.procs);
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: chromiumFlags(media) });
  } finally {
    if (moved) enter(group.home);
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
  guarded: GuardedBrowser,
  baseUrl: string,
  seconds: number,
  options: { light: boolean; page?: Page },
): Promise<CheckPageCapture> {
  const page = options.page ?? guarded.page;
  const started = Date.now();
  await page.goto(`${baseUrl}/functions/v1/hosted-capture/check?seconds=${seconds}${options.light ? "" : "&light=0"}`);
  await page.waitForFunction(() => !(document.getElementById("start") as HTMLButtonElement).disabled, null, { timeout: 90_000 });
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
