import { createHash } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { build, version as esbuildVersion } from "esbuild";
import { FUNCTION_API_DOCUMENT_FILE } from "../../functions/openapi/file";
import { ASSET_VERSION_FILE, type AssetVersion, EDGE_COMPRESSED } from "../../shared/edge/assets";
import { type FunctionName, functionNames, hasAssets } from "../../shared/kernel/registry";
import { functionApiDocument } from "./function-api-document";
import { DIST_DIR, FUNCTIONS_DIR, ROOT } from "./functions";
import { quantiseWeights, type WeightGroup } from "./weights";

/**
 * A function's bundle is held under 1.5 MiB as built (minified, uncompressed): about 330 KiB gzipped
 * at that size, a ninth of the 3 MB (compressed) a Worker may be on Cloudflare's free plan (D-351).
 */
export const MAX_BUNDLE_BYTES = 1.5 * 1024 * 1024;
/** The limit as the build and deploy say it. */
export const MAX_BUNDLE_LABEL = "1.5 MiB";

export interface BuildOptions {
  /** Source maps beside the functions' bundles (a CPU profile of workerd maps its samples back to the sources: bench:consume). */
  sourcemaps?: boolean;
}

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
 * runs never sees a half-written bundle. An entry built before from the same files (every file
 * esbuild read, by content) is taken from the bundle cache instead (`cachedBundle`).
 */
export async function bundle(entry: string, outfile: string, options: BuildOptions = {}): Promise<"built" | "cached"> {
  const cacheFile = await bundleCacheFileOf(entry, outfile, options);
  const cached = cacheFile && (await cachedBundle(cacheFile));
  if (cached) {
    await mkdir(dirname(outfile), { recursive: true });
    await Promise.all(Object.entries(cached).map(([name, contents]) => replaceFile(join(dirname(outfile), name), contents)));
    return "cached";
  }
  const result = await build({
    entryPoints: [entry],
    outfile,
    absWorkingDir: ROOT,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    minify: true,
    keepNames: true,
    sourcemap: options.sourcemaps ? "linked" : false,
    logLevel: "warning",
    metafile: true,
    write: false,
  });
  await mkdir(dirname(outfile), { recursive: true });
  await Promise.all(result.outputFiles.map((file) => replaceFile(file.path, file.contents)));
  if (cacheFile) {
    const files = Object.fromEntries(result.outputFiles.map((file) => [basename(file.path), file.text]));
    await storeBundle(cacheFile, Object.keys(result.metafile.inputs), files);
  }
  return "built";
}

/** Writes `path` whole or not at all: a temporary file beside it, renamed over it. */
async function replaceFile(path: string, contents: string | Uint8Array): Promise<void> {
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, contents);
  await rename(temporary, path);
}

/**
 * Bundles already built, one file per entry and way of building it: the SHA-256 of every file
 * esbuild read for it, and the output files. Every server start (npm start, each test file's own
 * service) bundles some thirty functions into a folder of its own, about fifteen seconds of CPU on
 * these machines and minutes when seven start at once; a bundle whose files are all unchanged is
 * the same bundle, so it is copied instead.
 */
const BUNDLE_CACHE = join(DIST_DIR, "cache", "bundles");

/**
 * What else decides a bundle besides the files esbuild reports reading: this file (the build's
 * options), esbuild's version, and the files that steer resolution and transpiling without being
 * inputs (the lock file for every package.json under node_modules, tsconfig.json).
 */
let recipe: Promise<string> | undefined;
function bundleRecipe(): Promise<string> {
  recipe ??= (async () => {
    const digest = createHash("sha256").update(esbuildVersion);
    for (const file of [fileURLToPath(import.meta.url), join(ROOT, "package-lock.json"), join(ROOT, "tsconfig.json")]) {
      digest
        .update(relative(ROOT, file))
        .update("\0")
        .update(await readFile(file))
        .update("\0");
    }
    return digest.digest("hex");
  })();
  return recipe;
}

/**
 * The cache file of `entry` built into `outfile` with `options`, or none for an entry outside the
 * repository (a test's own worker in a temporary folder: its next run has another name anyway). A
 * source map names the sources relative to the bundle's folder, so with one the folder is part of
 * the key.
 */
async function bundleCacheFileOf(entry: string, outfile: string, options: BuildOptions): Promise<string | null> {
  const source = relative(ROOT, entry);
  if (source.startsWith("..")) return null;
  const way = { source, file: basename(outfile), sourcemaps: options.sourcemaps ? relative(ROOT, dirname(outfile)) : false };
  const key = createHash("sha256")
    .update(await bundleRecipe())
    .update(JSON.stringify(way))
    .digest("hex");
  return join(BUNDLE_CACHE, `${key}.json`);
}

