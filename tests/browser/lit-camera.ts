/**
 * The browser tests' camera for the light challenge (docs/presence-descriptor.md 11): Chromium's
 * fake camera (the reading's face, its pulse and its mouth, in step with the fake microphone) with
 * the face relit frame by frame, at each frame's capture time, the way a face in front of the
 * screen reflects it: by the colour the page shows over the whole screen (`body[data-light]`, its
 * `--light`), `lagS` after the page changed it (the display's latency), at the media's `depth`.
 * The preflight's flash and the light sequence alike, on the hosted screen and the device check page.
 *
 * A replay instead (`reflect`: a capture made for another nonce, replayed in time with the screen):
 * while the screen shows its sequence, the face reflects the sequence of `reflect`, from when the
 * screen started its own. The light check must refuse it.
 *
 * The relighting is applied live rather than baked into the file because it must start with the
 * capture within the engine's 0 to 150 ms: Chromium plays a fake camera's file from when the camera
 * opens and falls behind under load, so a baked sequence cannot be aligned with a capture's start
 * (docs/decisions.md, D-234).
 */
import type { BrowserContext, Page } from "playwright-core";
import { PREFLIGHT } from "../../client/descriptor/light";
import type { MediaManifest } from "../../scripts/media/generate";
import { LIGHT_CHIP_SECONDS, LIGHT_PALETTE, lightSequence } from "../../shared/engine/light";

/** What the page's half of the camera needs (serialised into the page). */
interface CameraConfig {
  face: MediaManifest["light"]["face"];
  depth: number;
  lagS: number;
  /** The linear light of every colour the screen shows under the light challenge, by its hex. */
  linear: Record<string, number[]>;
  /** A replay: another nonce's sequence (linear RGB per chip) and the chip's length, seconds. */
  replay: { sequence: number[][]; chipSeconds: number } | null;
}

/** Seconds of a replayed sequence (longer than any capture). */
const SEQUENCE_SECONDS = 60;

/**
 * Gives `page` the lit camera (before it opens the screen): the face reflects what the screen
 * shows, or `reflect`'s sequence while the screen shows its own. Returns the capture nonce the
 * hosted screen's boot answer gave it (none on the device check page, whose nonce is its own).
 * Given a browser context instead, every page of it gets the camera (a screen opened in a window
 * of its own, as the person's page opens it).
 */
export async function litCamera(page: Page | BrowserContext, light: MediaManifest["light"], options: { reflect?: string } = {}) {
  const config: CameraConfig = {
    ...light,
    linear: Object.fromEntries([
      ...LIGHT_PALETTE.map((colour) => [colour.hex, [...colour.linear]]),
      ...PREFLIGHT.steps.map((step) => [step.hex, [step.linear, step.linear, step.linear]]),
    ]),
    replay: options.reflect
      ? {
          sequence: lightSequence(options.reflect, SEQUENCE_SECONDS).map((chip) => [...LIGHT_PALETTE[chip]!.linear]),
          chipSeconds: LIGHT_CHIP_SECONDS,
        }
      : null,
  };
  // Under tsx (the benchmarks) esbuild keeps function names by wrapping them in `__name(...)`, a
  // helper of the Node module that the serialised function does not carry into the page.
  await page.addInitScript("globalThis.__name ??= (target) => target;");
  await page.addInitScript(installCamera, config);
  let sessionNonce: string | null = null;
  await page.route("**/hosted-capture/boot", async (route) => {
    const response = await route.fetch();
    const booted = (await response.json().catch(() => ({}))) as { capture_nonce?: string };
    sessionNonce = booted.capture_nonce ?? null;
    await route.fulfill({ response });
  });
  return { sessionNonce: () => sessionNonce };
}

/**
 * The page's half, run before the page's own scripts: getUserMedia answers the fake camera's
 * frames relit (MediaStreamTrackProcessor in, MediaStreamTrackGenerator out, every frame keeping
 * its capture timestamp) and the fake microphone as it is. What the screen shows is read from
 * `body[data-light]` and its `--light`, timed when the page changes them.
 */
