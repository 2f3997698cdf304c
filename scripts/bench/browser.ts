/**
 * The real client in the browser against every attack it can stage: `npm run bench:browser [-- options]`.
 *
 * Starts the service with its hosted-capture function (workerd, a scratch database
 * `hauth_bench_browser` on BENCH_ADMIN_URL's server, created and dropped here) and runs the device
 * check page (`hosted-capture/check`, the client's own capture, descriptor v2 with the light
 * challenge) in Debian's Chromium through the browser tests' harness: their launch and fake camera
 * and microphone (tests/browser/launch.ts), their lit camera (tests/browser/lit-camera.ts) and
 * their capture (tests/browser/check-page.ts). Each session is one capture for its own nonce, judged
 * by the engine (evaluatePresence). The classes (ISO/IEC 30107-3: BPCER for bona fide, APCER per
 * attack):
 * - bona_fide: the reading, its skin carrying a pulse, lit by the screen;
 * - photo_lit: a still photograph (no pulse; mouth moving with the speech) lit by the screen as a print is;
 * - photo_unlit: the same photograph without the light challenge (version 1), to tell what the light adds;
 * - shifted: the reading with its sound 400 ms late;
 * - replay: the reading lit by another nonce's light sequence (a capture made for another session);
 * - puppet: the reading relit by the screen's own sequence, 300 ms late (a puppet or a rendered
 *   face relit from what the screen shows, after its processing delay).
 * On each face (scripts/media/faces.ts's portraits; Grace Hopper's is held out and reported apart)
 * and each camera variant (scripts/media/generate.ts's options). Rates carry Wilson 95% intervals.
 * The same-run baseline: for the photograph, how many would have passed the pulse check as the
 * engine judged it before D-395 (the light left in the pulse).
 *
 * Options: --sessions N (per class, face and variant; 1 by default, a quick run of 30 sessions), --seconds S (15),
 * --faces astronaut,hopper, --variants plain,mirror-dim,pulse1 (and jpeg60, fps24, fps25, fps30), --classes bona_fide,photo_lit,...,
 * --save DIR (every descriptor as JSON, with its class and verdict, to replay through the engine), --cpu-slowdown N (the
 * page run N times slower by Chromium's CPU throttling, as on a slower device: D-720).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { evaluatePresence, presenceConfig } from "../../shared/engine";
import { checkPulse } from "../../shared/engine/checks";
import { captureOnCheckPage } from "../../tests/browser/check-page";
import { launchAhead } from "../../tests/browser/launch";
import { litCamera } from "../../tests/browser/lit-camera";
import { PORTRAITS } from "../media/faces";
import { ensureMedia, type MediaManifest, type MediaOptions } from "../media/generate";
import { flag, hasFlag, loadNow, median, pct, reasons, runConditions, scratchServer, textFlag, wilson } from "./common";

if (hasFlag("help")) {
  process.stdout.write(`npm run bench:browser [-- options]

  --sessions 1          sessions per class, face and variant
  --seconds 15          length of each capture
  --faces astronaut,hopper
  --variants plain,mirror-dim,pulse1   (and jpeg60, fps24, fps25, fps30)
  --classes bona_fide,photo_lit,shifted,replay,puppet   (and photo_unlit: the photograph without the light)
  --save DIR            write every descriptor, its class and verdict to DIR (one JSON file each)
  --cpu-slowdown 1      run the page N times slower (Chromium's CPU throttling), as on a slower device

Environment: BENCH_ADMIN_URL (the server of the scratch database, default postgres://postgres@127.0.0.1:5432/postgres).
`);
  process.exit(0);
}

/**
 * The camera variants: a mirrored camera in a dim, warm, noisy room; a pulse half as strong; every
 * frame through JPEG at quality 60; 24, 25 and 30 frames a second instead of 15. The first three
 * run by default.
 */
const VARIANTS: Record<string, Omit<MediaOptions, "sitter">> = {
  plain: {},
  "mirror-dim": { mirror: true, dimWarmNoisy: true },
  pulse1: { pulseDepth: 0.01 },
  jpeg60: { jpegQuality: 60 },
  fps24: { fps: 24 },
  fps25: { fps: 25 },
  fps30: { fps: 30 },
};
const DEFAULT_VARIANTS = "plain,mirror-dim,pulse1";