interface CachedBundle {
  /** Every file esbuild read, relative to the repository, and its SHA-256. */
  inputs: Record<string, string>;
  /** The output files by name (the bundle, its source map). */
  files: Record<string, string>;
}

/**
 * The SHA-256 of a file's content, or null when it cannot be read; kept while its status-change time
 * stands (every write sets it, and unlike the modification time no program can set it back), so the
 * thirty bundles of one start read their shared files once.
 */
const fileDigests = new Map<string, { ino: number; ctimeMs: number; digest: string }>();
async function fileDigest(path: string): Promise<string | null> {
  try {
    const { ino, ctimeMs } = await stat(path);
    const known = fileDigests.get(path);
    if (known && known.ino === ino && known.ctimeMs === ctimeMs) return known.digest;
    const digest = createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
    fileDigests.set(path, { ino, ctimeMs, digest });
    return digest;
  } catch {
    return null;
  }
}

/** The cached output files when every input is unchanged, else null. */
async function cachedBundle(cacheFile: string): Promise<Record<string, string> | null> {
  let cached: CachedBundle;
  try {
    cached = JSON.parse(await readFile(cacheFile, "utf8"));
  } catch {
    return null;
  }
  const current = await Promise.all(
    Object.entries(cached.inputs).map(async ([input, digest]) => (await fileDigest(join(ROOT, input))) === digest),
  );
  return current.every(Boolean) ? cached.files : null;
}

/** Records a bundle just built; an input esbuild names that is no file (a namespace of a plugin) keeps it out of the cache. */
async function storeBundle(cacheFile: string, inputs: string[], files: Record<string, string>): Promise<void> {
  const digests: Record<string, string> = {};
  for (const input of inputs) {
    const digest = await fileDigest(join(ROOT, input));
    if (digest === null) return;
    digests[input] = digest;
  }
  await mkdir(BUNDLE_CACHE, { recursive: true });
  await replaceFile(cacheFile, JSON.stringify({ inputs: digests, files } satisfies CachedBundle));
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
 * pages, the face worker, the microphone's AudioWorklet), its style sheet, the model weights in 8
 * bits (scripts/local/weights.ts) and the .wasm files from their npm packages, so the page fetches
 * them from the service, as one versioned folder (`buildVersioned`).
 */
async function buildCaptureAssets(dir: string): Promise<void> {
  await buildVersioned(dir, async (staging) => {
    await mkdir(join(staging, "models"), { recursive: true });
    await mkdir(join(staging, "wasm"), { recursive: true });
    await build({
      ...BROWSER_BUILD,
      entryPoints: {
        check: join(ROOT, "client", "pages", "check.ts"),
        session: join(ROOT, "client", "pages", "session.ts"),
        "face-worker": join(ROOT, "client", "capture", "face-worker.ts"),
        "audio-worklet": join(ROOT, "client", "capture", "audio-worklet.ts"),
      },
      outdir: staging,
    });
    const models = join(ROOT, "node_modules", "@vladmandic", "face-api", "model");
    const wasm = join(ROOT, "node_modules", "@tensorflow", "tfjs-backend-wasm", "dist");
    await Promise.all([
      copyFile(join(ROOT, "client", "pages", "screen.css"), join(staging, "screen.css")),
      ...FACE_MODELS.map((model) => writeModel(models, model, join(staging, "models"))),
      ...TFJS_WASM.map((file) => copyFile(join(wasm, file), join(staging, "wasm", file))),
    ]);
  });
}

/**
 * The person's page's static assets (functions/me/page.ts): its script and its style sheet, which
 * takes the hosted screen's palette, light and dark, and its buttons by importing screen.css, so
 * the two pages share one set of colours.
 */
async function buildMeAssets(dir: string): Promise<void> {
  await buildVersioned(dir, async (staging) => {
    await build({
      ...BROWSER_BUILD,
      entryPoints: { me: join(ROOT, "client", "me", "page.ts"), "me-style": join(ROOT, "client", "me", "me.css") },
      outdir: staging,
      entryNames: "[name]",
    });
    await rename(join(staging, "me-style.css"), join(staging, "me.css"));
  });
}

/** How a page's scripts and styles are built for the browser: bundled ES modules, minified, no source maps. */
const BROWSER_BUILD = {
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  sourcemap: false,
  logLevel: "warning",
} as const;

/**
 * A function's static assets as `fill` writes them, in a folder named by their content
 * (`<dir>/<version>/`, and `<dir>/version.json` names it), so a browser may keep them for good
 * (`immutable`: shared/edge/assets.ts); the files the edge does not compress (the weights) get a
 * Brotli and a gzip copy beside them (D-406).
 */
async function buildVersioned(dir: string, fill: (staging: string) => Promise<void>): Promise<void> {
  const staging = join(dir, `.staging-${process.pid}-${Math.random().toString(36).slice(2)}`);
  await mkdir(staging, { recursive: true });
  await fill(staging);
  const files = (await readdir(staging, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(staging, join(entry.parentPath, entry.name)))
    .sort();
  const digest = createHash("sha256");
  for (const file of files)
    digest
      .update(file)
      .update("\0")
      .update(await readFile(join(staging, file)))
      .update("\0");
  const version = digest.digest("hex").slice(0, 16);
  // The edge compresses scripts, styles, JSON and .wasm itself (EDGE_COMPRESSED); the weights get copies made here.
  await Promise.all(
    files.filter((file) => !EDGE_COMPRESSED.has(file.slice(file.lastIndexOf(".") + 1))).map((file) => writeCompressed(join(staging, file))),
  );
  // Swapped in whole: a server reading the folder while another build runs sees one version or the other.
  const target = join(dir, version);
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
  await replaceFile(join(dir, ASSET_VERSION_FILE), JSON.stringify({ version } satisfies AssetVersion));
  // Earlier versions go: only the one version.json names is served.
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== version && !entry.name.startsWith(".staging-")) {
      await rm(join(dir, entry.name), { recursive: true, force: true });
    }
  }
}

