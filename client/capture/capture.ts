/**
 * A presence capture in the browser: camera and microphone on one clock, the face worker for the
 * networks, the quality gates before recording, and the recording itself, which ends in a
 * descriptor built on the device (client/descriptor/): version 2 when the page lights the face
 * with the light challenge (a LightLayer), version 1 otherwise. Nothing but the descriptor leaves it.
 *
 * Per camera frame the main thread only averages the skin pixels under the latest skin region
 * (a few hundred microseconds to a millisecond; under the light, the two background bands beside
 * the head too); whenever the worker is free it gets the newest frame for landmarks (before the
 * recording also, about once a second, the detector; during it, on a few frames, the face is cut
 * out to be described after it: client/capture/turns.ts).
 *
 * Frames come from the camera track itself where the browser can hand them over one by one
 * (MediaStreamTrackProcessor: every frame the camera delivered, queued while the page is busy,
 * each with its own capture timestamp), else from the `<video>` element's frame callbacks (which
 * skip the frames a busy page missed). Either way a sample carries the capture time of the very
 * frame it was read from, so a frame the page never received leaves a gap that `valid` reports,
 * and a late callback is never passed off as an earlier frame.
 */

import type { PresenceDescriptor } from "../../shared/engine/descriptor";
import { LIGHT_CHIP_SECONDS, LIGHT_PALETTE, lightSequence } from "../../shared/engine/light";
import {
  backgroundBands,
  buildDescriptor,
  type CaptureGrid,
  type FaceObservation,
  interOcularDistance,
  type LitSample,
  type MouthSample,
  meanBackgroundRgb,
  meanSkinRgb,
  type PixelBox,
  type Point,
  PREFLIGHT,
  PREFLIGHT_SECONDS,
  preflightDepth,
  type SkinMask,
  type SkinSample,
  VoiceMeter,
} from "../descriptor";
import { Microphone, type MicrophoneBlock } from "./microphone";
import type { FrameResult, WorkerMessage } from "./protocol";
import { workerTurn } from "./turns";

/** Why the capture cannot start yet (the page words each one). */
export type GateProblem = "no_face" | "hold_still" | "more_light" | "camera_slow";

export interface GateState {
  ready: boolean;
  problems: GateProblem[];
  /** Frames a second the camera delivers (last 2 s). */
  fps: number;
  /** Mean skin luma, 0 to 255. */
  light: number;
}

/** What a capture measured about its own cost, for docs/benchmarks.md. */
export interface CaptureStats {
  /** Main-thread work per camera frame (skin average), ms. */
  frameWorkMs: number[];
  /** Times of landmark results during the recording, seconds. */
  landmarkTimes: number[];
  /** Worker time per frame it looked at, ms. */
  workerMs: number[];
  detectMs: number[];
  landmarksMs: number[];
  describeMs: number[];
  cameraFps: number;
  sampleRateHz: number;
  /** Per microphone block: how far its last sample's capture-clock time lies after the block's arrival, ms (never above 0 when timed right). */
  audioLeadMs: number[];
  backend: string;
  modelLoadMs: number;
}

/** The performance mark a page sets when the face worker's networks are ready (scripts/bench/screen.ts reads it). */
export const FACE_MODELS_READY_MARK = "face-models-ready";
/** The mark set when the recognition network is ready too (it loads after the others: D-407). */
export const FACE_RECOGNITION_READY_MARK = "face-recognition-ready";

/**
 * The face worker with its networks loaded and warmed up. Loading takes seconds (about 7 MB of
 * weights, WebAssembly compilation): pages start it first, while the person reads why the camera
 * and microphone are needed, and open the devices only when it is done, so the capture starts as
 * soon as the camera does.
 */
export class FaceModels {
  private constructor(
    readonly worker: Worker,
    readonly backend: string,
    readonly loadMs: number,
  ) {}

  static load(assets: string): Promise<FaceModels> {
    const worker = new Worker(new URL("face-worker.js", assets), { type: "module" });
    return new Promise<FaceModels>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
        if (event.data.type === "ready") {
          // Read by the screen benchmark (scripts/bench/screen.ts): when the networks were ready.
          performance.mark(FACE_MODELS_READY_MARK);
          resolve(new FaceModels(worker, event.data.backend, event.data.loadMs));
        } else if (event.data.type === "recognition") performance.mark(FACE_RECOGNITION_READY_MARK);
        else if (event.data.type === "error") reject(new Error(event.data.message));
      };
      worker.onerror = (event) => reject(new Error(event.message || "the face worker failed to start"));
      worker.postMessage({ type: "init", base: assets });
    });
  }
}

