import { copyFile, mkdir, readdir, rename, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { FUNCTION_API_DOCUMENT_FILE } from "../../functions/openapi/file";
import { type FunctionName, functionNames, hasAssets } from "../../shared/kernel/registry";
import { functionApiDocument } from "./function-api-document";
import { DIST_DIR, FUNCTIONS_DIR, ROOT } from "./functions";

export const MAX_BUNDLE_BYTES = 1024 * 1024;

interface BundleInfo {
  name: string;
  path: string;
  bytes: number;
  /** Total size of the function's static assets, when it serves any. */
  assetBytes?: number;
}

/**
 * Bundles one entry for workerd: ESM, minified, Node built-ins left to nodejs_compat. The file is
 * replaced atomically (write, then rename), so a server or deploy reading it while another build
 * runs never sees a half-written bundle.
 */
export async function bundle(entry: string, outfile: string): Promise<void> {
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    minify: true,
    keepNames: true,
    sourcemap: false,
    logLevel: "warning",
    write: false,
  });
  await mkdir(dirname(outfile), { recursive: true });
  for (const file of result.outputFiles) {
    const temporary = `${file.path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(temporary, file.contents);
    await rename(temporary, file.path);
  }
}

/** The face-api networks the browser client runs (weights manifest and shard of each). */
const FACE_MODELS = ["tiny_face_detector_model", "face_landmark_68_model", "face_recognition_model"];
/** The TensorFlow.js WebAssembly binaries it may pick: with SIMD, and the plain one for browsers without. */
const TFJS_WASM = ["tfjs-backend-wasm-simd.wasm", "tfjs-backend-wasm.wasm"];

/** The folder of every function's static assets, each in its own folder below. */
export function assetsRootOf(outDir = DIST_DIR): string {
  return join(outDir, "assets");
}

/** Where a function's static assets are built (`hasAssets` in the registry). */
export function assetsDirOf(name: string, outDir = DIST_DIR): string {
  return join(assetsRootOf(outDir), name);
}

/**
 * The hosted capture screen's static assets: the browser client bundled for the browser (the
 * pages, the face worker, the microphone's AudioWorklet), its style sheet, and the model weights
 * and .wasm files copied from their npm packages, so the page fetches them from the service.
 */
async function buildCaptureAssets(dir: string): Promise<void> {
  await mkdir(join(dir, "models"), { recursive: true });
  await mkdir(join(dir, "wasm"), { recursive: true });
  await build({
    entryPoints: {
      check: join(ROOT, "client", "pages", "check.ts"),
      session: join(ROOT, "client", "pages", "session.ts"),
      "face-worker": join(ROOT, "client", "capture", "face-worker.ts"),
      "audio-worklet": join(ROOT, "client", "capture", "audio-worklet.ts"),
    },
    outdir: dir,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    sourcemap: false,
    logLevel: "warning",
  });
  const copies: [string, string][] = [[join(ROOT, "client", "pages", "screen.css"), join(dir, "screen.css")]];
  const models = join(ROOT, "node_modules", "@vladmandic", "face-api", "model");
  for (const model of FACE_MODELS) {
    for (const file of [`${model}-weights_manifest.json`, `${model}.bin`]) copies.push([join(models, file), join(dir, "models", file)]);
  }
  const wasm = join(ROOT, "node_modules", "@tensorflow", "tfjs-backend-wasm", "dist");
  for (const file of TFJS_WASM) copies.push([join(wasm, file), join(dir, "wasm", file)]);
  await Promise.all(copies.map(([from, to]) => copyFile(from, to)));
}

/**
 * A reference page's assets (`GET /v1/reference`, `GET /functions/v1/openapi/reference`:
 * shared/edge/reference.ts): Scalar's standalone browser bundle and its style sheet, copied
 * from @scalar/api-reference, so the page loads them from the service (3.5 MB: an asset, never the
 * Worker's bundle).
 */
async function buildReferenceAssets(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const scalar = join(ROOT, "node_modules", "@scalar", "api-reference", "dist");
  await copyFile(join(scalar, "browser", "standalone.js"), join(dir, "standalone.js"));
  await copyFile(join(scalar, "style.css"), join(dir, "style.css"));
}

/** The function API's OpenAPI document, built from every function's routes (`GET /functions/v1/openapi`), and its reference page's assets. */
async function buildFunctionApiDocument(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const document = await functionApiDocument();
  await writeFile(join(dir, FUNCTION_API_DOCUMENT_FILE), JSON.stringify(document));
  await buildReferenceAssets(dir);
}

/** How each function that serves static assets (`hasAssets`) builds them. */
const ASSET_BUILDERS: Record<string, (dir: string) => Promise<void>> = {
  "hosted-capture": buildCaptureAssets,
  openapi: buildFunctionApiDocument,
  "resource-api": buildReferenceAssets,
};

/** Builds a function's static assets into `dir`; answers their total size. */
async function buildAssets(name: string, dir: string): Promise<number> {
  const builder = ASSET_BUILDERS[name];
  if (!builder) throw new Error(`${name} serves static assets, but scripts/local/build.ts has no builder for them`);
  await builder(dir);
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return bytes;
}

/**
 * Builds every function into its own bundle (`<outDir>/functions/<name>.js`), the static assets of
 * those that serve them (`<outDir>/assets/<name>/`), plus the local router.
 */
export async function buildAll(names: readonly string[] = functionNames, outDir = DIST_DIR): Promise<BundleInfo[]> {
  const bundles = await Promise.all(
    names.map(async (name) => {
      const path = join(outDir, "functions", `${name}.js`);
      await bundle(join(FUNCTIONS_DIR, name, "index.ts"), path);
      const assets = hasAssets(name as FunctionName) ? await buildAssets(name, assetsDirOf(name, outDir)) : undefined;
      return { name, path, bytes: (await stat(path)).size, ...(assets === undefined ? {} : { assetBytes: assets }) };
    }),
  );
  await bundle(join(ROOT, "scripts", "local", "router.ts"), join(outDir, "router.js"));
  return bundles;
}
