/**
 * A function's static assets (its `ASSETS` binding, built by scripts/local/build.ts into
 * dist/assets/<name>/): the file at `path` below that folder, or `404 ROUTE_NOT_FOUND`. Only the
 * Worker reaches them (run_worker_first), so every asset leaves with the headers its Worker sets.
 * The binding's root holds the function's folder (`/<name>/…`), not its files: locally Miniflare
 * backs every Worker's assets with one storage directory, so all of them share dist/assets.
 */
import type { Context } from "hono";
import { ApiError } from "../kernel/errors";
import type { AppEnv } from "./app";

interface AssetsBinding {
  fetch(url: URL): Promise<Response>;
}

/** The asset of `functionName` at `path` (`/models/x.bin`), as a response whose headers the caller may change. */
export async function staticAsset(c: Context<AppEnv>, functionName: string, path: string): Promise<Response> {
  const assets = c.env.ASSETS as AssetsBinding | undefined;
  if (!assets || path.includes("..")) throw new ApiError("ROUTE_NOT_FOUND");
  const found = await assets.fetch(new URL(`/${functionName}${path}`, c.req.url));
  if (!found.ok) throw new ApiError("ROUTE_NOT_FOUND");
  return new Response(found.body, found);
}
