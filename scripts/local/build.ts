import { mkdir, rename, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { functionNames } from "../../shared/platform/registry";
import { DIST_DIR, FUNCTIONS_DIR, ROOT } from "./functions";

export const MAX_BUNDLE_BYTES = 1024 * 1024;

interface BundleInfo {
  name: string;
  path: string;
  bytes: number;
}

/**
 * Bundles one entry for workerd: ESM, minified, Node built-ins left to nodejs_compat. The file is
 * replaced atomically (write, then rename), so a server or deploy reading it while another build
 * runs never sees a half-written bundle.
 */
async function bundle(entry: string, outfile: string): Promise<void> {
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

/** Builds every function into its own bundle (`<outDir>/functions/<name>.js`) plus the local router. */
export async function buildAll(names: readonly string[] = functionNames, outDir = DIST_DIR): Promise<BundleInfo[]> {
  const bundles = await Promise.all(
    names.map(async (name) => {
      const path = join(outDir, "functions", `${name}.js`);
      await bundle(join(FUNCTIONS_DIR, name, "index.ts"), path);
      return { name, path, bytes: (await stat(path)).size };
    }),
  );
  await bundle(join(ROOT, "scripts", "local", "router.ts"), join(outDir, "router.js"));
  return bundles;
}