/** Which of the light challenge's phases the screen shows: the preflight's flash, or the capture's sequence. */
export type LightPhase = "preflight" | "sequence";

/**
 * The page's surface for the light challenge (docs/presence-descriptor.md 11.2): the capture
 * decides which colour shows when, on its own clock, and the page paints it over the screen.
 */
export interface LightLayer {
  /** Fills the screen with `hex` (sRGB) now; `phase` says which part of the challenge it belongs to. */
  show(hex: string, phase: LightPhase): void;
  /** Gives the screen back its own colours. */
  clear(): void;
}

/** Where the page's assets are and how long to record. */
export interface CaptureOptions {
  /** Absolute URL of the folder holding `face-worker.js`, `audio-worklet.js`, `models/` and `wasm/`. */
  assets: string;
  /** The `<video>` that shows the camera (muted, inline). */
  video: HTMLVideoElement;
  /**
   * Whether to open the microphone (default true). A face-only capture (D-428: a step-up's) asks
   * for the camera alone: the descriptor's voice is then silent throughout, which is what the
   * engine's face modality expects, and no sound is ever taken from the device.
   */
  microphone?: boolean;
}

/** Frames the track processor may hold while the page is busy (about 0.7 s at 15 fps), oldest dropped beyond. */
const FRAME_QUEUE = 10;

/** Chromium's MediaStreamTrackProcessor (not yet in TypeScript's DOM library). */
interface TrackProcessor {
  readable: ReadableStream<VideoFrame>;
}
type TrackProcessorConstructor = new (init: { track: MediaStreamTrack; maxBufferSize?: number }) => TrackProcessor;

const MIN_FPS = 14;
const MIN_LIGHT = 60;
/** The eyes may move this fraction of their distance over the last second and still count as still. */
const STILL_FRACTION = 0.08;