/** The attack classes: which of the media's files the fake devices play, and how the lit camera lights the face. */
const CLASSES = {
  bona_fide: { media: "reading", attack: false },
  photo_lit: { media: "still", attack: true },
  photo_unlit: { media: "still", attack: true },
  shifted: { media: "shifted", attack: true },
  replay: { media: "reading", attack: true },
  puppet: { media: "reading", attack: true },
} as const;
type ClassName = keyof typeof CLASSES;

/** The puppet's processing delay: how late the relit face follows the screen, seconds (the engine allows 0.15). */
const PUPPET_DELAY_S = 0.3;

const SESSIONS = Math.max(1, Math.round(flag("sessions", 1)));
const SECONDS = flag("seconds", 15);
const CPU_SLOWDOWN = flag("cpu-slowdown", 1);
const FACES = (textFlag("faces") ?? PORTRAITS.map((p) => p.id).join(",")).split(",");
const VARIANT_NAMES = (textFlag("variants") ?? DEFAULT_VARIANTS).split(",");
const CLASS_NAMES = (
  textFlag("classes") ??
  Object.keys(CLASSES)
    .filter((k) => k !== "photo_unlit")
    .join(",")
).split(",") as ClassName[];
for (const v of VARIANT_NAMES) if (!(v in VARIANTS)) throw new Error(`unknown variant ${v}`);
for (const c of CLASS_NAMES) if (!(c in CLASSES)) throw new Error(`unknown class ${c}`);
for (const f of FACES) if (!PORTRAITS.some((p) => p.id === f)) throw new Error(`unknown face ${f}`);

const SAVE_DIR = textFlag("save");
const DB_NAME = "hauth_bench_browser";

/** One session's verdict. */
interface Session {
  face: string;
  heldOut: boolean;
  variant: string;
  klass: ClassName;
  accepted: boolean;
  reason: string;
  /** The pulse check as the engine judged it before D-395 (the screen's light left in). */
  pulseBefore: boolean | null;
  pulseDb: number | null;
  bpmError: number | null;
  lightFit: number | null;
  /** Frames a second the camera delivered to the page when the capture started (null: no capture). */
  cameraFps: number | null;
  /** Landmark results a second during the recording, and the engine's mouth-voice correlation (null: no capture). */
  landmarkHz: number | null;
  avCorrelation: number | null;
}

/**
 * A slower device: Chromium runs the page's main thread and its workers (the face worker) CPU_SLOWDOWN
 * times slower (DevTools' CPU throttling); the fake camera and microphone, in the browser's own
 * processes, keep their pace. Throttling the whole browser instead (a CPU quota) makes the fake
 * camera fall behind the microphone, which no real camera does (tests/browser/launch.ts).
 */
async function slowDown(page: Page): Promise<void> {
  const rate = { rate: CPU_SLOWDOWN };
  await (await page.context().newCDPSession(page)).send("Emulation.setCPUThrottlingRate", rate);
  const browserSession = await page.context().browser()!.newBrowserCDPSession();
  const throttled = new Set<string>();
  page.on("worker", async () => {
    // A worker is a target of its own: attached (not flattened, so the message goes through this session) and throttled too.
    const { targetInfos } = await browserSession.send("Target.getTargets");
    for (const target of targetInfos.filter((t) => t.type === "worker" && !throttled.has(t.targetId))) {
      throttled.add(target.targetId);
      const { sessionId } = await browserSession.send("Target.attachToTarget", { targetId: target.targetId, flatten: false });
      await browserSession.send("Target.sendMessageToTarget", {
        sessionId,
        message: JSON.stringify({ id: 1, method: "Emulation.setCPUThrottlingRate", params: rate }),
      });
    }
  });
}

