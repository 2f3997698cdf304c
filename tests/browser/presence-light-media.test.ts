/**
 * The lit test media (scripts/media/generate.ts): the face in the file reflects the light sequence of
 * the fixed test nonce from the first frame, and nothing else does. Read from the file itself, as a
 * camera that starts with it would deliver it: the face's mean colour against the room's beside it,
 * judged by the engine's light check with the test nonce (accepted) and with any other (refused).
 */
import { openSync, readSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { type LightSignals, presenceConfig } from "../../shared/engine";
import { checkLight } from "../../shared/engine/reflection";

/** A rectangle of the 640x480 frame, in pixels (even coordinates: the chroma planes are half size). */
type Region = { x0: number; y0: number; x1: number; y1: number };
/** Inside the face (the generator's face ellipse is centred at 322, 250 with radii 100 and 135). */
const FACE: Region = { x0: 272, y0: 190, x1: 372, y1: 310 };
/** The room beside the head, down to the chin. */
const ROOM: Region[] = [
  { x0: 0, y0: 0, x1: 160, y1: 380 },
  { x0: 500, y0: 0, x1: 640, y1: 380 },
];

/** Mean R, G, B of regions of every frame of a 4:2:0 y4m file (BT.601, limited range), up to `frames`. */
function regionColours(path: string, regions: Region[][], frames: number): number[][][] {
  const fd = openSync(path, "r");
  const head = Buffer.alloc(256);
  readSync(fd, head, 0, 256, 0);
  const header = head.toString("latin1", 0, head.indexOf(10));
  const width = Number(/ W(\d+)/.exec(header)![1]);
  const height = Number(/ H(\d+)/.exec(header)![1]);
  const frameBytes = 6 + width * height * 1.5;
  const frame = Buffer.alloc(frameBytes);
  const out: number[][][] = regions.map(() => []);
  for (let k = 0; k < frames; k++) {
    if (readSync(fd, frame, 0, frameBytes, header.length + 1 + k * frameBytes) < frameBytes) break;
    const y = frame.subarray(6, 6 + width * height);
    const u = frame.subarray(6 + width * height, 6 + width * height * 1.25);
    const v = frame.subarray(6 + width * height * 1.25);
    regions.forEach((parts, r) => {
      let [sy, su, sv, ny, nc] = [0, 0, 0, 0, 0];
      for (const p of parts) {
        for (let row = p.y0; row < p.y1; row++) for (let col = p.x0; col < p.x1; col++, ny++) sy += y[row * width + col]!;
        for (let row = p.y0 / 2; row < p.y1 / 2; row++) {
          for (let col = p.x0 / 2; col < p.x1 / 2; col++, nc++) {
            su += u[row * (width / 2) + col]!;
            sv += v[row * (width / 2) + col]!;
          }
        }
      }
      const [Y, U, V] = [sy / ny - 16, su / nc - 128, sv / nc - 128];
      out[r]!.push(
        [1.164 * Y + 1.596 * V, 1.164 * Y - 0.392 * U - 0.813 * V, 1.164 * Y + 2.017 * U].map((c) => Math.min(255, Math.max(0, c))),
      );
    });
  }
  return out;
}

describe("the lit test media", () => {
  const media = inject("media");
  const seconds = 12;
  const [skin, background] = regionColours(media.lit.video, [[FACE], ROOM], seconds * media.fps);
  const light: LightSignals = { sequence: "light-v1", skin: skin!, background: background! };

  it("lasts the capture, and its face reflects the test nonce's sequence at a plausible lag and strength", () => {
    expect(media.lit.seconds).toBeGreaterThanOrEqual(seconds);
    expect(skin).toHaveLength(seconds * media.fps);
    const check = checkLight(light, media.lit.nonce, media.fps, presenceConfig);
    expect(check, JSON.stringify(check)).toMatchObject({ passed: true });
    expect(check.lag_ms).toBeGreaterThanOrEqual(30);
    expect(check.lag_ms).toBeLessThanOrEqual(90);
  });

  it("does not reflect any other nonce's sequence", () => {
    for (const nonce of ["n_light_test_0002", "another-capture-nonce", `${media.lit.nonce}x`]) {
      expect(checkLight(light, nonce, media.fps, presenceConfig).passed, nonce).toBe(false);
    }
  });
});