/** A face-api network's weights manifest and shards from `from`, its float tensors in 8 bits, into `to` as `<model>-weights_manifest.json` and `<model>.bin`. */
async function writeModel(from: string, model: string, to: string): Promise<void> {
  const manifest = JSON.parse(await readFile(join(from, `${model}-weights_manifest.json`), "utf8")) as WeightGroup[];
  const groups = await Promise.all(
    manifest.map(async (group) => Buffer.concat(await Promise.all(group.paths.map((path) => readFile(join(from, path)))))),
  );
  const quantised = quantiseWeights(manifest, groups, `${model}.bin`);
  await writeFile(join(to, `${model}-weights_manifest.json`), JSON.stringify(quantised.manifest));
  await writeFile(join(to, `${model}.bin`), quantised.data);
}

/** Compressed copies already made, by the SHA-256 of what they compress: Brotli at quality 11 takes seconds a megabyte, and every server start builds. */
const COMPRESSED_CACHE = join(DIST_DIR, "cache", "compressed");

/** Writes `<file>.br` (Brotli, quality 11) and `<file>.gz` (gzip, level 9) beside `file`. */
async function writeCompressed(file: string): Promise<void> {
  const data = await readFile(file);
  const key = createHash("sha256").update(data).digest("hex");
  await mkdir(COMPRESSED_CACHE, { recursive: true });
  const compress = {
    br: (bytes: Buffer) =>
      promisify(brotliCompress)(bytes, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
      }),
    gz: (bytes: Buffer) => promisify(gzip)(bytes, { level: 9 }),
  };
  await Promise.all(
    (["br", "gz"] as const).map(async (suffix) => {
      const cached = join(COMPRESSED_CACHE, `${key}.${suffix}`);
      const encoded = await readFile(cached).catch(async () => {
        const made = await compress[suffix](data);
        await replaceFile(cached, made);
        return made;
      });
      await writeFile(`${file}.${suffix}`, encoded);
    }),
  );
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
  me: buildMeAssets,
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
    // The compressed copies are not counted: they are other encodings of the same files.
    if (entry.isFile() && !/\.(br|gz)$/.test(entry.name)) bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return bytes;
}

/**
 * Builds every function into its own bundle (`<outDir>/functions/<name>.js`), the static assets of
 * those that serve them (`<outDir>/assets/<name>/`), plus the local router.
 */
export async function buildAll(
  names: readonly string[] = functionNames,
  outDir = DIST_DIR,
  options: BuildOptions = {},
): Promise<BundleInfo[]> {
  const bundles = await Promise.all(
    names.map(async (name) => {
      const path = join(outDir, "functions", `${name}.js`);
      await bundle(join(FUNCTIONS_DIR, name, "index.ts"), path, options);
      const assets = hasAssets(name as FunctionName) ? await buildAssets(name, assetsDirOf(name, outDir)) : undefined;
      return { name, path, bytes: (await stat(path)).size, ...(assets === undefined ? {} : { assetBytes: assets }) };
    }),
  );
  await bundle(join(ROOT, "scripts", "local", "router.ts"), join(outDir, "router.js"));
  return bundles;
}
