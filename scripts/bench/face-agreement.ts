/**
 * Embedding agreement of the recognition network as the build ships it (8 bits: scripts/local/weights.ts)
 * against the weights of the npm package: `npm run bench:screen -- --agreement`.
 *
 * In Debian's Chromium (face-api's browser build, TensorFlow.js's CPU backend, both served to the
 * page from node_modules by the benchmark itself), the test face of the browser tests (the
 * astronaut photograph, scripts/media/generate.ts) is found and aligned once, then described in
 * variants a camera produces (shifted and scaled crops, mirrored, darker and brighter, noise) by both
 * weight sets. Reported: the Euclidean distance between the two embeddings of each variant (face-api
 * calls two faces the same person below 0.6), and beside it the spread of the package's own
 * embeddings across the variants, the scale a capture's variation already has.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { launchAhead } from "../../tests/browser/launch";
import { ROOT } from "../local/functions";
import { quantiseWeights, type WeightGroup } from "../local/weights";
import { GROUP_PHOTOS, PORTRAITS } from "../media/faces";
import { PHOTO } from "../media/generate";
import { median, quantile } from "./common";

const ORIGIN = "http://agreement.local";
const MODELS = join(ROOT, "node_modules", "@vladmandic", "face-api", "model");
const RECOGNITION = "face_recognition_model";

/** What the page computes: per variant, the two embeddings. */
interface Described {
  variant: string;
  package: number[];
  shipped: number[];
}

/** Runs in the page: detection and alignment once, then every variant through both networks. */
async function describeVariants(): Promise<Described[]> {
  const faceapi: any = await import(`${location.origin}/face-api.esm.js`);
  await faceapi.tf.setBackend("cpu");
  await faceapi.tf.ready();
  await faceapi.nets.tinyFaceDetector.loadFromUri("/package/");
  await faceapi.nets.faceLandmark68Net.loadFromUri("/package/");
  await faceapi.nets.faceRecognitionNet.loadFromUri("/package/");
  const shipped = new faceapi.FaceRecognitionNet();
  await shipped.loadFromUri("/shipped/");
  const image = new Image();
  image.src = "/face.png";
  await image.decode();
  const found = await faceapi
    .detectSingleFace(image, new faceapi.TinyFaceDetectorOptions({ inputSize: 416, scoreThreshold: 0.3 }))
    .withFaceLandmarks();
  if (!found) throw new Error("no face in the test photograph");
  const box = found.landmarks.align();
  const variants: [string, { dx: number; dy: number; scale: number; mirror: boolean; filter: string; noise: number }][] = [
    ["aligned", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "none", noise: 0 }],
    ["shifted left 4%", { dx: -0.04, dy: 0, scale: 1, mirror: false, filter: "none", noise: 0 }],
    ["shifted right 4%", { dx: 0.04, dy: 0, scale: 1, mirror: false, filter: "none", noise: 0 }],
    ["shifted up 4%", { dx: 0, dy: -0.04, scale: 1, mirror: false, filter: "none", noise: 0 }],
    ["8% larger", { dx: 0, dy: 0, scale: 1.08, mirror: false, filter: "none", noise: 0 }],
    ["8% smaller", { dx: 0, dy: 0, scale: 0.92, mirror: false, filter: "none", noise: 0 }],
    ["mirrored", { dx: 0, dy: 0, scale: 1, mirror: true, filter: "none", noise: 0 }],
    ["darker (60%)", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "brightness(0.6)", noise: 0 }],
    ["brighter (140%)", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "brightness(1.4)", noise: 0 }],
    ["low contrast", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "contrast(0.7)", noise: 0 }],
    ["warm light", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "sepia(0.4)", noise: 0 }],
    ["sensor noise (σ 8)", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "none", noise: 8 }],
    ["blurred", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "blur(1.5px)", noise: 0 }],
    ["grey", { dx: 0, dy: 0, scale: 1, mirror: false, filter: "grayscale(1)", noise: 0 }],
  ];
  let seed = 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const out: Described[] = [];
  for (const [variant, v] of variants) {
    const canvas = document.createElement("canvas");
    canvas.width = 150;
    canvas.height = 150;
    const context = canvas.getContext("2d")!;
    context.filter = v.filter;
    if (v.mirror) {
      context.translate(150, 0);
      context.scale(-1, 1);
    }
    const side = box.width * v.scale;
    const x = box.x + box.width / 2 - side / 2 + v.dx * box.width;
    const y = box.y + box.height / 2 - side / 2 + v.dy * box.height;
    context.drawImage(image, x, y, side, side, 0, 0, 150, 150);
    if (v.noise > 0) {
      const pixels = context.getImageData(0, 0, 150, 150);
      for (let i = 0; i < pixels.data.length; i++) {
        if (i % 4 === 3) continue;
        const gauss = Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
        pixels.data[i] = Math.max(0, Math.min(255, pixels.data[i]! + gauss * v.noise));
      }
      context.putImageData(pixels, 0, 0);
    }
    const input = faceapi.tf.browser.fromPixels(canvas);
    const a = await faceapi.nets.faceRecognitionNet.computeFaceDescriptor(input);
    const b = await shipped.computeFaceDescriptor(input);
    input.dispose();
    out.push({ variant, package: Array.from(a as Float32Array), shipped: Array.from(b as Float32Array) });
  }
  return out;
}

