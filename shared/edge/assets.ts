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

/** The file in a function's assets folder naming the folder of the current version (scripts/local/build.ts). */
export const ASSET_VERSION_FILE = "version.json";

/** What ASSET_VERSION_FILE holds. */
export interface AssetVersion {
  /** The folder's name: the first 16 hex digits of the SHA-256 of its files. */
  version: string;
}

/** How long a versioned file may be kept: a year, the longest HTTP caches honour, and never revalidated. */
export const IMMUTABLE = "public, max-age=31536000, immutable";
/** A file asked for by its plain name: the current version's, revalidated by the browser before each use. */
export const REVALIDATE = "no-cache";

/**
 * Extensions whose content types the edge compresses itself, for each client as it accepts
 * (Cloudflare's list of compressed types; Miniflare does the same locally): the Worker sends them
 * plain. Every other file (the model weights, `application/octet-stream`) the edge sends as it
 * gets it, so the Worker sends the build's compressed copy.
 */
export const EDGE_COMPRESSED = new Set(["js", "css", "json", "wasm"]);

/** Content types of versioned assets by extension (compressed copies end in .br and .gz). */
const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  wasm: "application/wasm",
  bin: "application/octet-stream",
};

const VERSION_SEGMENT = /^\/([0-9a-f]{16})(\/.+)$/;

/** The current version of each function's assets, read once per isolate (a deploy starts new ones). */
const versions = new Map<string, Promise<string>>();

/** The current version folder of `functionName`'s assets. */
export function assetVersion(c: Context<AppEnv>, functionName: string): Promise<string> {
  let version = versions.get(functionName);
  if (!version) {
    version = staticAsset(c, functionName, `/${ASSET_VERSION_FILE}`)
      .then((response) => response.json() as Promise<AssetVersion>)
      .then((found) => found.version);
    versions.set(functionName, version);
    version.catch(() => versions.delete(functionName));
  }
  return version;
}

/** The encoding to send a client that accepts `accepted` (`Accept-Encoding`): Brotli, else gzip, else none. */
export function chooseEncoding(accepted: string | undefined): "br" | "gzip" | null {
  const offered = new Map(
    (accepted ?? "").split(",").map((part) => {
      const [name = "", ...params] = part.trim().toLowerCase().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      return [name.trim(), q ? Number(q.slice(2)) : 1] as const;
    }),
  );
  if ((offered.get("br") ?? 0) > 0) return "br";
  if ((offered.get("gzip") ?? 0) > 0) return "gzip";
  return null;
}

/**
 * A file of a function's versioned assets (D-406): `/<version>/<file>` is kept by browsers for good
 * (`immutable`; a version that is not the current one is not found), `/<file>` is the current
 * version's file under its plain name, revalidated before each use. Scripts, styles, JSON and
 * .wasm leave plain for the edge to compress (EDGE_COMPRESSED); the rest as the build compressed it
 * (Brotli or gzip, whichever the client accepts: `encodeBody: "manual"` passes the bytes through).
 */
export async function versionedAsset(c: Context<AppEnv>, functionName: string, path: string): Promise<Response> {
  const current = await assetVersion(c, functionName);
  const versioned = VERSION_SEGMENT.exec(path);
  if (versioned && versioned[1] !== current) throw new ApiError("ROUTE_NOT_FOUND");
  const file = versioned ? versioned[2]! : path;
  const extension = file.slice(file.lastIndexOf(".") + 1);
  const type = CONTENT_TYPES[extension];
  if (!type) throw new ApiError("ROUTE_NOT_FOUND");
  // The client's own Accept-Encoding: the edge (and Miniflare, as it) hands the Worker "br, gzip" whatever the client sent.
  const cf = (c.req.raw as { cf?: { clientAcceptEncoding?: string } }).cf;
  const encoding = EDGE_COMPRESSED.has(extension) ? null : chooseEncoding(cf?.clientAcceptEncoding ?? c.req.header("accept-encoding"));
  const suffix = encoding === "br" ? ".br" : encoding === "gzip" ? ".gz" : "";
  const found = await staticAsset(c, functionName, `/${current}${file}${suffix}`);
  const headers = new Headers({ "content-type": type, vary: "accept-encoding", "cache-control": versioned ? IMMUTABLE : REVALIDATE });
  if (encoding) headers.set("content-encoding", encoding);
  const etag = found.headers.get("etag");
  if (etag) headers.set("etag", etag);
  return new Response(found.body, { status: 200, headers, encodeBody: "manual" } as ResponseInit);
}
