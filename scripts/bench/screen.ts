/**
 * The hosted screen on a phone's network: `npm run bench:screen [-- --runs 3 --profiles slow-4g,fast-4g --no-frames]`.
 *
 * Starts the service as `npm start` does (workerd, the built assets, a scratch database
 * `hauth_bench_screen` on BENCH_ADMIN_URL's server, created and dropped here), and opens fresh
 * hosted sessions in Debian's Chromium (playwright-core, the browser tests' launch and fake camera
 * playing the bona fide reading) with the network throttled through the DevTools protocol
 * (`Network.emulateNetworkConditions`, on the page and on the face worker, whose downloads are
 * most of the bytes). For each profile, cold cache (a new browser context) and warm cache (a second
 * session in the same context, as a person coming back), it reports:
 * - bytes transferred (as encoded on the wire: compressed where the service compressed them),
 *   in all and before "Start reading" was enabled;
 * - the first paint; the intro readable (the intro view shown, its words in place); the face
 *   models ready (the page's `face-models-ready` mark); "Start reading" enabled (models, camera and
 *   the quality gates: the benchmark presses Continue as soon as the intro shows, so this is the
 *   earliest a person could start);
 * - unthrottled, the per-frame cost while recording, from the device check page's own statistics
 *   (a 10-second capture without the light challenge).
 * Medians of `--runs` runs per cell; the machine is shared, so read the figures with the load
 * average printed at the end.
 */
import { randomUUID } from "node:crypto";
import { get as httpGet } from "node:http";
import { performance } from "node:perf_hooks";
import type { BrowserContext, CDPSession, Page } from "playwright-core";
import { connect } from "../../shared/kernel/db/client";
import { createMerchant } from "../../shared/merchants/accounts";
import { launchAhead } from "../../tests/browser/launch";
import { ensureMedia } from "../media/generate";
import { hasFlag, loadNow, median, runConditions, scratchServer, textFlag } from "./common";

if (hasFlag("help")) {
  process.stdout.write(`npm run bench:screen [-- options]

  --runs 3                    runs per profile and cache state (medians shown)
  --profiles slow-4g,fast-4g  network profiles (also: none)
  --no-frames                 skip the per-frame cost of a recording
  --agreement                 only the embedding agreement of the shipped (8-bit) recognition
                              weights with the package's (scripts/bench/face-agreement.ts)

Environment: BENCH_ADMIN_URL (the server of the scratch database, default postgres://postgres@127.0.0.1:5432/postgres).
`);
  process.exit(0);
}

if (hasFlag("agreement")) {
  const { faceAgreement } = await import("./face-agreement");
  await faceAgreement();
  process.exit(0);
}

/** Lighthouse's and Chrome DevTools' phone networks (kbit/s, round-trip ms). */
const NETWORKS = {
  "slow-4g": { downKbps: 1600, upKbps: 750, rttMs: 150 },
  "fast-4g": { downKbps: 9000, upKbps: 1500, rttMs: 60 },
  none: null,
} as const;
type NetworkName = keyof typeof NETWORKS;

const RUNS = Number(textFlag("runs") ?? 3);
const PROFILES = (textFlag("profiles") ?? "slow-4g,fast-4g").split(",") as NetworkName[];
const FRAMES = !hasFlag("no-frames");
const DB_NAME = "hauth_bench_screen";
const FUNCTIONS = ["hosted-session-create", "hosted-capture", "merchant-theme-get"];
/** The performance mark the page sets once the face worker's networks are ready (client/capture/capture.ts). */
const MODELS_MARK = "face-models-ready";
/** And once the recognition network is ready too (it loads after the others, while the person reads). */
const RECOGNITION_MARK = "face-recognition-ready";
const READY_TIMEOUT_MS = 240_000;

for (const name of PROFILES) if (!(name in NETWORKS)) throw new Error(`unknown profile ${name}`);

/** One opening of the screen. */
interface Run {
  firstPaintMs: number;
  introMs: number;
  modelsMs: number;
  startEnabledMs: number;
  /** NaN when the page never marked it before "Start reading" was enabled (it may come later). */
  recognitionMs: number;
  bytesBeforeStart: number;
  /** What each file cost on the wire before "Start reading" (path below assets/ → bytes). */
  files: Map<string, number>;
}

/**
 * Run in the page before its own scripts: notes (performance.now(), from navigation) when the
 * intro view shows and when "Start reading" is first enabled.
 */
function watchScreen(): void {
  const marks = {} as { intro?: number; start?: number };
  (window as unknown as { __screenBench: typeof marks }).__screenBench = marks;
  new MutationObserver(() => {
    if (marks.intro === undefined && document.body?.dataset.state === "intro") marks.intro = performance.now();
    const record = document.getElementById("record") as HTMLButtonElement | null;
    if (marks.start === undefined && record && !record.disabled) marks.start = performance.now();
  }).observe(document, { subtree: true, attributes: true, childList: true });
}

