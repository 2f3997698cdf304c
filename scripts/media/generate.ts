/**
 * Test media for the browser tests: a real photograph of a face as a fake camera, whose skin
 * carries a synthetic pulse locked to the breath pauses of speech synthesised by espeak-ng, and
 * whose mouth opens with that speech; and two attacks, the same photograph without a pulse and the
 * speech shifted against the video. Chromium plays the files in a loop (`--use-file-for-fake-video-
 * capture`, `--use-file-for-fake-audio-capture`), so video and audio are one loop of equal length
 * and the pulse runs on smoothly across it. For the light challenge (descriptor v2) the manifest
 * says where the face is and how it reflects a screen: the browser tests' camera
 * (tests/browser/lit-camera.ts) relights it at each frame's capture time.
 *
 * The photograph is scikit-image's `astronaut.png` (Eileen Collins, NASA; public domain: "no known
 * copyright restrictions"), shipped by Debian's python3-skimage. Needs espeak-ng and sox (Debian).
 *
 * `npx tsx scripts/media/generate.ts` writes dist/media/ (git-ignored) and prints the manifest; the
 * browser tests call `ensureMedia()`, which regenerates only when this code or the photograph
 * changed.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DIST_DIR } from "../local/functions";
import { type Audio, decodePng, decodeWav, encodeWav, type RgbImage, y4mFrame, y4mHeader } from "./formats";
import { breathPauses, heartPhase, meanBpm, mouthFromEnvelope, pulseWave, RESTING_HEART, rmsEnvelope } from "./reading";

export const MEDIA_DIR = join(DIST_DIR, "media");
export const PHOTO = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png";

/** The lines read aloud, each followed by a breath pause of the given length (seconds). */
const LINES = [
  { text: "I am here in person today.", pauseS: 1.1 },
  { text: "This is my face, and my voice.", pauseS: 1.0 },
  { text: "I agree to what I see on the screen.", pauseS: 1.2 },
];
/**
 * 15 frames a second, not 30: a 640x480 frame is 460 KB uncompressed, and the page cannot run the
 * landmark network on more frames than that here anyway (docs/benchmarks.md).
 */
const FPS = 15;
const WIDTH = 640;
const HEIGHT = 480;
const AUDIO_RATE = 48000;
/** The attack's audio plays this much later than the video (the engine allows +-150 ms). */
const SHIFT_S = 0.4;
/**
 * How far the skin tone swings with the pulse: 2% of the green channel at the wave's peak, the top
 * of what cameras measure on a face. Not 1%: the light challenge's reflection, taken out of the
 * skin colour before POS, costs the pulse several dB (docs/benchmarks.md, "The hosted screen's
 * light challenge in the browser"), and the browser tests must pass on every run, not most.
 */
const PULSE_DEPTH = 0.02;
/** Blood-volume signature of skin (de Haan and van Leest 2014), relative to green. */
const PBV = [0.33 / 0.77, 1, 0.53 / 0.77];

/**
 * The reflection's strength: the screen's light at the face over the room's. A phone at full
 * brightness casts about 38 lx at 30 cm (docs/presence-descriptor.md 11.3): 0.08 in an office of
 * 500 lx, twice the preflight's minimum.
 */
const LIGHT_DEPTH = 0.08;
/** The display latency: the face changes colour this long after the screen does (the engine allows 0-150 ms). */
const LIGHT_LAG_S = 0.06;

/** Where the face is once the photograph is cropped and scaled to 640x480 (pixels). */
const FACE = { cx: 322, cy: 250, rx: 100, ry: 135 };
/** The mouth: the line between the upper teeth and the lower lip, its centre and half-width, and the chin. */
const MOUTH = { splitY: 296, cx: 324, halfWidth: 48, chinY: 380, maxDropPx: 20 };
/** The crop of the 512x512 photograph that becomes the frame (a 4:3 region around the face). */
const CROP = { x: 62, y: 0, width: 320, height: 240 };

