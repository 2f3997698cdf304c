/**
 * The face worker: face-api (TensorFlow.js on its WebAssembly backend) off the page's main thread.
 * For each camera frame it is handed, it either runs the tiny face detector on the frame scaled to
 * 320x240 (when the page asks, about once a second) or follows the face from the last detection,
 * moving its region with the landmarks; then the 68 landmarks on that region, cut out and scaled to
 * the network's 112x112 by the browser; on a few frames of a recording it also cuts out the
 * aligned face (150x150), whose 128-d descriptor it computes when the page asks, after the
 * recording, so the landmarks have every turn while the mouth is measured (D-720). Only those small
 * images become tensors. It returns the landmarks with the skin
 * region and mouth opening computed from them (client/descriptor/), so the page's per-frame work
 * is only averaging pixels. Models and .wasm files come from the service itself.
 */
import * as faceapi from "@vladmandic/face-api";
import { mouthOpening, type PixelBox, skinMask } from "../descriptor";
import type { FrameRequest, FrameResult, WorkerMessage, WorkerRequest } from "./protocol";

/** The parts of the TensorFlow.js runtime bundled in face-api that its type declarations leave out. */
interface TfRuntime {
  setWasmPaths(prefix: string): void;
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  getBackend(): string;
  browser: { fromPixels(pixels: ImageBitmap | ImageData): faceapi.tf.Tensor3D };
}
const tf = faceapi.tf as unknown as TfRuntime;