/** Throttles one target (the page, or a worker) and counts its bytes on the wire. */
async function throttle(cdp: CDPSession, name: NetworkName): Promise<void> {
  await cdp.send("Network.enable");
  const network = NETWORKS[name];
  if (network) {
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: network.rttMs,
      downloadThroughput: (network.downKbps * 1000) / 8,
      uploadThroughput: (network.upKbps * 1000) / 8,
    });
  }
}

/** The length of the body the service sends for `url` to a client accepting `encoding` (node:http does not decode it). */
function encodedLength(url: string, encoding: string): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers: { "accept-encoding": encoding } }, (response) => {
      let length = 0;
      response.on("data", (chunk: Buffer) => {
        length += chunk.length;
      });
      response.on("end", () => resolve(length));
      response.on("error", reject);
    }).on("error", reject);
  });
}

async function openSession(baseUrl: string, key: string): Promise<string> {
  const response = await fetch(`${baseUrl}/functions/v1/hosted-session-create`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-api-key": key, "idempotency-key": randomUUID() },
    body: JSON.stringify({ action: "login" }),
  });
  if (response.status !== 201) throw new Error(`hosted-session-create answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { url: string }).url;
}

async function openScreen(context: BrowserContext, url: string, network: NetworkName, cold: boolean): Promise<Run> {
  const page = await context.newPage();
  let started = false;
  // Bytes on the wire per URL, from two witnesses: the DevTools protocol on the page's target sees
  // the page's requests and the face worker's script, playwright also sees the worker's own fetches
  // (the models, the .wasm), but not the size of the worker's script. Each URL counts the larger.
  const seen = { protocol: new Map<string, number>(), playwright: new Map<string, number>() };
  const count = (witness: keyof typeof seen, url: string, n: number) => {
    if (!started) seen[witness].set(url, (seen[witness].get(url) ?? 0) + n);
  };
  const pageCdp = await context.newCDPSession(page);
  const urls = new Map<string, string>();
  pageCdp.on("Network.responseReceived", (event) => urls.set(event.requestId, event.response.url));
  pageCdp.on("Network.loadingFinished", (event) => count("protocol", urls.get(event.requestId) ?? "?", event.encodedDataLength));
  await throttle(pageCdp, network);
  // Neither sees the body of the worker's script, fetched for the worker by the browser itself: on
  // a cold cache, a response whose body is larger than what was seen of it is fetched again with the
  // browser's own Accept-Encoding, and counted as the service encodes it.
  const fetched: Promise<void>[] = [];
  page.on("requestfinished", (request) => {
    fetched.push(
      (async () => {
        const sizes = await request.sizes();
        let wire = sizes.responseBodySize + sizes.responseHeadersSize;
        const body = cold ? await (await request.response())?.body().catch(() => null) : null;
        if (body && body.length > wire + 1000 && request.method() === "GET") {
          wire = sizes.responseHeadersSize + (await encodedLength(request.url(), (await request.allHeaders())["accept-encoding"] ?? ""));
        }
        count("playwright", request.url(), wire);
      })().catch(() => {}),
    );
  });
  await page.addInitScript(watchScreen);
  try {
    await page.goto(url);
    await page.waitForFunction(() => (window as any).__screenBench?.intro !== undefined, null, { timeout: READY_TIMEOUT_MS });
    await page.click("#continue");
    await page.waitForFunction(() => (window as any).__screenBench?.start !== undefined, null, {
      timeout: READY_TIMEOUT_MS,
      polling: 100,
    });
    await Promise.all(fetched);
    started = true;
    const marks = await page.evaluate((modelsMark) => {
      const own = (window as any).__screenBench as { intro: number; start: number };
      const paint = performance.getEntriesByType("paint" as never).find((entry) => entry.name === "first-paint");
      const models = performance.getEntriesByName(modelsMark)[0];
      return { intro: own.intro, start: own.start, paint: paint?.startTime ?? Number.NaN, models: models?.startTime ?? Number.NaN };
    }, MODELS_MARK);
    const recognition = await page
      .waitForFunction((mark) => performance.getEntriesByName(mark)[0]?.startTime, RECOGNITION_MARK, { timeout: READY_TIMEOUT_MS })
      .then((handle) => handle.jsonValue() as Promise<number>)
      .catch(() => Number.NaN);
    const files = new Map<string, number>();
    for (const url of new Set([...seen.protocol.keys(), ...seen.playwright.keys()])) {
      const name = url.includes("/assets/") ? url.slice(url.indexOf("/assets/") + 8) : new URL(url).pathname.split("/").pop()!;
      files.set(name, Math.max(seen.protocol.get(url) ?? 0, seen.playwright.get(url) ?? 0));
    }
    const bytes = [...files.values()].reduce((a, b) => a + b, 0);
    return {
      firstPaintMs: marks.paint,
      introMs: marks.intro,
      modelsMs: marks.models,
      startEnabledMs: marks.start,
      recognitionMs: recognition,
      bytesBeforeStart: bytes,
      files,
    };
  } finally {
    await page.close();
  }
}

/** The device check page, unthrottled: a 10-second capture without the light challenge, and what each frame cost. */
async function frameCost(context: BrowserContext, baseUrl: string) {
  const page: Page = await context.newPage();
  await page.goto(`${baseUrl}/functions/v1/hosted-capture/check?seconds=10&light=0`);
  await page.waitForFunction(() => (document.getElementById("start") as HTMLButtonElement | null)?.disabled === false, null, {
    timeout: READY_TIMEOUT_MS,
  });
  await page.click("#start");
  await page.waitForFunction(() => !document.getElementById("descriptor")!.hidden, null, { timeout: 60_000 });
  const stats = JSON.parse((await page.textContent("#stats"))!) as Record<string, any>;
  await page.close();
  return stats;
}

const ms = (x: number) => (Number.isFinite(x) ? `${(x / 1000).toFixed(2)} s` : "–");
const kb = (x: number) => `${(x / 1000).toFixed(0)} kB`;

async function main(): Promise<void> {
  const wall = performance.now();
  const loadAtStart = loadNow();
  const scratch = await scratchServer(DB_NAME, FUNCTIONS, { env: { ...process.env, CRON_TIMER: "0" } });
  const { server } = scratch;
  const sql = connect(scratch.databaseUrl);
  const media = await ensureMedia();
  const browser = await launchAhead(media.reading);
  try {
    const merchant = await createMerchant(sql, "Screen benchmark");
    const rows: string[] = [];
    const fileRows = new Map<string, number[]>();
    for (const network of PROFILES) {
      const cold: Run[] = [];
      const warm: Run[] = [];
      for (let run = 0; run < RUNS; run++) {
        const context = await browser.newContext({ locale: "en-GB", viewport: { width: 390, height: 780 } });
        try {
          cold.push(await openScreen(context, await openSession(server.url, merchant.keys.sk_test), network, true));
          warm.push(await openScreen(context, await openSession(server.url, merchant.keys.sk_test), network, false));
        } finally {
          await context.close();
        }
        process.stderr.write(
          `${network} run ${run + 1}/${RUNS}: cold ${ms(cold.at(-1)!.startEnabledMs)}, warm ${ms(warm.at(-1)!.startEnabledMs)}\n`,
        );
      }
      for (const [cache, runs] of [
        ["cold", cold],
        ["warm", warm],
      ] as const) {
        const m = (pick: (r: Run) => number) => median(runs.map(pick));
        rows.push(
          `| ${network} | ${cache} | ${kb(m((r) => r.bytesBeforeStart))} | ${ms(m((r) => r.firstPaintMs))} | ${ms(m((r) => r.introMs))} | ${ms(m((r) => r.modelsMs))} | ${ms(m((r) => r.startEnabledMs))} | ${ms(m((r) => r.recognitionMs))} |`,
        );
      }
      if (network === PROFILES[0]) {
        for (const run of cold) for (const [file, n] of run.files) fileRows.set(file, [...(fileRows.get(file) ?? []), n]);
      }
    }
    console.log(`\n## The hosted screen (${RUNS} runs per cell, medians)\n`);
    console.log(
      "| network | cache | bytes before Start reading | first paint | intro readable | models ready | Start reading enabled | recognition ready |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    for (const row of rows) console.log(row);
    console.log(`\n### What each file cost on the wire (${PROFILES[0]}, cold, median)\n`);
    console.log("| file | bytes |");
    console.log("|---|---|");
    for (const [file, sizes] of [...fileRows].sort((a, b) => median(b[1]) - median(a[1]))) console.log(`| ${file} | ${median(sizes)} |`);

    if (FRAMES) {
      const context = await browser.newContext({ locale: "en-GB" });
      const stats = await frameCost(context, server.url);
      await context.close();
      console.log("\n### Per frame while recording (unthrottled, 10 s, device check page)\n");
      console.log("| step | median | p95 | runs |");
      console.log("|---|---|---|---|");
      for (const key of ["frame_work_ms", "worker_ms", "detect_ms", "landmarks_ms", "describe_ms"]) {
        const step = stats[key] as { p50: number; p95: number; frames?: number; runs?: number };
        console.log(`| ${key} | ${step.p50.toFixed(2)} ms | ${step.p95.toFixed(2)} ms | ${step.frames ?? step.runs ?? ""} |`);
      }
      console.log(
        `\nCamera ${stats.camera_fps} fps, landmarks ${Number(stats.landmark_hz).toFixed(1)} Hz; model load in the worker ${stats.model_load_ms} ms (backend ${stats.backend})`,
      );
    }
    console.log(`\n${runConditions(wall, loadAtStart)}`);
  } finally {
    await browser.close();
    await sql.end();
    await scratch.stop();
  }
}

await main();
