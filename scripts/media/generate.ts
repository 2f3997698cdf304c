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
 * Other sitters and cameras for the browser benchmark (scripts/bench/browser.ts): `ensureMedia`'s
 * options choose the portrait (scripts/media/faces.ts's `PORTRAITS`: Grace Hopper's is held out,
 * decoded by Debian's python3-pil, which python3-matplotlib that ships it depends on), a mirrored
 * camera, a fainter pulse, and a dim, warm, noisy room.
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
import { PORTRAITS } from "./faces";
import { type Audio, decodePng, decodeWav, encodeWav, type RgbImage, y4mFrame, y4mHeader } from "./formats";
import { breathPauses, heartPhase, meanBpm, mouthFromEnvelope, pulseWave, RESTING_HEART, rmsEnvelope } from "./reading";

export const MEDIA_DIR = join(DIST_DIR, "media");
export const PHOTO = (PORTRAITS.find((p) => p.id === "astronaut") as (typeof PORTRAITS)[number]).file;

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

/**
 * Where a sitter's face is in the frame. `crop`: the 4:3 region of the photograph that becomes the
 * 640x480 frame; `face`: the face's ellipse once cropped and scaled (pixels; hair and eyes
 * included); `mouth`: the line between the upper teeth and the lower lip, its centre and
 * half-width, and the chin.
 */
interface Sitting {
  crop: { x: number; y: number; width: number; height: number };
  face: { cx: number; cy: number; rx: number; ry: number };
  mouth: { splitY: number; cx: number; halfWidth: number; chinY: number; maxDropPx: number };
}

/** The sitters, by their portrait's id in scripts/media/faces.ts (read off the photographs). */
const SITTINGS: Record<string, Sitting> = {
  astronaut: {
    crop: { x: 62, y: 0, width: 320, height: 240 },
    face: { cx: 322, cy: 250, rx: 100, ry: 135 },
    mouth: { splitY: 296, cx: 324, halfWidth: 48, chinY: 380, maxDropPx: 20 },
  },
  hopper: {
    crop: { x: 0, y: 60, width: 512, height: 384 },
    face: { cx: 331, cy: 228, rx: 122, ry: 140 },
    mouth: { splitY: 270, cx: 328, halfWidth: 36, chinY: 340, maxDropPx: 16 },
  },
};

/** How a benchmark's camera, room or person differs from the browser tests' (all optional). */
export interface MediaOptions {
  /** The portrait's id (scripts/media/faces.ts); the astronaut by default. */
  sitter?: string;
  /** A camera that mirrors its picture (the face's ellipse in the manifest is mirrored too). */
  mirror?: boolean;
  /** The pulse's swing in green, instead of 2%. */
  pulseDepth?: number;
  /** A dim, warm room (a tungsten lamp at half the light) and a sensor's noise, fresh in every frame. */
  dimWarmNoisy?: boolean;
  /** Frames a second the camera delivers, instead of 15 (24, 25 and 30 are common). */
  fps?: number;
  /** Every frame through JPEG at this quality (a camera or a video path that compresses each frame, 60 a cheap one's). */
  jpegQuality?: number;
}

/** The variant's name: its folder under dist/media/ (none for the browser tests' own media). */
export function mediaVariantName(options: MediaOptions): string {
  const parts = [
    options.sitter && options.sitter !== "astronaut" ? options.sitter : "",
    options.mirror ? "mirror" : "",
    options.pulseDepth !== undefined && options.pulseDepth !== PULSE_DEPTH ? `pulse${options.pulseDepth * 100}` : "",
    options.dimWarmNoisy ? "dim-warm-noisy" : "",
    options.fps !== undefined && options.fps !== FPS ? `${options.fps}fps` : "",
    options.jpegQuality !== undefined ? `jpeg${options.jpegQuality}` : "",
  ].filter(Boolean);
  return parts.join("-");
}

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

async function generatorHash(photo: string): Promise<string> {
  const hash = createHash("sha256");
  for (const file of ["generate.ts", "reading.ts", "formats.ts"]) hash.update(await readFile(join(import.meta.dirname, file)));
  hash.update(await readFile(photo));
  return hash.digest("hex").slice(0, 16);
}

/** A photograph's pixels: PNG in plain Node, anything else (the JPEG portrait) through Debian's python3-pil. */
async function decodePhotograph(file: string): Promise<RgbImage> {
  if (file.endsWith(".png")) return decodePng(await readFile(file));
  const script =
    "import sys; from PIL import Image; im = Image.open(sys.argv[1]).convert('RGB'); " +
    "sys.stdout.write(f'{im.width} {im.height}\\n'); sys.stdout.flush(); sys.stdout.buffer.write(im.tobytes())";
  let out: Buffer;
  try {
    out = execFileSync("/usr/bin/python3", ["-c", script, file], { maxBuffer: 64 << 20 });
  } catch {
    throw new Error(`${file} is read through Python's PIL: apt-get install -y python3-pil`);
  }
  const newline = out.indexOf(10);
  const [width, height] = out.subarray(0, newline).toString().split(" ").map(Number) as [number, number];
  return { width, height, rgb: new Uint8Array(out.subarray(newline + 1)) };
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

/** The lines and their pauses as one loop of whole video frames (at `fps`), over a faint room noise (-50 dBFS). */
function readingAudio(fps: number): Audio {
  const lines = LINES.map((line) => ({ speech: speak(line.text), pause: Math.round(line.pauseS * AUDIO_RATE) }));
  const length = lines.reduce((sum, line) => sum + line.speech.length + line.pause, 0);
  const perFrame = Math.round(AUDIO_RATE / fps);
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
function framePhotograph(photo: RgbImage, crop: Sitting["crop"]): Float32Array {
  const out = new Float32Array(WIDTH * HEIGHT * 3);
  const sx = crop.width / WIDTH;
  const sy = crop.height / HEIGHT;
  for (let y = 0; y < HEIGHT; y++) {
    const fy = Math.min(photo.height - 1.001, Math.max(0, crop.y + (y + 0.5) * sy - 0.5));
    const y0 = Math.floor(fy);
    for (let x = 0; x < WIDTH; x++) {
      const fx = Math.min(photo.width - 1.001, Math.max(0, crop.x + (x + 0.5) * sx - 0.5));
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
function skinPixels(frame: Float32Array, face: Sitting["face"]): Uint32Array {
  const pixels: number[] = [];
  for (let y = face.cy - face.ry; y <= face.cy + face.ry; y++) {
    for (let x = face.cx - face.rx; x <= face.cx + face.rx; x++) {
      if (((x - face.cx) / face.rx) ** 2 + ((y - face.cy) / face.ry) ** 2 > 1) continue;
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
function openMouth(frame: Float32Array, source: Float32Array, drop: number, mouth: Sitting["mouth"]): void {
  const interior = [62, 24, 28];
  for (let y = mouth.splitY; y < mouth.chinY; y++) {
    const fade = (mouth.chinY - y) / (mouth.chinY - mouth.splitY);
    for (let x = mouth.cx - 2 * mouth.halfWidth; x <= mouth.cx + 2 * mouth.halfWidth; x++) {
      const across = Math.max(0, 1 - ((x - mouth.cx) / mouth.halfWidth) ** 2);
      const shift = drop * across * fade;
      if (shift < 0.01) continue;
      const from = y - shift;
      const p = (y * WIDTH + x) * 3;
      if (from < mouth.splitY) {
        // Inside the opened gap; its last pixel row blends into the lip.
        const edge = Math.min(1, mouth.splitY - from);
        for (let c = 0; c < 3; c++)
          frame[p + c] = (interior[c] as number) * edge + (source[(mouth.splitY * WIDTH + x) * 3 + c] as number) * (1 - edge);
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

/** A tungsten lamp at half the light (red, green, blue), and the sensor's noise (levels, uniform half-width). */
const DIM_WARM = [0.6, 0.5, 0.36];
const SENSOR_NOISE = 10;

/** A frame through JPEG at `quality` and back, by Debian's python3-pil (one process a frame: the media are made once). */
function throughJpeg(frame: Float32Array, quality: number): Float32Array {
  const script =
    "import sys, io; from PIL import Image; " +
    "im = Image.frombytes('RGB', (int(sys.argv[1]), int(sys.argv[2])), sys.stdin.buffer.read()); " +
    "buf = io.BytesIO(); im.save(buf, 'JPEG', quality=int(sys.argv[3])); " +
    "sys.stdout.buffer.write(Image.open(io.BytesIO(buf.getvalue())).convert('RGB').tobytes())";
  const out = execFileSync("/usr/bin/python3", ["-c", script, String(WIDTH), String(HEIGHT), String(quality)], {
    input: Uint8Array.from(frame, (x) => Math.round(Math.max(0, Math.min(255, x)))),
    maxBuffer: 16 << 20,
  });
  return Float32Array.from(out);
}

/** The camera's own part: the room's light and the sensor's noise, then a mirrored picture, then its compression. */
function throughCamera(frame: Float32Array, options: MediaOptions, random: () => number): Float32Array {
  const lit = roomAndMirror(frame, options, random);
  return options.jpegQuality === undefined ? lit : throughJpeg(lit, options.jpegQuality);
}

/** The room's light and the sensor's noise (in place), then a mirrored picture. */
function roomAndMirror(frame: Float32Array, options: MediaOptions, random: () => number): Float32Array {
  if (options.dimWarmNoisy) {
    for (let i = 0; i < frame.length; i++) {
      frame[i] = Math.max(0, Math.min(255, (frame[i] as number) * (DIM_WARM[i % 3] as number) + SENSOR_NOISE * (2 * random() - 1)));
    }
  }
  if (!options.mirror) return frame;
  const mirrored = new Float32Array(frame.length);
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      for (let c = 0; c < 3; c++) mirrored[(y * WIDTH + x) * 3 + c] = frame[(y * WIDTH + (WIDTH - 1 - x)) * 3 + c] as number;
    }
  }
  return mirrored;
}

/** The loop as a y4m file: each frame the photograph, tinted by the pulse (when `pulse`), mouth opened by the speech. */
async function writeVideo(
  path: string,
  photo: Float32Array,
  frames: number,
  pulseAt: (t: number) => number,
  mouthAt: (t: number) => number,
  sitting: Sitting,
  options: MediaOptions,
) {
  const skin = skinPixels(photo, sitting.face);
  const pulseDepth = options.pulseDepth ?? PULSE_DEPTH;
  let state = 362436069;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const fps = options.fps ?? FPS;
  const frame = new Float32Array(photo.length);
  const tinted = new Float32Array(photo.length);
  await writeAtomically(path, async (temporary) => {
    const file = await open(temporary, "w");
    try {
      await file.write(y4mHeader(WIDTH, HEIGHT, fps));
      for (let k = 0; k < frames; k++) {
        const t = k / fps;
        tinted.set(photo);
        const wave = pulseDepth * pulseAt(t);
        for (const p of skin)
          for (let c = 0; c < 3; c++) tinted[3 * p + c] = (photo[3 * p + c] as number) * (1 + wave * (PBV[c] as number));
        frame.set(tinted);
        openMouth(frame, tinted, sitting.mouth.maxDropPx * Math.max(0, (mouthAt(t) - 0.02) / 0.28), sitting.mouth);
        await file.write(y4mFrame({ width: WIDTH, height: HEIGHT, rgb: throughCamera(frame, options, random) }));
      }
    } finally {
      await file.close();
    }
  });
}

async function writeAudio(path: string, audio: Audio): Promise<void> {
  await writeAtomically(path, (temporary) => writeFile(temporary, encodeWav(audio)));
}

/**
 * Makes every file of the manifest in `dir` (the browser tests' media by default; a variant's under
 * dist/media/<variant>/), unless they exist and are current; returns the manifest.
 */
export async function ensureMedia(options: MediaOptions = {}, dir = join(MEDIA_DIR, mediaVariantName(options))): Promise<MediaManifest> {
  const portrait = PORTRAITS.find((p) => p.id === (options.sitter ?? "astronaut"));
  const sitting = SITTINGS[options.sitter ?? "astronaut"];
  if (!portrait || !sitting) throw new Error(`no sitter ${options.sitter}`);
  const photoFile = portrait.file;
  if (!existsSync(photoFile)) throw new Error(`${photoFile} is needed to make the test media: see scripts/media/faces.ts`);
  const generator = `${await generatorHash(photoFile)}:${mediaVariantName(options)}`;
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

  const fps = options.fps ?? FPS;
  const audio = readingAudio(fps);
  const seconds = audio.samples.length / AUDIO_RATE;
  const frames = Math.round(seconds * fps);
  const fineRate = 100;
  const envelope = rmsEnvelope(audio.samples, AUDIO_RATE, fineRate);
  const phase = heartPhase(breathPauses(envelope, fineRate), fineRate, RESTING_HEART);
  const mouth = mouthFromEnvelope(envelope, fineRate);
  const at = (series: Float64Array) => (t: number) => series[Math.min(series.length - 1, Math.round(t * fineRate))] as number;
  const photo = framePhotograph(await decodePhotograph(photoFile), sitting.crop);
  const face = options.mirror ? { ...sitting.face, cx: WIDTH - 1 - sitting.face.cx } : { ...sitting.face };

  const manifest: MediaManifest = {
    generator,
    photo: photoFile,
    fps,
    width: WIDTH,
    height: HEIGHT,
    seconds,
    bpm: Math.round(meanBpm(phase, fineRate) * 100) / 100,
    shiftS: SHIFT_S,
    reading: { video: join(dir, "reading.y4m"), audio: join(dir, "reading.wav") },
    still: { video: join(dir, "still.y4m"), audio: join(dir, "reading.wav") },
    shifted: { video: join(dir, "reading.y4m"), audio: join(dir, "shifted.wav") },
    light: { face, depth: LIGHT_DEPTH, lagS: LIGHT_LAG_S },
  };
  const pulse = at(phase);
  await writeVideo(manifest.reading.video, photo, frames, (t) => pulseWave(pulse(t)), at(mouth), sitting, options);
  await writeVideo(manifest.still.video, photo, frames, () => 0, at(mouth), sitting, options);
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