const scope = self as unknown as {
  postMessage(message: WorkerMessage, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
};

/** The detector's input: the frame scaled to this width (its height in proportion). */
const DETECT_WIDTH = 320;
const detectorOptions = new faceapi.TinyFaceDetectorOptions({ inputSize: 224, scoreThreshold: 0.4 });

/** The face being followed: a square region around it in frame pixels, and the latest detection's score. */
let tracked: { region: PixelBox; score: number } | null = null;

/** The square around a box (its longer side, same centre), in whole pixels inside the frame where possible. */
function squareAround(box: { x: number; y: number; width: number; height: number }, width: number, height: number): PixelBox {
  const side = Math.max(8, Math.round(Math.min(Math.max(box.width, box.height), width, height)));
  const x = Math.round(Math.min(Math.max(0, box.x + box.width / 2 - side / 2), width - side));
  const y = Math.round(Math.min(Math.max(0, box.y + box.height / 2 - side / 2), height - side));
  return { x, y, width: side, height: side };
}

/** A region of the frame as a tensor of `size` x `size` pixels (cropped and scaled by the browser). */
async function cut(frame: VideoFrame, region: PixelBox, size: number): Promise<faceapi.tf.Tensor3D> {
  const bitmap = await createImageBitmap(frame, region.x, region.y, region.width, region.height, {
    resizeWidth: size,
    resizeHeight: size,
    resizeQuality: "medium",
  });
  try {
    return tf.browser.fromPixels(bitmap);
  } finally {
    bitmap.close();
  }
}

async function init(base: string): Promise<void> {
  const started = performance.now();
  // There is no window here: face-api gets what it needs from the worker's own globals.
  faceapi.env.setEnv({
    Canvas: OffscreenCanvas as unknown as typeof HTMLCanvasElement,
    CanvasRenderingContext2D: OffscreenCanvasRenderingContext2D as unknown as typeof CanvasRenderingContext2D,
    Image: ImageBitmap as unknown as typeof HTMLImageElement,
    ImageData,
    Video: ImageBitmap as unknown as typeof HTMLVideoElement,
    createCanvasElement: () => new OffscreenCanvas(1, 1) as unknown as HTMLCanvasElement,
    createImageElement: () => {
      throw new Error("no images in the face worker");
    },
    createVideoElement: () => {
      throw new Error("no video elements in the face worker");
    },
    fetch: (url: string, init?: RequestInit) => fetch(url, init),
    readFile: () => {
      throw new Error("no file system in the face worker");
    },
  });
  tf.setWasmPaths(new URL("wasm/", base).href);
  await tf.setBackend("wasm");
  await tf.ready();
  const models = new URL("models/", base).href;
  // The detector and the landmarks first: the quality gates need them, and "Start reading" waits
  // for the gates. The recognition network (most of the bytes) follows while the person reads and
  // records; faces to describe before it is ready wait for it (D-407).
  await Promise.all([faceapi.nets.tinyFaceDetector.loadFromUri(models), faceapi.nets.faceLandmark68Net.loadFromUri(models)]);
  await warmUp(DETECT_WIDTH, (input) => faceapi.nets.tinyFaceDetector.locateFaces(input, detectorOptions));
  await warmUp(112, (input) => faceapi.nets.faceLandmark68Net.detectLandmarks(input));
  scope.postMessage({ type: "ready", backend: tf.getBackend(), loadMs: Math.round(performance.now() - started) });
  await faceapi.nets.faceRecognitionNet.loadFromUri(models);
  await warmUp(150, (input) => faceapi.nets.faceRecognitionNet.computeFaceDescriptor(input));
  scope.postMessage({ type: "recognition", loadMs: Math.round(performance.now() - started) });
  recognitionLoaded();
}

/** The first run of a network compiles its kernels: done on a blank image, not in the first real frame. */
async function warmUp(size: number, run: (input: faceapi.tf.Tensor3D) => Promise<unknown>): Promise<void> {
  const blank = tf.browser.fromPixels(new ImageData(size, size));
  await run(blank);
  blank.dispose();
}

/** Resolves once the recognition network is loaded and warmed up (it loads last: D-407). */
let recognitionLoaded!: () => void;
const recognitionReady = new Promise<void>((resolve) => (recognitionLoaded = resolve));
/** The aligned faces cut from frames (FrameRequest.describe), waiting for the page's DescribeRequest. */
const waiting: { t: number; score: number; face: ImageBitmap }[] = [];

/** Describes every face waiting (once the recognition network is ready), each sent on its own, then says so. */
async function describeWaiting(): Promise<void> {
  await recognitionReady;
  for (const face of waiting.splice(0)) await describe(face);
  scope.postMessage({ type: "described" });
}

/** The descriptor of a face cut from a frame, sent on its own. */
async function describe({ t, score, face }: { t: number; score: number; face: ImageBitmap }): Promise<void> {
  const started = performance.now();
  const input = tf.browser.fromPixels(face);
  face.close();
  try {
    const descriptor = (await faceapi.nets.faceRecognitionNet.computeFaceDescriptor(input)) as Float32Array;
    scope.postMessage({ type: "descriptor", t, score, descriptor, ms: performance.now() - started });
  } finally {
    input.dispose();
  }
}

async function detect(frame: VideoFrame): Promise<void> {
  const { displayWidth: width, displayHeight: height } = frame;
  const scale = width / DETECT_WIDTH;
  const bitmap = await createImageBitmap(frame, {
    resizeWidth: DETECT_WIDTH,
    resizeHeight: Math.round(height / scale),
    resizeQuality: "medium",
  });
  const image = tf.browser.fromPixels(bitmap);
  bitmap.close();
  try {
    const [best] = (await faceapi.nets.tinyFaceDetector.locateFaces(image, detectorOptions)).sort((a, b) => b.score - a.score);
    if (!best) tracked = null;
    else {
      const box = { x: best.box.x * scale, y: best.box.y * scale, width: best.box.width * scale, height: best.box.height * scale };
      tracked = { region: squareAround(box, width, height), score: best.score };
    }
  } finally {
    image.dispose();
  }
}

async function look(request: FrameRequest): Promise<FrameResult> {
  const started = performance.now();
  const timings = { detect: 0, landmarks: 0, describe: 0, total: 0 };
  const { frame } = request;
  const { displayWidth: width, displayHeight: height } = frame;
  try {
    if (request.detect || !tracked) {
      await detect(frame);
      timings.detect = performance.now() - started;
    }
    if (!tracked) return { type: "frame", t: request.t, face: null, timings: { ...timings, total: performance.now() - started } };
    const t1 = performance.now();
    const { region } = tracked;
    const crop = await cut(frame, region, 112);
    const found = (await faceapi.nets.faceLandmark68Net.detectLandmarks(crop)) as faceapi.FaceLandmarks68;
    crop.dispose();
    const landmarks = found.relativePositions.map((p) => ({ x: region.x + p.x * region.width, y: region.y + p.y * region.height }));
    timings.landmarks = performance.now() - t1;
    // Follow the face: the next region is centred where these landmarks are.
    let [cx, cy] = [0, 0];
    for (const p of landmarks) [cx, cy] = [cx + p.x / 68, cy + p.y / 68];
    const drift = { x: cx - (region.x + region.width / 2), y: cy - (region.y + region.height / 2) };
    tracked = { ...tracked, region: squareAround({ ...region, x: region.x + drift.x, y: region.y + drift.y }, width, height) };
    if (request.describe) {
      const t2 = performance.now();
      const placed = new faceapi.FaceLandmarks68(
        landmarks.map((p) => new faceapi.Point(p.x / width, p.y / height)),
        { width, height },
      );
      const aligned = squareAround(placed.align(), width, height);
      const face = await createImageBitmap(frame, aligned.x, aligned.y, aligned.width, aligned.height, {
        resizeWidth: 150,
        resizeHeight: 150,
        resizeQuality: "medium",
      });
      waiting.push({ t: request.t, score: tracked.score, face });
      timings.describe = performance.now() - t2;
    }
    const skin = skinMask(landmarks, width, height);
    return {
      type: "frame",
      t: request.t,
      face: {
        score: tracked.score,
        landmarks,
        skin: { box: skin.box, mask: skin.mask },
        mouth: mouthOpening(landmarks),
      },
      timings: { ...timings, total: performance.now() - started },
    };
  } finally {
    frame.close();
  }
}

/** Frames and describe requests are handled one after another, in the order they came. */
let queue = Promise.resolve();

scope.onmessage = (event) => {
  const request = event.data;
  if (request.type === "init") {
    init(request.base).catch((error: unknown) => scope.postMessage({ type: "error", message: String(error) }));
    return;
  }
  const fail = (error: unknown) => scope.postMessage({ type: "error", message: String(error) });
  if (request.type === "describe") {
    queue = queue.then(describeWaiting).catch(fail);
    return;
  }
  queue = queue
    .then(() => look(request).then((result) => scope.postMessage(result, result.face ? [result.face.skin.mask.buffer] : [])))
    .catch(fail);
};