/** The p-th fraction (0..1) of a sample, the nearest rank at or below; 0 for none. */
export function percentileOf(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

export class PresenceCapture {
  private readonly canvas = document.createElement("canvas");
  private readonly context: CanvasRenderingContext2D;
  private skin: SkinMask | null = null;
  private workerBusy = false;
  /**
   * The newest frame that arrived while the worker was busy: it goes to the worker the moment the
   * worker answers, so on a slow device the worker never idles until the next frame (D-720).
   */
  private nextFrame: { frame: VideoFrame; t: number } | null = null;
  private lastDetectT = -Infinity;
  private lastFace: { t: number; score: number; landmarks: Point[] } | null = null;
  private eyeTrack: { t: number; x: number; y: number; iod: number }[] = [];
  private frameTimes: number[] = [];
  private light = 0;
  /** While the screen lights the face: every frame's skin and background colours. */
  private lit: LitSample[] | null = null;
  /** Stops the light shown now, if any (close() stops it too: a cancelled capture gives the screen back at once). */
  private stopLight: (() => void) | null = null;
  private recording: null | {
    t0: number;
    end: number;
    seconds: number;
    /** Faces cut out for the worker to describe after the recording, and the time of the last. */
    cuts: number;
    lastCutT: number;
    skin: SkinSample[];
    mouth: MouthSample[];
    faces: FaceObservation[];
    /** The microphone's blocks, timed when the recording ends (blockTimes); null without a microphone (a face-only capture). */
    blocks: MicrophoneBlock[] | null;
  } = null;
  private stopped = false;
  /**
   * The recording whose faces the worker describes after it (D-720; and once the recognition
   * network is ready, D-407): where their descriptors go, and who waits for the worker to say it
   * has described them all.
   */
  private deferred: {
    window: { t0: number; end: number };
    faces: FaceObservation[];
    described?: () => void;
  } | null = null;
  readonly stats: CaptureStats;

  private constructor(
    private readonly stream: MediaStream,
    private readonly worker: Worker,
    private readonly microphone: Microphone | null,
    private readonly video: HTMLVideoElement,
    ready: { backend: string; loadMs: number },
  ) {
    this.context = this.canvas.getContext("2d", { willReadFrequently: true })!;
    this.stats = {
      frameWorkMs: [],
      landmarkTimes: [],
      workerMs: [],
      detectMs: [],
      landmarksMs: [],
      describeMs: [],
      cameraFps: 0,
      sampleRateHz: 0,
      audioLeadMs: [],
      backend: ready.backend,
      modelLoadMs: ready.loadMs,
    };
    worker.onmessage = (event: MessageEvent<WorkerMessage>) => this.onWorker(event.data);
    microphone?.onBlock((block) => this.recording?.blocks?.push(block));
    const Processor = (globalThis as { MediaStreamTrackProcessor?: TrackProcessorConstructor }).MediaStreamTrackProcessor;
    const track = stream.getVideoTracks()[0];
    if (Processor && track) {
      this.readTrack(new Processor({ track, maxBufferSize: FRAME_QUEUE })).catch((error: unknown) => console.error(error));
    } else video.requestVideoFrameCallback((now, metadata) => this.onVideoCallback(now, metadata));
  }

  /**
   * Asks for the camera and the microphone (automatic gain control off, as the descriptor's voice
   * level needs; the camera alone when `options.microphone` is false) and starts following the face with `models` (loaded first: see FaceModels).
   */
  static async open(options: CaptureOptions, models: FaceModels): Promise<PresenceCapture> {
    const stream = await navigator.mediaDevices.getUserMedia({
      video: { width: { ideal: 640 }, height: { ideal: 480 }, frameRate: { ideal: 30 }, facingMode: "user" },
      audio: options.microphone === false ? false : { autoGainControl: false, channelCount: 1 },
    });
    try {
      const microphone =
        options.microphone === false ? null : await Microphone.open(stream, new URL("audio-worklet.js", options.assets).href);
      options.video.srcObject = stream;
      await options.video.play();
      return new PresenceCapture(stream, models.worker, microphone, options.video, models);
    } catch (error) {
      for (const track of stream.getTracks()) track.stop();
      throw error;
    }
  }

  /** The quality gates now: a face, held still, in enough light, from a fast enough camera. */
  gates(): GateState {
    const now = performance.now() / 1000;
    const problems: GateProblem[] = [];
    const fps = this.fps();
    if (!this.lastFace || now - this.lastFace.t > 1 || this.lastFace.score < 0.5) problems.push("no_face");
    else {
      const recent = this.eyeTrack.filter((e) => now - e.t <= 1);
      const moved = recent.length > 1 ? Math.max(...recent.map((e) => Math.hypot(e.x - recent[0]!.x, e.y - recent[0]!.y))) : Infinity;
      if (recent.length < 2 || moved > STILL_FRACTION * recent[0]!.iod) problems.push("hold_still");
      if (this.light < MIN_LIGHT) problems.push("more_light");
    }
    if (fps < MIN_FPS) problems.push("camera_slow");
    return { ready: problems.length === 0, problems, fps, light: Math.round(this.light) };
  }

  /** Frames a second over the last two seconds. */
  private fps(): number {
    const times = this.frameTimes;
    if (times.length < 2) return 0;
    return (times.length - 1) / Math.max(1e-3, times[times.length - 1]! - times[0]!);
  }

  /**
   * The light challenge's preflight (docs/presence-descriptor.md 11.2 step 1): the screen shows
   * PREFLIGHT's white and black on `layer`, and the answer is the depth of the face's reflection
   * (preflightDepth; null when no frame with a face was measured), once the last frames of the
   * black step have arrived; the layer is cleared then.
   */
  async preflight(layer: LightLayer): Promise<number | null> {
    const start = performance.now() / 1000;
    const lit: LitSample[] = [];
    this.lit = lit;
    this.showLight(
      layer,
      "preflight",
      start,
      PREFLIGHT.steps.map((step) => step.hex),
      PREFLIGHT.stepSeconds,
    );
    // The last frames of the black step reach the page a little after it ends.
    await until(start + PREFLIGHT_SECONDS + 0.25);
    this.stopLight?.();
    this.lit = null;
    return preflightDepth(lit, start);
  }

  /**
   * Records `seconds` on a grid of 30 samples a second (15 when the camera delivers fewer than 25
   * frames a second) and returns the descriptor; `onProgress` gets the seconds elapsed on the
   * capture clock. With `schedule` the page paced the reading by challengeSchedule(nonce)
   * (docs/presence-descriptor.md section 10), and the descriptor says so. With `light` the screen
   * shows lightSequence(nonce) on it from the capture's start, each chip at its time on the
   * capture clock, and the descriptor is version 2 (section 11); the layer is cleared at the end.
   */
  async record(
    seconds: number,
    nonce: string,
    onProgress?: (elapsedS: number) => void,
    options: { schedule?: "nonce-v1"; light?: LightLayer } = {},
  ): Promise<PresenceDescriptor> {
    const sampleRateHz = this.fps() >= 25 ? 30 : 15;
    const t0 = performance.now() / 1000;
    const grid = { t0, sampleRateHz, samples: Math.round(seconds * sampleRateHz) };
    const capturedAt = new Date(performance.timeOrigin + t0 * 1000).toISOString();
    this.stats.sampleRateHz = sampleRateHz;
    this.stats.cameraFps = Math.round(this.fps() * 10) / 10;
    const recording = {
      t0,
      end: t0 + seconds,
      seconds,
      cuts: 0,
      lastCutT: -Infinity,
      skin: [] as SkinSample[],
      mouth: [] as MouthSample[],
      faces: [] as FaceObservation[],
      blocks: this.microphone ? ([] as MicrophoneBlock[]) : null,
    };
    this.recording = recording;
    const deferred: NonNullable<typeof this.deferred> = { window: recording, faces: recording.faces };
    this.deferred = deferred;
    let lit: LitSample[] | null = null;
    if (options.light) {
      lit = this.lit = [];
      const colours = lightSequence(nonce, seconds + 1).map((chip) => LIGHT_PALETTE[chip]!.hex);
      this.showLight(options.light, "sequence", t0, colours, LIGHT_CHIP_SECONDS);
    }
    try {
      // A little past the end, so interpolation has a frame and the audio a block beyond the last sample.
      await until(recording.end + 0.25, (now) => onProgress?.(Math.min(seconds, now - t0)));
    } finally {
      this.stopLight?.();
      this.lit = null;
      this.recording = null;
    }
    // The faces cut during the recording are described now (the worker answers after every frame sent before).
    if (!this.stopped) {
      await new Promise<void>((resolve) => {
        deferred.described = resolve;
        this.worker.postMessage({ type: "describe" });
      });
    }
    this.deferred = null;
    const frames = lit?.filter((s) => this.inWindow(s.t, recording)).sort((a, b) => a.t - b.t);
    return buildDescriptor({
      nonce,
      capturedAt,
      grid,
      skin: frames ? frames.map((s) => ({ t: s.t, ...s.skin })) : recording.skin.sort((a, b) => a.t - b.t),
      mouth: recording.mouth,
      // Without a microphone the voice is silent: every grid sample 0, as where no audio reached it.
      voice:
        this.microphone && recording.blocks ? this.voice(grid, this.microphone, recording.blocks) : new Array<number>(grid.samples).fill(0),
      faces: recording.faces,
      schedule: options.schedule,
      background: frames?.map((s) => ({ t: s.t, ...s.background })),
    });
  }

  /** The `voice` series of a recording's microphone blocks, each timed knowing every block after it (blockTimes, D-770). */
  private voice(grid: CaptureGrid, microphone: Microphone, blocks: readonly MicrophoneBlock[]): number[] {
    const meter = new VoiceMeter(grid, microphone.sampleRate);
    const times = microphone.timesOf(blocks);
    blocks.forEach((block, i) => {
      const t = times[i]!;
      this.stats.audioLeadMs.push((t + block.samples.length / microphone.sampleRate) * 1000 - block.receivedMs);
      meter.push(block.samples, t);
    });
    return meter.envelope();
  }

  /**
   * Shows `colours` on `layer` one after another from `start` (capture clock), each for
   * `stepSeconds` (the last held), switched at each animation frame (no smoothing) until stopLight
   * clears it.
   */
  private showLight(layer: LightLayer, phase: LightPhase, start: number, colours: readonly string[], stepSeconds: number): void {
    let shown = "";
    let running = true;
    const paint = () => {
      if (!running) return;
      const step = Math.floor(Math.max(0, performance.now() / 1000 - start) / stepSeconds);
      const colour = colours[Math.min(colours.length - 1, step)]!;
      if (colour !== shown) layer.show((shown = colour), phase);
      requestAnimationFrame(paint);
    };
    this.stopLight = () => {
      running = false;
      this.stopLight = null;
      layer.clear();
    };
    paint();
  }

  /** Stops the light, the camera, the microphone and the worker. */
  async close(): Promise<void> {
    this.stopped = true;
    this.stopLight?.();
    this.nextFrame?.frame.close();
    this.nextFrame = null;
    // A recording waiting for its faces to be described gets none: the worker is ended.
    this.deferred?.described?.();
    this.worker.terminate();
    for (const track of this.stream.getTracks()) track.stop();
    await this.microphone?.close();
  }

  /** Whether a frame at `t` belongs to `recording` (half a second either side, for the interpolation at its ends). */
  private inWindow(t: number, recording: { t0: number; end: number } | null = this.recording): boolean {
    return recording !== null && t >= recording.t0 - 0.5 && t <= recording.end + 0.5;
  }

  /**
   * Every frame of the camera track, in order. A frame's `timestamp` (µs) is its capture time on a
   * clock of the browser's own; its offset from `performance.now()` is the largest of
   * `timestamp - now` seen so far, the frame read soonest after its capture bounding it best (a few
   * milliseconds once the first frames have passed, long before a recording starts).
   */
  private async readTrack(processor: TrackProcessor): Promise<void> {
    const reader = processor.readable.getReader();
    let offsetUs = -Infinity;
    while (!this.stopped) {
      const { value: frame, done } = await reader.read();
      if (done) return;
      if (this.stopped) {
        frame.close();
        break;
      }
      offsetUs = Math.max(offsetUs, frame.timestamp - performance.now() * 1000);
      this.onFrame(frame, (frame.timestamp - offsetUs) / 1e6);
    }
    await reader.cancel();
  }

  /** The `<video>` element's frame callback (browsers without the track processor): the frame shown now, at its capture time. */
  private onVideoCallback(now: number, metadata: VideoFrameCallbackMetadata): void {
    if (this.stopped) return;
    this.video.requestVideoFrameCallback((nextNow, nextMetadata) => this.onVideoCallback(nextNow, nextMetadata));
    const t = (metadata.captureTime ?? metadata.expectedDisplayTime ?? now) / 1000;
    let frame: VideoFrame;
    try {
      frame = new VideoFrame(this.video, { timestamp: Math.round(t * 1e6) });
    } catch {
      return; // no frame to read yet
    }
    this.onFrame(frame, t);
  }

  /** One camera frame at capture time `t` (seconds, performance.now()'s clock); closes it. */
  private onFrame(frame: VideoFrame, t: number): void {
    this.frameTimes.push(t);
    while (this.frameTimes.length > 2 && t - this.frameTimes[0]! > 2) this.frameTimes.shift();
    const skin = this.skin;
    const averaged = skin && skin.box.width > 0 && skin.box.height > 0 ? this.averageSkin(frame, skin, t) : Promise.resolve();
    // The worker gets its own reference to the frame (now, or kept for when it is free); this one closes once the skin is read.
    if (this.workerBusy) {
      this.nextFrame?.frame.close();
      this.nextFrame = { frame: frame.clone(), t };
    } else this.toWorker(frame.clone(), t);
    averaged.finally(() => frame.close());
  }

  /** Hands `frame` (captured at `t`; transferred, the worker closes it) to the worker, with what it runs on it besides the landmarks. */
  private toWorker(frame: VideoFrame, t: number): void {
    this.workerBusy = true;
    const recording = this.recording;
    const { detect, describe } = workerTurn({ t, tracking: this.lastFace !== null, lastDetectT: this.lastDetectT, recording });
    if (detect) this.lastDetectT = t;
    if (describe && recording) [recording.cuts, recording.lastCutT] = [recording.cuts + 1, t];
    this.worker.postMessage({ type: "frame", t, frame, detect, describe }, [frame]);
  }

  /**
   * The mean skin colour of one frame: the pixels under the skin region, averaged where the mask
   * and the skin chroma agree. Under the light the chroma gate is off (coloured light moves skin
   * out of its range) and the background beside the head is averaged too (meanBackgroundRgb): only
   * the skin's box and the background's bands are copied out of the frame. Its cost is the
   * every-frame work of the capture.
   */
  private async averageSkin(frame: VideoFrame, skin: SkinMask, t: number): Promise<void> {
    const started = performance.now();
    const lit = this.lit;
    const landmarks = this.lastFace?.landmarks;
    let mean: ReturnType<typeof meanSkinRgb>;
    if (lit && landmarks) {
      const bands = backgroundBands(landmarks, frame.displayWidth, frame.displayHeight);
      const [skinPixels, ...bandPixels] = await Promise.all([skin.box, ...bands].map((box) => this.pixels(frame, box)));
      mean = meanSkinRgb(skinPixels!, skin, { chromaGate: false });
      const background = meanBackgroundRgb(bands.map((box, i) => ({ box, rgba: bandPixels[i]! })));
      if (mean && background) lit.push({ t, skin: rgbOf(mean), background: rgbOf(background) });
    } else {
      mean = meanSkinRgb(await this.pixels(frame, skin.box), skin);
      if (mean && this.inWindow(t)) this.recording!.skin.push({ t, ...rgbOf(mean) });
    }
    if (mean) this.light = 0.299 * mean.r + 0.587 * mean.g + 0.114 * mean.b;
    this.stats.frameWorkMs.push(performance.now() - started);
  }

  /** The pixels of `box` in `frame` as RGBA (the browser converts from the camera's format). */
  private async pixels(frame: VideoFrame, box: PixelBox): Promise<Uint8Array> {
    const { x, y, width, height } = box;
    const bytes = new Uint8Array(width * height * 4);
    try {
      await frame.copyTo(bytes, { rect: { x, y, width, height }, format: "RGBA", colorSpace: "srgb" } as VideoFrameCopyToOptions);
    } catch {
      // Browsers that cannot convert while copying: draw this frame and read it back.
      if (this.canvas.width !== width || this.canvas.height !== height) Object.assign(this.canvas, { width, height });
      this.context.drawImage(frame, x, y, width, height, 0, 0, width, height);
      bytes.set(this.context.getImageData(0, 0, width, height).data);
    }
    return bytes;
  }

  private onWorker(message: WorkerMessage): void {
    const deferred = this.deferred;
    if (message.type === "error") {
      this.workerBusy = false;
      console.error(`face worker: ${message.message}`);
      // Whatever failed, a recording waiting for its faces does not wait for ever (without one it is refused).
      deferred?.described?.();
      return;
    }
    if (message.type === "recognition") performance.mark(FACE_RECOGNITION_READY_MARK);
    if (message.type === "descriptor" && deferred && this.inWindow(message.t, deferred.window)) {
      this.stats.describeMs.push(message.ms);
      deferred.faces.push({ score: message.score, descriptor: message.descriptor });
    }
    if (message.type === "described") deferred?.described?.();
    if (message.type !== "frame") return;
    this.workerBusy = false;
    this.take(message);
    const next = this.nextFrame;
    this.nextFrame = null;
    if (next && !this.stopped) this.toWorker(next.frame, next.t);
    else next?.frame.close();
  }

  /** Takes what the worker saw: the face and its skin region, and while recording the mouth and descriptors. */
  private take(result: FrameResult): void {
    const { t, face, timings } = result;
    this.stats.workerMs.push(timings.total);
    if (timings.detect) this.stats.detectMs.push(timings.detect);
    if (timings.landmarks) this.stats.landmarksMs.push(timings.landmarks);
    if (!face) {
      this.lastFace = null;
      this.skin = null;
      return;
    }
    this.lastFace = { t, score: face.score, landmarks: face.landmarks };
    const mask = face.skin.mask;
    this.skin = { box: face.skin.box, mask, pixels: mask.reduce((sum, x) => sum + x, 0) };
    const eyes = face.landmarks.slice(36, 48);
    this.eyeTrack.push({
      t,
      x: eyes.reduce((sum, p) => sum + p.x, 0) / eyes.length,
      y: eyes.reduce((sum, p) => sum + p.y, 0) / eyes.length,
      iod: interOcularDistance(face.landmarks),
    });
    while (this.eyeTrack.length > 0 && t - this.eyeTrack[0]!.t > 1.5) this.eyeTrack.shift();
    if (this.inWindow(t)) {
      this.stats.landmarkTimes.push(t);
      this.recording!.mouth.push({ t, opening: face.mouth });
    }
  }
}

/** A mean colour without its pixel count. */
function rgbOf(mean: { r: number; g: number; b: number }): { r: number; g: number; b: number } {
  return { r: mean.r, g: mean.g, b: mean.b };
}

/** Resolves once the capture clock reaches `end` (seconds), calling `onTick` with the time every 100 ms meanwhile. */
function until(end: number, onTick?: (nowS: number) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now() / 1000;
      onTick?.(now);
      if (now >= end) resolve();
      else setTimeout(tick, 100);
    };
    tick();
  });
}
