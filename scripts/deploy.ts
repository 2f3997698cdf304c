/**
 * `npm run deploy -- <name> [--dry-run]`: builds one function's bundle and deploys it with wrangler
 * as its own Worker named after the function, with the shared settings of wrangler.toml and the
 * function's cron schedules. `--dry-run` writes what would be uploaded to dist/deploy/<name> and
 * needs neither network nor a Cloudflare account.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { cronsOf, type FunctionName, functionNames, hasAssets } from "../shared/kernel/registry";
import { assetsDirOf, buildAll, MAX_BUNDLE_BYTES, MAX_BUNDLE_LABEL } from "./local/build";
import { DIST_DIR, ROOT } from "./local/functions";

const USAGE = "usage: npm run deploy -- <function-name> [--dry-run]";

function fail(message: string, exitCode = 2): never {
  console.error(`error: ${message}\n${USAGE}`);
  process.exit(exitCode);
}

const args = process.argv.slice(2);
const dryRun = args.includes("--dry-run");
const unknownFlags = args.filter((arg) => arg.startsWith("-") && arg !== "--dry-run");
const positionals = args.filter((arg) => !arg.startsWith("-"));
if (unknownFlags.length) fail(`unknown option ${unknownFlags.join(", ")}`);
if (positionals.length !== 1) fail(positionals.length ? "give exactly one function name" : "a function name is required");

const name = positionals[0];
const names: readonly string[] = functionNames;
if (!names.includes(name)) fail(`unknown function "${name}"; functions: ${names.join(", ")}`);

const [bundle] = await buildAll([name]);
console.log(`built ${relative(ROOT, bundle.path)} (${(bundle.bytes / 1024).toFixed(1)} KiB)`);
if (bundle.bytes > MAX_BUNDLE_BYTES) fail(`${name} is over the ${MAX_BUNDLE_LABEL} limit`, 1);

/**
 * A function with static assets (the hosted screen, the resource API's reference page) deploys with
 * the shared settings plus a folder holding only its own assets folder (the Worker fetches
 * `/<name>/…`, as `npm start` serves it: shared/edge/assets.ts), bound as ASSETS and reached
 * only through the Worker (run_worker_first).
 */
function configOf(functionName: string): string {
  const shared = join(ROOT, "wrangler.toml");
  if (!hasAssets(functionName as FunctionName)) return shared;
  const config = join(DIST_DIR, "deploy", `${functionName}.wrangler.toml`);
  const root = join(DIST_DIR, "deploy", `${functionName}-assets`);
  rmSync(root, { recursive: true, force: true });
  cpSync(assetsDirOf(functionName), join(root, functionName), { recursive: true });
  const assets = `\n[assets]\ndirectory = ${JSON.stringify(root)}\nbinding = "ASSETS"\nrun_worker_first = true\n`;
  writeFileSync(config, readFileSync(shared, "utf8") + assets);
  return config;
}

const wranglerArgs = [
  "deploy",
  bundle.path,
  "--name",
  name,
  "--config",
  configOf(name),
  "--no-bundle",
  ...cronsOf(name as FunctionName).flatMap((cron) => ["--schedule", cron]),
  ...(dryRun ? ["--dry-run", "--outdir", join(DIST_DIR, "deploy", name)] : []),
];
const result = spawnSync(join(ROOT, "node_modules", ".bin", "wrangler"), wranglerArgs, {
  cwd: ROOT,
  stdio: "inherit",
  env: { WRANGLER_SEND_METRICS: "false", ...process.env },
});
if (result.error) fail(`cannot run wrangler: ${result.error.message}`, 1);
process.exit(result.status ?? 1);
