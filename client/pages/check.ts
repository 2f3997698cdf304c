/**
 * The device check page (`GET /functions/v1/hosted-capture/check`): opens the camera and the
 * microphone, shows the quality gates, records when asked and shows the descriptor this device
 * computed with what it cost. It posts nothing. `?seconds=5..30` sets the length (default 20).
 * Like the hosted screen it first checks that the screen's light reaches the face (the preflight)
 * and lights the face while recording, computing descriptor version 2; `?light=0` records without
 * the light, version 1 (what a client without the light challenge computes).
 */
import { FaceModels, PresenceCapture, percentileOf } from "../capture/capture";
import { PREFLIGHT } from "../descriptor/light";
import { screenLight } from "../screen/light";

const status = document.getElementById("status")!;
const start = document.getElementById("start") as HTMLButtonElement;
const progress = document.getElementById("progress") as HTMLProgressElement;
const output = document.getElementById("descriptor")!;
const statsOutput = document.getElementById("stats")!;
const video = document.getElementById("camera") as HTMLVideoElement;

const query = new URL(location.href).searchParams;
const requested = Number(query.get("seconds") ?? 20);
const seconds = Number.isFinite(requested) ? Math.min(30, Math.max(5, requested)) : 20;
const lit = query.get("light") !== "0";
const guidance = {
  no_face: "Looking for a face…",
  hold_still: "Hold still.",
  more_light: "More light on the face, please.",
  camera_slow: "The camera is too slow.",
} as const;

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `n_${btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")}`;
}

async function main(): Promise<void> {
  const loaded = performance.now();
  // The folder this script came from: the assets of its own version (D-406), the face worker and models beside it.
  const assets = new URL("./", import.meta.url).href;
  status.textContent = "Loading the face models…";
  const models = await FaceModels.load(assets);
  const capture = await PresenceCapture.open({ assets, video }, models);
  const readyMs = Math.round(performance.now());
  const timer = setInterval(() => {
    const gates = capture.gates();
    // Once the gates have passed the button stays enabled: a gate that flickers (a landmark jitter
    // read as movement) should not take the button away under the pointer; the guidance still shows.
    if (gates.ready) start.disabled = false;
    status.textContent = gates.ready ? "Ready." : gates.problems.map((p) => guidance[p]).join(" ");
  }, 200);
  start.addEventListener("click", () => {
    clearInterval(timer);
    record(capture, readyMs, loaded).catch((error: unknown) => {
      status.textContent = `The capture failed: ${error instanceof Error ? error.message : String(error)}`;
    });
  });
}

async function record(capture: PresenceCapture, readyMs: number, loaded: number): Promise<void> {
  {
    start.disabled = true;
    let preflightDepth: number | null = null;
    if (lit) {
      status.textContent = "Checking that the screen's light reaches the face…";
      preflightDepth = await capture.preflight(screenLight);
      if (preflightDepth === null || preflightDepth < PREFLIGHT.minDepth) {
        const measured = preflightDepth === null ? "no face seen" : `depth ${preflightDepth.toFixed(3)}`;
        status.textContent = `The screen's light does not reach the face (${measured}; ${PREFLIGHT.minDepth} needed). Turn the screen's brightness up, come closer, or move away from a window or bright lamp, then record again.`;
        start.disabled = false;
        return;
      }
    }
    progress.hidden = false;
    status.textContent = "Recording: read aloud.";
    const descriptor = await capture.record(
      seconds,
      randomNonce(),
      (elapsed) => {
        progress.value = elapsed / seconds;
      },
      lit ? { light: screenLight } : {},
    );
    const s = capture.stats;
    const landmarkSpan = s.landmarkTimes.length > 1 ? s.landmarkTimes[s.landmarkTimes.length - 1]! - s.landmarkTimes[0]! : 0;
    const stats = {
      backend: s.backend,
      model_load_ms: s.modelLoadMs,
      ready_ms: readyMs,
      script_start_ms: Math.round(loaded),
      camera_fps: s.cameraFps,
      sample_rate_hz: s.sampleRateHz,
      preflight_depth: preflightDepth,
      frame_work_ms: { p50: percentileOf(s.frameWorkMs, 0.5), p95: percentileOf(s.frameWorkMs, 0.95), frames: s.frameWorkMs.length },
      landmark_hz: landmarkSpan > 0 ? (s.landmarkTimes.length - 1) / landmarkSpan : 0,
      worker_ms: { p50: percentileOf(s.workerMs, 0.5), p95: percentileOf(s.workerMs, 0.95) },
      detect_ms: { p50: percentileOf(s.detectMs, 0.5), p95: percentileOf(s.detectMs, 0.95), runs: s.detectMs.length },
      landmarks_ms: { p50: percentileOf(s.landmarksMs, 0.5), p95: percentileOf(s.landmarksMs, 0.95), runs: s.landmarksMs.length },
      describe_ms: { p50: percentileOf(s.describeMs, 0.5), p95: percentileOf(s.describeMs, 0.95), runs: s.describeMs.length },
      audio_lead_ms: { p50: percentileOf(s.audioLeadMs, 0.5), max: percentileOf(s.audioLeadMs, 1), blocks: s.audioLeadMs.length },
      audio_seconds: Math.round(s.audioSeconds * 1000) / 1000,
      audio_clock: s.audioClock,
    };
    output.textContent = JSON.stringify(descriptor);
    statsOutput.textContent = JSON.stringify(stats);
    output.hidden = false;
    statsOutput.hidden = false;
    progress.hidden = true;
    status.textContent = "Done.";
    await capture.close();
  }
}

main().catch((error: unknown) => {
  status.textContent = `The camera or microphone could not be used: ${error instanceof Error ? error.message : String(error)}`;
});
