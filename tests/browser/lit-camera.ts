/**
 * The browser tests' camera for the light challenge (docs/presence-descriptor.md 11): Chromium's
 * fake camera (the reading's face, its pulse and its mouth, in step with the fake microphone) with
 * the face relit frame by frame, at each frame's capture time, the way a face in front of the
 * hosted screen reflects it: the preflight's white and black from when the screen starts its flash,
 * then the light sequence of one nonce from when the screen starts the capture's sequence, each
 * change `lagS` after the screen's (its display latency), at the media's `depth`.
 *
 * Which nonce: by default the one the screen's boot answer carries (the screen's own sequence: a
 * person in front of it), or another one given (a capture made for another nonce, replayed in time
 * with the screen: the light check must refuse it).
 *
 * The relighting is applied live rather than baked into the file because it must start with the
 * capture within the engine's 0 to 150 ms: Chromium plays a fake camera's file from when the camera
 * opens and falls behind under load, so a baked sequence cannot be aligned with a capture's start
 * (docs/decisions.md, "The browser tests' lit camera").
 */
import type { Page } from "playwright-core";
import { PREFLIGHT } from "../../client/descriptor/light";
import type { MediaManifest } from "../../scripts/media/generate";
import { LIGHT_CHIP_SECONDS, LIGHT_PALETTE, lightSequence } from "../../shared/engine/light";

/** What the page's half of the camera needs (serialised into the page). */
interface CameraConfig {
  face: MediaManifest["light"]["face"];
  depth: number;
  lagS: number;
  /** Linear light of the preflight's steps, and their length, seconds. */
  preflight: number[][];
  stepSeconds: number;
  chipSeconds: number;
}

/** Seconds of the sequence the camera knows (longer than any capture). */
const SEQUENCE_SECONDS = 60;

/**
 * Gives `page` the lit camera (before it opens the screen): the reflected sequence is that of the
 * boot answer's capture nonce, or of `reflect` when given. Returns the nonce the screen was given.
 */
export async function litCamera(page: Page, light: MediaManifest["light"], options: { reflect?: string } = {}) {
  const config: CameraConfig = {
    ...light,
    preflight: PREFLIGHT.steps.map((step) => [step.linear, step.linear, step.linear]),
    stepSeconds: PREFLIGHT.stepSeconds,
    chipSeconds: LIGHT_CHIP_SECONDS,
  };
  await page.addInitScript(installCamera, config);
  let sessionNonce: string | null = null;
  await page.route("**/hosted-capture/boot", async (route) => {
    const response = await route.fetch();
    const booted = (await response.json().catch(() => ({}))) as { capture_nonce?: string };
    if (booted.capture_nonce) {
      sessionNonce = booted.capture_nonce;
      const colours = lightSequence(options.reflect ?? booted.capture_nonce, SEQUENCE_SECONDS).map((chip) => [
        ...LIGHT_PALETTE[chip]!.linear,
      ]);
      await page.evaluate((sequence) => {
        (window as unknown as { litCamera: { sequence: number[][] } }).litCamera.sequence = sequence;
      }, colours);
    }
    await route.fulfill({ response });
  });
  return { sessionNonce: () => sessionNonce };
}

/**
 * The page's half, run before the page's own scripts: getUserMedia answers the fake camera's
 * frames relit (MediaStreamTrackProcessor in, MediaStreamTrackGenerator out, every frame keeping
 * its capture timestamp) and the fake microphone as it is. The phases come from the screen's
 * `body[data-light]`, timed when the screen changes it.
 */
function installCamera(config: CameraConfig): void {
  const state = { sequence: null as number[][] | null, phases: [] as { t: number; phase: string | null }[] };
  (window as unknown as { litCamera: typeof state }).litCamera = state;
  const watch = () => {
    new MutationObserver(() => {
      const phase = document.body.dataset.light ?? null;
      if (phase !== (state.phases.at(-1)?.phase ?? null)) state.phases.push({ t: performance.now() / 1000, phase });
    }).observe(document.body, { attributes: true, attributeFilter: ["data-light"] });
  };
  if (document.body) watch();
  else document.addEventListener("DOMContentLoaded", watch);

  /** The screen's light (linear RGB) at capture time `t`, or null while it shows its own colours. */
  const lightAt = (t: number): number[] | null => {
    const current = state.phases.filter((p) => p.t <= t).at(-1);
    const [colours, stepSeconds] =
      current?.phase === "preflight" ? [config.preflight, config.stepSeconds] : [state.sequence, config.chipSeconds];
    if (!current?.phase || !colours) return null;
    return colours[Math.min(colours.length - 1, Math.floor((t - current.t) / stepSeconds))]!;
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
        const light = lightAt((frame.timestamp - offsetUs) / 1e6 - config.lagS);
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