function installCamera(config: CameraConfig): void {
  /** Each change of what the screen shows: when, the phase and colour, and when that phase began. */
  const shown: { t: number; phase: string | null; hex: string; phaseStart: number }[] = [];
  /**
   * Every frame: its timestamp (µs), its capture time and when it was relit (s), and the colour the
   * screen showed `lagS` before it (null while the screen shows its own; a replay lights by another sequence).
   */
  const relitFrames: { timestampUs: number; t: number; at: number; hex: string | null }[] = [];
  // Saved with each capture by the browser benchmark's --save (scripts/bench/browser.ts, browser-trace.ts): what lit the face, and when.
  (globalThis as { litCameraTrace?: unknown }).litCameraTrace = { shown, relitFrames };
  let watched: HTMLElement | null = null;
  const watch = () => {
    const body = document.body;
    if (!body || body === watched) return;
    watched = body;
    new MutationObserver(() => {
      const t = performance.now() / 1000;
      const phase = document.body.dataset.light ?? null;
      const hex = document.body.style.getPropertyValue("--light").trim();
      const last = shown.at(-1);
      if (last && last.phase === phase && last.hex === hex) return;
      shown.push({ t, phase, hex, phaseStart: last && last.phase === phase ? last.phaseStart : t });
    }).observe(body, { attributes: true, attributeFilter: ["data-light", "style"] });
  };
  if (document.body) watch();
  else document.addEventListener("DOMContentLoaded", watch);

  /** The light on the face (linear RGB) at capture time `t`, or null while the screen shows its own colours. */
  const lightAt = (t: number): number[] | null => {
    const current = shown.filter((s) => s.t <= t).at(-1);
    if (!current?.phase) return null;
    const { replay } = config;
    if (replay && current.phase === "sequence") {
      return replay.sequence[Math.min(replay.sequence.length - 1, Math.floor((t - current.phaseStart) / replay.chipSeconds))]!;
    }
    return config.linear[current.hex] ?? null;
  };

  type Processor = new (init: { track: MediaStreamTrack; maxBufferSize?: number }) => { readable: ReadableStream<VideoFrame> };
  type Generator = new (init: { kind: "video" }) => MediaStreamTrack & { writable: WritableStream<VideoFrame> };
  const { MediaStreamTrackProcessor: TrackProcessor, MediaStreamTrackGenerator: TrackGenerator } = window as unknown as {
    MediaStreamTrackProcessor: Processor;
    MediaStreamTrackGenerator: Generator;
  };
  const devices = navigator.mediaDevices;
  const original = devices.getUserMedia.bind(devices);
  devices.getUserMedia = async (constraints) => {
    // A window that window.open made keeps its first about:blank document's globals, this script's
    // among them, for the document it then loads (HTML's reuse of the initial window): the body
    // watched from the start may be that blank one's, so watch the body of the page asking now.
    watch();
    const stream = await original(constraints);
    const track = stream.getVideoTracks()[0];
    if (!track) return stream;
    // Frames queue while the page is busy rather than being dropped (the page's own reader keeps 10 as well).
    const reader = new TrackProcessor({ track, maxBufferSize: 10 }).readable.getReader();
    const generator = new TrackGenerator({ kind: "video" });
    const writer = generator.writable.getWriter();
    const stopGenerator = generator.stop.bind(generator);
    generator.stop = () => {
      track.stop();
      stopGenerator();
    };
    let canvas: OffscreenCanvas | null = null;
    let context: OffscreenCanvasRenderingContext2D | null = null;
    /** The face's bounding box, and its ellipse's pixels as indices into that box. */
    let box = { x: 0, y: 0, width: 0, height: 0 };
    let face: Uint32Array = new Uint32Array(0);
    let offsetUs = Number.NEGATIVE_INFINITY;
    const relight = async () => {
      for (;;) {
        const { value: frame, done } = await reader.read();
        if (done) return;
        offsetUs = Math.max(offsetUs, frame.timestamp - performance.now() * 1000);
        const capturedAt = (frame.timestamp - offsetUs) / 1e6;
        const light = lightAt(capturedAt - config.lagS);
        const cast = shown.filter((s) => s.t <= capturedAt - config.lagS).at(-1);
        relitFrames.push({
          timestampUs: frame.timestamp,
          t: capturedAt,
          at: performance.now() / 1000,
          hex: light ? (cast?.hex ?? null) : null,
        });
        if (!light) {
          await writer.write(frame);
          continue;
        }
        const width = frame.displayWidth;
        const height = frame.displayHeight;
        if (!canvas || canvas.width !== width || canvas.height !== height) {
          canvas = new OffscreenCanvas(width, height);
          context = canvas.getContext("2d", { willReadFrequently: true })!;
          const { cx, cy, rx, ry } = config.face;
          const x0 = Math.max(0, cx - rx);
          const y0 = Math.max(0, cy - ry);
          box = { x: x0, y: y0, width: Math.min(width - 1, cx + rx) - x0 + 1, height: Math.min(height - 1, cy + ry) - y0 + 1 };
          const pixels: number[] = [];
          for (let y = y0; y < y0 + box.height; y++) {
            for (let x = x0; x < x0 + box.width; x++) {
              if (((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1) pixels.push((y - y0) * box.width + (x - x0));
            }
          }
          face = Uint32Array.from(pixels);
        }
        context!.drawImage(frame, 0, 0);
        // Only the face's box is read back and written: the rest of the frame stays as drawn.
        const image = context!.getImageData(box.x, box.y, box.width, box.height);
        // Relative to full light, so no pixel is pushed past 255 (clipping would bend the reflection); the room is not lit.
        const gains = light.map((c) => (1 + config.depth * c) / (1 + config.depth));
        for (const p of face) {
          for (let c = 0; c < 3; c++) image.data[4 * p + c] = Math.min(255, image.data[4 * p + c]! * gains[c]!);
        }
        context!.putImageData(image, box.x, box.y);
        const relit = new VideoFrame(canvas, { timestamp: frame.timestamp });
        frame.close();
        await writer.write(relit);
      }
    };
    relight().catch(() => {
      // The page stopped the camera: nothing more to relight.
    });
    return new MediaStream([generator, ...stream.getAudioTracks()]);
  };
}
