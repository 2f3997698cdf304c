/**
 * The real faces the tests and benchmarks use, where each comes from, and face-api's descriptors
 * of them and of variants made from them (mirroring, lighting and skin tone, an occluder, scale and
 * crop, JPEG compression, sensor noise), computed in Debian's Chromium by the same bundle of
 * face-api on TensorFlow.js's WebAssembly backend that the client runs (D-385).
 *
 * Only portraits with a licence that lets anyone use them are in `PORTRAITS`. face-api's own demo
 * photographs (groups of people, shipped in the npm package, origin not stated) are used only to
 * measure how close distinct persons come (`GROUP_PHOTOS`): faces in one photograph are distinct
 * persons; faces of different photographs may be the same person, so they are never paired.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const ROOT = join(import.meta.dirname, "..", "..");
/** Where computed descriptors are kept between runs (git-ignored, as the test media). */
const CACHE_DIR = join(ROOT, "dist", "media");
const FACE_API = join(ROOT, "node_modules", "@vladmandic", "face-api");
const TFJS_WASM = join(ROOT, "node_modules", "@tensorflow", "tfjs-backend-wasm", "dist");
/** Debian's Chromium, as the browser tests launch it (tests/browser/chromium.ts), without devices. */
const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--proxy-server=127.0.0.1:9"];

/** A real portrait of one person, with its source and licence. */
export interface Portrait {
  id: string;
  person: string;
  file: string;
  source: string;
  licence: string;
  /** Never used to choose a threshold or tune the client: reported apart. */
  heldOut: boolean;
}

export const PORTRAITS: readonly Portrait[] = [
  {
    id: "astronaut",
    person: "Eileen Collins",
    file: "/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
    source: "Debian python3-skimage, skimage/data/astronaut.png (NASA portrait)",
    licence: "public domain (NASA; scikit-image: 'no known copyright restrictions')",
    heldOut: false,
  },
  {
    id: "hopper",
    person: "Grace Hopper",
    file: "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg",
    source: "Debian python3-matplotlib (matplotlib-data), mpl-data/sample_data/grace_hopper.jpg (U.S. Navy portrait)",
    licence: "public domain (work of the U.S. federal government)",
    heldOut: true,
  },
];

/** Group photographs of face-api's npm package: distinct persons within each, for measurement only. */
export const GROUP_PHOTOS: readonly string[] = [1, 2, 3, 4, 5, 6].map((n) => join(FACE_API, "demo", `sample${n}.jpg`));

/** The variants made of each portrait: a camera, a room or a person that differs. */
export const VARIANTS = ["plain", "mirror", "jpeg60", "half", "dim-warm", "darker-skin", "noise", "occluder", "crop"] as const;
export type Variant = (typeof VARIANTS)[number];

/** One face found: the image it came from, the variant, where it was and face-api's raw descriptor. */
export interface FaceDescriptor {
  image: string;
  variant: Variant;
  /** Left edge of the face in the plain (unmirrored) image, pixels: which face of a group it is. */
  x: number;
  score: number;
  descriptor: number[];
  /** Embeddings of the same aligned face by other networks, by name (and `<name>Ms`, their time), when asked. */
  others?: Record<string, number[] | number>;
}

/**
 * Another embedding network to compare with face-api's, in `dir`: a TensorFlow.js graph model fed
 * face-api's aligned box or the ArcFace crop (channels last), or an ONNX model (run by
 * onnxruntime-web) fed the ArcFace crop (112x112, five points onto InsightFace's reference,
 * channels first).
 */
export interface OtherModel {
  name: string;
  /** The model's file name in the directory (the graph model's JSON, or the .onnx file). */
  file: string;
  format?: "tfjs" | "onnx";
  /** What a graph model is fed: face-api's aligned box at its input size (the default), or the ArcFace crop. */
  crop?: "box" | "arcface";
  /** What the face's pixels (0 to 1) are multiplied by before the network. */
  scale: number;
  /** Then added to them (ONNX models: `-127.5 / 128` with `scale` `255 / 128` is ArcFace's input). */
  offset?: number;
  /** The embedding's length, to find it among a graph model's outputs (0: the first output). */
  dimension: number;
}

/** The other networks to run beside face-api: their directory, and onnxruntime-web's `dist/` for ONNX ones. */
export interface OtherModels {
  dir: string;
  models: readonly OtherModel[];
  ort?: string;
}

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".json": "application/json",
  ".bin": "application/octet-stream",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".jpg": "image/jpeg",
};

/**
 * face-api's descriptors of every face in each image and in each of `variants` of it, computed in
 * Chromium (ssdMobilenetv1 to find faces, 68 landmarks to align, the recognition net to describe).
 */
