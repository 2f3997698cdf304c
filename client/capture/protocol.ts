/** Messages between the page and the face worker (client/capture/face-worker.ts). */
import type { PixelBox, Point } from "../descriptor";

/** Page → worker: load the models from `base` (the page's own origin) and warm the networks up. */
export interface InitRequest {
  type: "init";
  /** Absolute URL of the folder that holds `models/` and `wasm/`. */
  base: string;
}

/** Page → worker: one camera frame to look at (the worker closes it). */
export interface FrameRequest {
  type: "frame";
  /** Capture-clock time of the frame, seconds. */
  t: number;
  frame: VideoFrame;
  /** Run the detector (else the landmarks run on the tracked region). */
  detect: boolean;
  /**
   * Also cut the aligned face out of the frame, to be described (the 128-d face descriptor) when
   * the page sends a DescribeRequest: the recognition network takes no turn from the landmarks
   * while recording (D-720).
   */
  describe: boolean;
}

/**
 * Page → worker, after a recording: describe every face cut so far (once the recognition network
 * is ready, D-407), each in a DescriptorMessage, then answer DescribedMessage. The worker handles
 * its messages one after another, so every frame sent before this has been answered by then.
 */
export interface DescribeRequest {
  type: "describe";
}

export type WorkerRequest = InitRequest | FrameRequest | DescribeRequest;

export interface ReadyMessage {
  type: "ready";
  backend: string;
  /** Model download, compilation and warm-up, ms. */
  loadMs: number;
}

/** What the worker saw in one frame. */
export interface FrameResult {
  type: "frame";
  t: number;
  /** No face: the detector found none, or the tracked region lost it. */
  face: null | {
    /** Detection confidence of the latest detection that this region is tracked from. */
    score: number;
    landmarks: Point[];
    /** The skin region of these landmarks, for the page to average every frame. */
    skin: { box: PixelBox; mask: Uint8Array };
    mouth: number;
  };
  /** Time spent per network on this frame (describe: cutting the face out), ms. */
  timings: { detect: number; landmarks: number; describe: number; total: number };
}

/** Worker → page: the recognition network is loaded and warmed up (after `ready`: the detector and landmarks come first). */
export interface RecognitionReadyMessage {
  type: "recognition";
  /** From init to now, ms. */
  loadMs: number;
}

/** Worker → page: the descriptor of a face cut from a frame (FrameRequest.describe), sent on a DescribeRequest. */
export interface DescriptorMessage {
  type: "descriptor";
  /** Capture-clock time of the frame the face was cut from, seconds. */
  t: number;
  score: number;
  descriptor: Float32Array;
  /** Time to compute it, ms. */
  ms: number;
}

/** Worker → page: every face cut so far has been described (the answer to a DescribeRequest). */
export interface DescribedMessage {
  type: "described";
}

export interface ErrorMessage {
  type: "error";
  message: string;
}

export type WorkerMessage = ReadyMessage | RecognitionReadyMessage | DescriptorMessage | DescribedMessage | FrameResult | ErrorMessage;
