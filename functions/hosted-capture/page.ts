/**
 * The pages and static assets of the hosted capture screen (GET routes of `hosted-capture`): the
 * HTML is written here, the browser code, models and .wasm files come from the Worker's static
 * assets (`ASSETS`, built by scripts/local/build.ts from client/ and the model packages). Every
 * response carries a strict Content-Security-Policy: the page loads nothing from any other host.
 */
import type { Context, Hono } from "hono";
import { SCREEN_PAGE_PATH } from "../../shared/contracts/hosted-screen";
import type { AppEnv } from "../../shared/edge/app";
import { assetVersion, versionedAsset } from "../../shared/edge/assets";
import { sessionPage } from "../../shared/edge/hosted-screen-page";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { contentSecurityPolicy, securePage } from "../../shared/edge/pages";

/** What the pages may load and do: only this origin; WebAssembly compiled, never eval. */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy({
  "script-src": "'self' 'wasm-unsafe-eval'",
  "worker-src": "'self'",
  "connect-src": "'self'",
  "img-src": "'self' data: blob:",
  "media-src": "'self' blob: mediastream:",
  "style-src": "'self'",
  "font-src": "'self'",
});

/** Headers of every page and asset. */
function secure(headers: Headers): void {
  securePage(headers, { csp: CONTENT_SECURITY_POLICY, permissions: "camera=(self), microphone=(self), geolocation=()" });
}

function html(c: Context<AppEnv>, body: string): Response {
  const response = c.html(body);
  secure(response.headers);
  return response;
}

/** The device check: computes a descriptor from this device's camera and microphone and shows it; posts nothing. */
function checkPage(assets: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Camera and microphone check</title>
<link rel="stylesheet" href="${assets}screen.css">
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
<script type="module" src="${assets}check.js"></script>
</body>
</html>
`;
}

const PAGE = { status: 200, description: "The page", contentType: "text/html" };
const ASSET = { status: 200, description: "The file, with its own content type", contentType: "*/*" };

/** The folder of the current version of the screen's assets, relative to the pages (D-406). */
async function assetsOf(c: Context<AppEnv>): Promise<string> {
  return `assets/${await assetVersion(c, "hosted-capture")}/`;
}

/** Registers the pages and assets on the function's app. */
export function mountPages(app: Hono<AppEnv>): void {
  app.get("/check", documented({ summary: "The device check page", success: PAGE }), noStore, async (c) =>
    html(c, checkPage(await assetsOf(c))),
  );
  app.get(
    SCREEN_PAGE_PATH,
    documented({ summary: "The hosted screen (the session token in the fragment)", success: PAGE }),
    noStore,
    async (c) => {
      const response = html(c, sessionPage(c.var.locale, await assetsOf(c)));
      response.headers.set("content-language", c.var.locale);
      response.headers.set("vary", "accept-language");
      return response;
    },
  );

  app.get("/assets/*", documented({ summary: "The screen's scripts, styles and models", success: ASSET }), async (c) => {
    const response = await versionedAsset(c, "hosted-capture", c.req.path.slice(c.req.path.indexOf("/assets/") + "/assets".length));
    secure(response.headers);
    return response;
  });
}