/** One capture of `klass` on a new page of `context`, judged by the engine. */
async function session(
  context: BrowserContext,
  baseUrl: string,
  media: MediaManifest,
  klass: ClassName,
): Promise<Omit<Session, "face" | "heldOut" | "variant" | "klass">> {
  const page = await context.newPage();
  try {
    if (CPU_SLOWDOWN > 1) await slowDown(page);
    const light = klass === "puppet" ? { ...media.light, lagS: PUPPET_DELAY_S } : media.light;
    await litCamera(page, light, klass === "replay" ? { reflect: `n_replayed_${crypto.randomUUID().slice(0, 12)}` } : {});
    const withLight = klass !== "photo_unlit";
    const capture = await captureOnCheckPage({ page, bytes: () => 0 }, baseUrl, SECONDS, { light: withLight, page });
    const result = evaluatePresence(capture.descriptor);
    const { pulse, light: lit } = result.liveness.checks;
    const { signals } = capture.descriptor;
    const before = checkPulse(signals.pulse, signals.sample_rate_hz, presenceConfig);
    if (SAVE_DIR) {
      mkdirSync(SAVE_DIR, { recursive: true });
      const name = `${media.generator.split(":")[1] || "astronaut"}-${klass}-${Date.now()}.json`;
      // The lit camera's record of what lit the face and when, on the page's clock (timeOrigin, ms, places it).
      const trace = await page.evaluate(() => ({
        timeOriginMs: performance.timeOrigin,
        ...(globalThis as { litCameraTrace?: object }).litCameraTrace,
      }));
      writeFileSync(
        join(SAVE_DIR, name),
        JSON.stringify({ klass, bpm: media.bpm, reason: result.reason, descriptor: capture.descriptor, stats: capture.stats, trace }),
      );
    }
    return {
      accepted: result.accepted,
      reason: result.reason ?? "accepted",
      pulseBefore: before.passed,
      pulseDb: pulse.snr_db,
      bpmError: result.heart_rate_bpm === null ? null : Math.abs(result.heart_rate_bpm - media.bpm),
      lightFit: (lit as { correlation?: number } | undefined)?.correlation ?? null,
      cameraFps: capture.stats.camera_fps ?? null,
      landmarkHz: capture.stats.landmark_hz ?? null,
      avCorrelation: result.liveness.checks.av_sync.correlation,
    };
  } catch (error) {
    // The page refused to record (its preflight found no light on the face) or failed: no descriptor, no acceptance.
    const message = (error as Error).message;
    if (process.env.BENCH_DEBUG) process.stderr.write(`${message}\n`);
    return {
      accepted: false,
      reason: /does not reach/.test(message) ? "preflight_no_light" : `capture_failed: ${message.slice(0, 80)}`,
      pulseBefore: null,
      pulseDb: null,
      bpmError: null,
      lightFit: null,
      cameraFps: null,
      landmarkHz: null,
      avCorrelation: null,
    };
  } finally {
    await page.close();
  }
}

const interval = (errors: number, n: number) => {
  const [lo, hi] = wilson(errors, n);
  return `${pct(errors / n)} [${pct(lo)}, ${pct(hi)}]`;
};