/** Runs in the page: every face found in each image, described by both networks (the nets are loaded by describeVariants). */
async function describeEveryFace(images: string[]): Promise<{ image: string; face: number; package: number[]; shipped: number[] }[]> {
  const faceapi: any = await import(`${location.origin}/face-api.esm.js`);
  const shipped = new faceapi.FaceRecognitionNet();
  await shipped.loadFromUri("/shipped/");
  const out: { image: string; face: number; package: number[]; shipped: number[] }[] = [];
  for (const source of images) {
    const image = new Image();
    image.src = source;
    await image.decode();
    const found = await faceapi
      .detectAllFaces(image, new faceapi.TinyFaceDetectorOptions({ inputSize: 608, scoreThreshold: 0.4 }))
      .withFaceLandmarks();
    for (const [face, detection] of found.entries()) {
      const box = detection.landmarks.align();
      const canvas = document.createElement("canvas");
      canvas.width = 150;
      canvas.height = 150;
      canvas.getContext("2d")!.drawImage(image, box.x, box.y, box.width, box.height, 0, 0, 150, 150);
      const input = faceapi.tf.browser.fromPixels(canvas);
      const a = await faceapi.nets.faceRecognitionNet.computeFaceDescriptor(input);
      const b = await shipped.computeFaceDescriptor(input);
      input.dispose();
      out.push({ image: source, face, package: Array.from(a as Float32Array), shipped: Array.from(b as Float32Array) });
    }
  }
  return out;
}

const distance = (a: number[], b: number[]) => Math.hypot(...a.map((x, i) => x - (b[i] as number)));

