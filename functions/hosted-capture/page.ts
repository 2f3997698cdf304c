/**
 * The pages and static assets of the hosted capture screen (GET routes of `hosted-capture`): the
 * HTML is written here, the browser code, models and .wasm files come from the Worker's static
 * assets (`ASSETS`, built by scripts/local/build.ts from client/ and the model packages). Every
 * response carries a strict Content-Security-Policy: the page loads nothing from any other host.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../../shared/platform/app";
import { ApiError } from "../../shared/platform/errors";

/** What the pages may load and do: only this origin; WebAssembly compiled, never eval. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob: mediastream:",
  "style-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers of every page and asset. */
function secure(headers: Headers): void {
  headers.set("content-security-policy", CONTENT_SECURITY_POLICY);
  headers.set("x-content-type-options", "nosniff");
  headers.set("referrer-policy", "no-referrer");
  headers.set("cross-origin-resource-policy", "same-origin");
  headers.set("permissions-policy", "camera=(self), microphone=(self), geolocation=()");
}

function html(c: Context<AppEnv>, body: string): Response {
  const response = c.html(body);
  secure(response.headers);
  response.headers.set("cache-control", "no-store");
  return response;
}

/** The device check: computes a descriptor from this device's camera and microphone and shows it; posts nothing. */
function checkPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Camera and microphone check</title>
<link rel="stylesheet" href="assets/screen.css">
</head>
<body>
<main class="screen">
<h1>Camera and microphone check</h1>
<p>This page computes a presence descriptor on this device and shows it. Nothing is sent.</p>
<video id="camera" muted playsinline aria-label="Camera preview"></video>
<p id="status" role="status" aria-live="polite">Starting…</p>
<button id="start" type="button" disabled>Record</button>
<progress id="progress" max="1" value="0" hidden></progress>
<pre id="descriptor" hidden></pre>
<pre id="stats" hidden></pre>
</main>
<script type="module" src="assets/check.js"></script>
</body>
</html>
`;
}

/** Registers the pages and assets on the function's app. */
export function mountPages(app: Hono<AppEnv>): void {
  app.get("/check", (c) => html(c, checkPage()));

  app.get("/assets/*", async (c) => {
    const assets = c.env.ASSETS as { fetch(url: URL): Promise<Response> } | undefined;
    const path = c.req.path.slice(c.req.path.indexOf("/assets/") + "/assets".length);
    if (!assets || path.includes("..")) throw new ApiError("ROUTE_NOT_FOUND");
    const found = await assets.fetch(new URL(path, c.req.url));
    if (!found.ok) throw new ApiError("ROUTE_NOT_FOUND");
    const response = new Response(found.body, found);
    secure(response.headers);
    response.headers.set("cache-control", "public, max-age=3600");
    return response;
  });
}