export interface MediaManifest {
  /** Hash of the generator's code and the photograph: the files are current when it matches. */
  generator: string;
  photo: string;
  fps: number;
  width: number;
  height: number;
  /** Length of the loop, seconds. */
  seconds: number;
  /** The synthetic heart's mean rate over the loop, bpm. */
  bpm: number;
  /** How much later the shifted attack's sound plays, seconds. */
  shiftS: number;
  /** Absolute paths, as Chromium's flags want them. */
  reading: { video: string; audio: string };
  still: { video: string; audio: string };
  shifted: { video: string; audio: string };
  /**
   * How the face of these files reflects a screen in front of it: the face's ellipse (pixels; hair
   * and eyes included, the room behind too far to reflect), the strength of the screen's light
   * over the room's, and the display latency.
   */
  light: { face: { cx: number; cy: number; rx: number; ry: number }; depth: number; lagS: number };
}

async function generatorHash(): Promise<string> {
  const hash = createHash("sha256");
  for (const file of ["generate.ts", "reading.ts", "formats.ts"]) hash.update(await readFile(join(import.meta.dirname, file)));
  hash.update(await readFile(PHOTO));
  return hash.digest("hex").slice(0, 16);
}

function requireTool(name: string, install: string): void {
  try {
    execFileSync(name, ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error(`${name} is needed to make the test media: apt-get install -y ${install}`);
  }
}

/** One line of speech from espeak-ng, at 48 kHz through sox, its leading and trailing silence cut. */
function speak(text: string): Float32Array {
  const wav = execFileSync("sh", ["-c", 'espeak-ng --stdout -v en-us -s 165 "$0" | sox -V1 -t wav - -t wav -r 48000 -b 16 -c 1 -', text], {
    maxBuffer: 64 << 20,
  });
  const { samples } = decodeWav(new Uint8Array(wav.buffer, wav.byteOffset, wav.byteLength));
  let peak = 0;
  for (const x of samples) peak = Math.max(peak, Math.abs(x));
  const loud = (x: number) => Math.abs(x) > 0.02 * peak;
  const first = samples.findIndex(loud);
  let last = samples.length - 1;
  while (last > first && !loud(samples[last] as number)) last--;
  const margin = Math.round(0.02 * AUDIO_RATE);
  return samples.slice(Math.max(0, first - margin), Math.min(samples.length, last + margin));
}

/** The lines and their pauses as one loop of whole video frames, over a faint room noise (-50 dBFS). */
function readingAudio(): Audio {
  const lines = LINES.map((line) => ({ speech: speak(line.text), pause: Math.round(line.pauseS * AUDIO_RATE) }));
  const length = lines.reduce((sum, line) => sum + line.speech.length + line.pause, 0);
  const perFrame = AUDIO_RATE / FPS;
  const samples = new Float32Array(Math.ceil(length / perFrame) * perFrame);
  let state = 987654321;
  for (let i = 0; i < samples.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    samples[i] = 0.0032 * 1.732 * (2 * (state / 2 ** 32) - 1);
  }
  let at = 0;
  for (const line of lines) {
    for (let i = 0; i < line.speech.length; i++) samples[at + i] = (samples[at + i] as number) + 0.5 * (line.speech[i] as number);
    at += line.speech.length + line.pause;
  }
  return { sampleRate: AUDIO_RATE, samples };
}

/** The 4:3 crop around the face, scaled to 640x480 (bilinear), as floating-point RGB. */
function framePhotograph(photo: RgbImage): Float32Array {
  const out = new Float32Array(WIDTH * HEIGHT * 3);
  const sx = CROP.width / WIDTH;
  const sy = CROP.height / HEIGHT;
  for (let y = 0; y < HEIGHT; y++) {
    const fy = Math.min(photo.height - 1.001, Math.max(0, CROP.y + (y + 0.5) * sy - 0.5));
    const y0 = Math.floor(fy);
    for (let x = 0; x < WIDTH; x++) {
      const fx = Math.min(photo.width - 1.001, Math.max(0, CROP.x + (x + 0.5) * sx - 0.5));
      const x0 = Math.floor(fx);
      for (let c = 0; c < 3; c++) {
        const at = (xx: number, yy: number) => photo.rgb[(yy * photo.width + xx) * 3 + c] as number;
        const top = at(x0, y0) * (1 - (fx - x0)) + at(x0 + 1, y0) * (fx - x0);
        const bottom = at(x0, y0 + 1) * (1 - (fx - x0)) + at(x0 + 1, y0 + 1) * (fx - x0);
        out[(y * WIDTH + x) * 3 + c] = top * (1 - (fy - y0)) + bottom * (fy - y0);
      }
    }
  }
  return out;
}

/** The pixels that carry the pulse: skin-coloured (the client's YCbCr test) inside the face's ellipse. */
function skinPixels(frame: Float32Array): Uint32Array {
  const pixels: number[] = [];
  for (let y = FACE.cy - FACE.ry; y <= FACE.cy + FACE.ry; y++) {
    for (let x = FACE.cx - FACE.rx; x <= FACE.cx + FACE.rx; x++) {
      if (((x - FACE.cx) / FACE.rx) ** 2 + ((y - FACE.cy) / FACE.ry) ** 2 > 1) continue;
      const p = y * WIDTH + x;
      const [r, g, b] = [frame[3 * p] as number, frame[3 * p + 1] as number, frame[3 * p + 2] as number];
      const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
      const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
      if (cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173) pixels.push(p);
    }
  }
  return Uint32Array.from(pixels);
}

/**
 * Opens the mouth by `drop` pixels: the lower lip and the chin below the split line slide down
 * (most at the mouth's centre, fading towards its corners and towards the neck), and the gap they
 * leave is the dark inside of the mouth.
 */
function openMouth(frame: Float32Array, source: Float32Array, drop: number): void {
  const interior = [62, 24, 28];
  for (let y = MOUTH.splitY; y < MOUTH.chinY; y++) {
    const fade = (MOUTH.chinY - y) / (MOUTH.chinY - MOUTH.splitY);
    for (let x = MOUTH.cx - 2 * MOUTH.halfWidth; x <= MOUTH.cx + 2 * MOUTH.halfWidth; x++) {
      const across = Math.max(0, 1 - ((x - MOUTH.cx) / MOUTH.halfWidth) ** 2);
      const shift = drop * across * fade;
      if (shift < 0.01) continue;
      const from = y - shift;
      const p = (y * WIDTH + x) * 3;
      if (from < MOUTH.splitY) {
        // Inside the opened gap; its last pixel row blends into the lip.
        const edge = Math.min(1, MOUTH.splitY - from);
        for (let c = 0; c < 3; c++)
          frame[p + c] = (interior[c] as number) * edge + (source[(MOUTH.splitY * WIDTH + x) * 3 + c] as number) * (1 - edge);
        continue;
      }
      const y0 = Math.floor(from);
      const f = from - y0;
      for (let c = 0; c < 3; c++) {
        frame[p + c] = (source[(y0 * WIDTH + x) * 3 + c] as number) * (1 - f) + (source[((y0 + 1) * WIDTH + x) * 3 + c] as number) * f;
      }
    }
  }
}

/** Writes a file through a temporary name, so a reader never sees it half written. */
async function writeAtomically(path: string, write: (temporary: string) => Promise<void>): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await write(temporary);
  await rename(temporary, path);
}