export async function faceAgreement(): Promise<void> {
  const manifest = JSON.parse(await readFile(join(MODELS, `${RECOGNITION}-weights_manifest.json`), "utf8")) as WeightGroup[];
  const groups = await Promise.all(
    manifest.map(async (g) => Buffer.concat(await Promise.all(g.paths.map((p) => readFile(join(MODELS, p)))))),
  );
  const shipped = quantiseWeights(manifest, groups, `${RECOGNITION}.bin`);
  const files: Record<string, { body: Buffer; type: string }> = {
    "/": { body: Buffer.from("<!doctype html><title>agreement</title>"), type: "text/html" },
    "/face-api.esm.js": {
      body: await readFile(join(ROOT, "node_modules", "@vladmandic", "face-api", "dist", "face-api.esm.js")),
      type: "text/javascript",
    },
    "/face.png": { body: await readFile(PHOTO), type: "image/png" },
    "/hopper.jpg": { body: await readFile(PORTRAITS.find((p) => p.id === "hopper")!.file), type: "image/jpeg" },
    ...Object.fromEntries(
      await Promise.all(
        GROUP_PHOTOS.map(async (file, i) => [`/group${i + 1}.jpg`, { body: await readFile(file), type: "image/jpeg" }] as const),
      ),
    ),
    [`/shipped/${RECOGNITION}-weights_manifest.json`]: { body: Buffer.from(JSON.stringify(shipped.manifest)), type: "application/json" },
    [`/shipped/${RECOGNITION}.bin`]: { body: Buffer.from(shipped.data), type: "application/octet-stream" },
  };
  for (const model of ["tiny_face_detector_model", "face_landmark_68_model", RECOGNITION]) {
    files[`/package/${model}-weights_manifest.json`] = {
      body: await readFile(join(MODELS, `${model}-weights_manifest.json`)),
      type: "application/json",
    };
    files[`/package/${model}.bin`] = { body: await readFile(join(MODELS, `${model}.bin`)), type: "application/octet-stream" };
  }
  const browser = await launchAhead();
  try {
    const page = await browser.newPage();
    await page.route(`${ORIGIN}/**`, (route) => {
      const file = files[new URL(route.request().url()).pathname];
      return file ? route.fulfill({ status: 200, body: file.body, contentType: file.type }) : route.fulfill({ status: 404 });
    });
    // tsx names the functions it compiles with a helper the page does not have.
    await page.addInitScript("window.__name = (f) => f;");
    await page.goto(`${ORIGIN}/`);
    const described = await page.evaluate(describeVariants);
    const between = described.map((d) => distance(d.package, d.shipped));
    const spread = described.slice(1).map((d) => distance(d.package, described[0]!.package));
    console.log(`\n## Embedding agreement: ${RECOGNITION}, 8-bit as shipped against the package's weights\n`);
    console.log(
      `Tensors quantised by the build: ${shipped.quantised.length} (${shipped.quantised.map((q) => q.name).join(", ")}); bytes ${groups.reduce((n, g) => n + g.length, 0)} → ${shipped.data.length}.\n`,
    );
    console.log("| variant of the test face | distance shipped ↔ package | cosine | package: distance to the aligned face |");
    console.log("|---|---|---|---|");
    described.forEach((d, i) => {
      const cosine =
        d.package.reduce((s, x, k) => s + x * (d.shipped[k] as number), 0) / (Math.hypot(...d.package) * Math.hypot(...d.shipped));
      console.log(`| ${d.variant} | ${between[i]!.toFixed(4)} | ${cosine.toFixed(6)} | ${i === 0 ? "–" : spread[i - 1]!.toFixed(4)} |`);
    });
    console.log(
      `\nShipped ↔ package: median ${median(between).toFixed(4)}, largest ${Math.max(...between).toFixed(4)}. ` +
        `The package's own spread over the variants: median ${median(spread).toFixed(4)}, 90th percentile ${quantile(spread, 0.9).toFixed(4)} (face-api's same-person threshold: 0.6).`,
    );
    const faces = await page.evaluate(describeEveryFace, ["/face.png", "/hopper.jpg", ...GROUP_PHOTOS.map((_, i) => `/group${i + 1}.jpg`)]);
    const agreement = faces.map((f) => distance(f.package, f.shipped));
    const persons: number[] = [];
    for (const a of faces) for (const b of faces) if (a.image === b.image && a.face < b.face) persons.push(distance(a.package, b.package));
    console.log(
      `\nEvery face of the two public-domain portraits and of face-api's six group photographs (${faces.length} faces): ` +
        `shipped ↔ package median ${median(agreement).toFixed(4)}, 90th percentile ${quantile(agreement, 0.9).toFixed(4)}, largest ${Math.max(...agreement).toFixed(4)}; ` +
        `two distinct persons of one photograph (package, ${persons.length} pairs): closest ${Math.min(...persons).toFixed(4)}, median ${median(persons).toFixed(4)}.`,
    );
  } finally {
    await browser.close();
  }
}