export async function describeFaces(
  files: readonly string[],
  variants: readonly Variant[] = VARIANTS,
  others: OtherModels | null = null,
): Promise<FaceDescriptor[]> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  try {
    const page = await browser.newPage();
    await page.route("http://faces.test/**", async (route) => {
      const path = decodeURIComponent(new URL(route.request().url()).pathname);
      const file = path.startsWith("/face-api/")
        ? join(FACE_API, path.slice("/face-api/".length))
        : path.startsWith("/wasm/")
          ? join(TFJS_WASM, path.slice("/wasm/".length))
          : path.startsWith("/other/") && others
            ? join(others.dir, path.slice("/other/".length))
            : path.startsWith("/ort/") && others?.ort
              ? join(others.ort, path.slice("/ort/".length))
              : path === "/page.js"
                ? join(import.meta.dirname, "faces-page.js")
                : path.startsWith("/image/")
                  ? (files[Number(path.slice("/image/".length))] ?? "")
                  : "";
      if (path === "/")
        return route.fulfill({ status: 200, body: "<!doctype html><title>faces</title>", headers: { "content-type": "text/html" } });
      if (!file) return route.fulfill({ status: 404, body: "" });
      const type = CONTENT_TYPES[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream";
      await route.fulfill({ status: 200, body: readFileSync(file), headers: { "content-type": type } });
    });
    await page.goto("http://faces.test/");
    page.on("console", (m) => process.env.FACES_DEBUG && console.error(m.text()));
    return (await page.evaluate(
      `import("/page.js").then((m) => m.describe(${JSON.stringify({ count: files.length, variants, models: others?.models ?? [] })}))`,
    )) as FaceDescriptor[];
  } finally {
    await browser.close();
  }
}

/** One real person's face as the device would send it: face-api's descriptor, L2-normalised to 6 decimals. */
export interface RealFace {
  person: string;
  variant: Variant;
  /** A public-domain portrait of `PORTRAITS` (else a face of a group photograph). */
  portrait: boolean;
  heldOut: boolean;
  embedding: number[];
}

/** A descriptor as the client's `summariseFace` makes it from one frame: divided by its norm, 6 decimals. */
const normalised = (descriptor: readonly number[]): number[] => {
  const norm = Math.hypot(...descriptor);
  return descriptor.map((x) => Math.round((x / norm) * 1e6) / 1e6);
};

/** The best-scoring face for each key of `keyOf` among `found` (on a tie, the first found). */
export function bestScoring(found: readonly FaceDescriptor[], keyOf: (f: FaceDescriptor) => string): FaceDescriptor[] {
  const best = new Map<string, FaceDescriptor>();
  for (const f of found) {
    const held = best.get(keyOf(f));
    if (!held || held.score < f.score) best.set(keyOf(f), f);
  }
  return [...best.values()];
}

/**
 * Every real person's face under `variants`, one per person and variant (a portrait's
 * best-scoring face; a group photograph's faces by their place in the plain photograph),
 * computed once in Chromium and kept in dist/media/ while the images and this code are unchanged.
 */
export async function realFaces(variants: readonly Variant[] = ["plain", "mirror"]): Promise<RealFace[]> {
  const files = [...PORTRAITS.map((p) => p.file), ...GROUP_PHOTOS];
  const hash = createHash("sha256");
  for (const file of [...files, join(import.meta.dirname, "faces.ts"), join(import.meta.dirname, "faces-page.js")])
    hash.update(readFileSync(file));
  hash.update(variants.join(","));
  const cache = join(CACHE_DIR, `faces-${hash.digest("hex").slice(0, 16)}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, "utf8")) as RealFace[];
  const found = await describeFaces(files, variants);
  const faces: RealFace[] = [];
  for (const [i, portrait] of PORTRAITS.entries()) {
    for (const best of bestScoring(
      found.filter((f) => Number(f.image) === i),
      (f) => f.variant,
    ))
      faces.push({
        person: portrait.id,
        variant: best.variant,
        portrait: true,
        heldOut: portrait.heldOut,
        embedding: normalised(best.descriptor),
      });
  }
  for (let i = PORTRAITS.length; i < files.length; i++) {
    const plain = found.filter((f) => Number(f.image) === i && f.variant === "plain");
    for (const f of found.filter((f) => Number(f.image) === i)) {
      const nearest = plain.reduce((best, p) => (Math.abs(p.x - f.x) < Math.abs(best.x - f.x) ? p : best), plain[0] as FaceDescriptor);
      const person = `photo${i - PORTRAITS.length + 1}@${nearest.x}`;
      if (faces.some((g) => g.person === person && g.variant === f.variant)) continue;
      faces.push({ person, variant: f.variant, portrait: false, heldOut: false, embedding: normalised(f.descriptor) });
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(cache, JSON.stringify(faces));
  return faces;
}