/** The loop as a y4m file: each frame the photograph, tinted by the pulse (when `pulse`), mouth opened by the speech. */
async function writeVideo(
  path: string,
  photo: Float32Array,
  frames: number,
  pulseAt: (t: number) => number,
  mouthAt: (t: number) => number,
) {
  const skin = skinPixels(photo);
  const frame = new Float32Array(photo.length);
  const tinted = new Float32Array(photo.length);
  await writeAtomically(path, async (temporary) => {
    const file = await open(temporary, "w");
    try {
      await file.write(y4mHeader(WIDTH, HEIGHT, FPS));
      for (let k = 0; k < frames; k++) {
        const t = k / FPS;
        tinted.set(photo);
        const wave = PULSE_DEPTH * pulseAt(t);
        for (const p of skin)
          for (let c = 0; c < 3; c++) tinted[3 * p + c] = (photo[3 * p + c] as number) * (1 + wave * (PBV[c] as number));
        frame.set(tinted);
        openMouth(frame, tinted, MOUTH.maxDropPx * Math.max(0, (mouthAt(t) - 0.02) / 0.28));
        await file.write(y4mFrame({ width: WIDTH, height: HEIGHT, rgb: frame }));
      }
    } finally {
      await file.close();
    }
  });
}

async function writeAudio(path: string, audio: Audio): Promise<void> {
  await writeAtomically(path, (temporary) => writeFile(temporary, encodeWav(audio)));
}