function report(sessions: Session[]): void {
  for (const [group, heldOut] of [
    ["tuned-on faces", false],
    ["held-out faces", true],
  ] as const) {
    const rows = sessions.filter((s) => s.heldOut === heldOut);
    if (!rows.length) continue;
    const faces = [...new Set(rows.map((s) => s.face))].join(", ");
    console.log(`\n## ${group} (${faces}), ${SECONDS} s captures\n`);
    console.log("| class | sessions | errors | rate [Wilson 95%] | reasons |");
    console.log("|---|---|---|---|---|");
    for (const klass of CLASS_NAMES) {
      const set = rows.filter((s) => s.klass === klass);
      if (!set.length) continue;
      const attack = CLASSES[klass].attack;
      const errors = set.filter((s) => s.accepted === attack).length;
      console.log(
        `| ${klass} (${attack ? "APCER" : "BPCER"}) | ${set.length} | ${errors} | ${interval(errors, set.length)} | ${reasons(set)} |`,
      );
    }
    for (const variant of VARIANT_NAMES) {
      const set = rows.filter((s) => s.variant === variant);
      if (!set.length) continue;
      const errs = (k: ClassName) => {
        const c = set.filter((s) => s.klass === k);
        return c.length ? `${c.filter((s) => s.accepted === CLASSES[k].attack).length}/${c.length}` : "–";
      };
      console.log(`- ${variant}: ${CLASS_NAMES.map((k) => `${k} ${errs(k)}`).join(", ")}`);
    }
    const bona = rows.filter((s) => s.klass === "bona_fide" && s.bpmError !== null);
    if (bona.length) {
      console.log(
        `- bona fide: heart rate error median ${median(bona.map((s) => s.bpmError!)).toFixed(1)} bpm (max ${Math.max(...bona.map((s) => s.bpmError!)).toFixed(1)}); light fit median ${median(bona.filter((s) => s.lightFit !== null).map((s) => s.lightFit!)).toFixed(2)}; pulse median ${median(bona.map((s) => s.pulseDb!)).toFixed(1)} dB`,
      );
    }
    const fps = rows.filter((s) => s.cameraFps !== null).map((s) => s.cameraFps!);
    if (fps.length) {
      console.log(
        `- camera: ${median(fps).toFixed(1)} frames a second to the page (median; ${Math.min(...fps).toFixed(1)} to ${Math.max(...fps).toFixed(1)})`,
      );
    }
    const landmarks = rows.filter((s) => s.landmarkHz !== null).map((s) => s.landmarkHz!);
    if (landmarks.length) {
      console.log(
        `- landmarks: ${median(landmarks).toFixed(1)} a second during the recording (median; ${Math.min(...landmarks).toFixed(1)} to ${Math.max(...landmarks).toFixed(1)})`,
      );
    }
    for (const klass of CLASS_NAMES) {
      const av = rows.filter((s) => s.klass === klass && s.avCorrelation !== null).map((s) => s.avCorrelation!);
      if (!av.length) continue;
      const gate = presenceConfig.avSync.minCorrelation;
      console.log(
        `- ${klass}: mouth-voice correlation median ${median(av).toFixed(2)} (${Math.min(...av).toFixed(2)} to ${Math.max(...av).toFixed(2)}), ${av.filter((r) => r < gate).length} of ${av.length} under ${gate}`,
      );
    }
    const stills = rows.filter((s) => s.klass === "photo_lit" && s.pulseBefore !== null);
    if (stills.length) {
      const passedBefore = stills.filter((s) => s.pulseBefore).length;
      const passedNow = stills.filter((s) => s.reason !== "no_pulse").length;
      console.log(
        `- photo_lit, same-run baseline: pulse check passed ${passedBefore}/${stills.length} with the screen's light left in (before D-395), ${passedNow}/${stills.length} as judged now; pulse median ${median(stills.map((s) => s.pulseDb!)).toFixed(1)} dB`,
      );
    }
  }
}

async function main(): Promise<void> {
  const wall = performance.now();
  const loadAtStart = loadNow();
  const scratch = await scratchServer(DB_NAME, ["hosted-capture"], { env: { ...process.env, CRON_TIMER: "0" } });
  const { server } = scratch;
  const sessions: Session[] = [];
  try {
    for (const face of FACES) {
      const heldOut = PORTRAITS.find((p) => p.id === face)!.heldOut;
      for (const variant of VARIANT_NAMES) {
        const media = await ensureMedia({ sitter: face, ...VARIANTS[variant] });
        // One browser per file the fake devices play (they are fixed at launch), one context for its sessions.
        for (const kind of ["reading", "still", "shifted"] as const) {
          const classes = CLASS_NAMES.filter((k) => CLASSES[k].media === kind);
          if (!classes.length) continue;
          const browser: Browser = await launchAhead(media[kind]);
          try {
            const context = await browser.newContext({ locale: "en-GB" });
            for (let i = 0; i < SESSIONS; i++) {
              for (const klass of classes) {
                const verdict = await session(context, server.url, media, klass);
                sessions.push({ face, heldOut, variant, klass, ...verdict });
                process.stderr.write(
                  `${face}/${variant} ${klass} ${i + 1}/${SESSIONS}: ${verdict.reason}${verdict.pulseDb === null ? "" : ` (pulse ${verdict.pulseDb} dB, ${verdict.cameraFps} fps, landmarks ${verdict.landmarkHz?.toFixed(1)} a second, mouth-voice ${verdict.avCorrelation})`} at ${((performance.now() - wall) / 60_000).toFixed(1)} min\n`,
                );
              }
            }
          } finally {
            await browser.close();
          }
        }
      }
    }
    report(sessions);
    console.log(`\n${sessions.length} sessions. ${runConditions(wall, loadAtStart)}`);
  } finally {
    await scratch.stop();
  }
}

await main();