/** Makes every file of the manifest in `dir`, unless they exist and are current; returns the manifest. */
export async function ensureMedia(dir = MEDIA_DIR): Promise<MediaManifest> {
  if (!existsSync(PHOTO)) throw new Error(`${PHOTO} is needed to make the test media: apt-get install -y python3-skimage`);
  const generator = await generatorHash();
  const manifestPath = join(dir, "manifest.json");
  if (existsSync(manifestPath)) {
    const existing = JSON.parse(await readFile(manifestPath, "utf8")) as MediaManifest;
    if (
      existing.generator === generator &&
      [existing.reading, existing.still, existing.shifted].every((m) => m && existsSync(m.video) && existsSync(m.audio))
    ) {
      return existing;
    }
  }
  requireTool("espeak-ng", "espeak-ng");
  requireTool("sox", "sox");
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });

  const audio = readingAudio();
  const seconds = audio.samples.length / AUDIO_RATE;
  const frames = Math.round(seconds * FPS);
  const fineRate = 100;
  const envelope = rmsEnvelope(audio.samples, AUDIO_RATE, fineRate);
  const phase = heartPhase(breathPauses(envelope, fineRate), fineRate, RESTING_HEART);
  const mouth = mouthFromEnvelope(envelope, fineRate);
  const at = (series: Float64Array) => (t: number) => series[Math.min(series.length - 1, Math.round(t * fineRate))] as number;
  const photo = framePhotograph(decodePng(await readFile(PHOTO)));

  const manifest: MediaManifest = {
    generator,
    photo: PHOTO,
    fps: FPS,
    width: WIDTH,
    height: HEIGHT,
    seconds,
    bpm: Math.round(meanBpm(phase, fineRate) * 100) / 100,
    shiftS: SHIFT_S,
    reading: { video: join(dir, "reading.y4m"), audio: join(dir, "reading.wav") },
    still: { video: join(dir, "still.y4m"), audio: join(dir, "reading.wav") },
    shifted: { video: join(dir, "reading.y4m"), audio: join(dir, "shifted.wav") },
    light: { face: { ...FACE }, depth: LIGHT_DEPTH, lagS: LIGHT_LAG_S },
  };
  const pulse = at(phase);
  await writeVideo(manifest.reading.video, photo, frames, (t) => pulseWave(pulse(t)), at(mouth));
  await writeVideo(manifest.still.video, photo, frames, () => 0, at(mouth));
  await writeAudio(manifest.reading.audio, audio);
  const shift = Math.round(SHIFT_S * AUDIO_RATE);
  const n = audio.samples.length;
  await writeAudio(manifest.shifted.audio, {
    sampleRate: AUDIO_RATE,
    samples: Float32Array.from({ length: n }, (_, i) => audio.samples[(i - shift + n) % n] as number),
  });
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await ensureMedia(), null, 2));
}
