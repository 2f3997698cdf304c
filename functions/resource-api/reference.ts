/**
 * The reference page of this surface's OpenAPI document, `GET /v1/reference`: Scalar's API
 * reference (@scalar/api-reference, its standalone browser bundle and style sheet copied into this
 * Worker's static assets by scripts/local/build.ts), reading `GET /v1/openapi.json`. Nothing comes
 * from any other host: the Content-Security-Policy allows only this origin, Scalar's web fonts,
 * telemetry and agent are off, and no proxy is configured (its "try it" requests go to the service).
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../../shared/platform/app";
import { staticAsset } from "../../shared/platform/assets";
import { documented } from "../../shared/platform/openapi";

/** What the page may load and do: only this origin, no eval, no framing. */
export const REFERENCE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Scalar's settings: nothing it would fetch from its own hosts. */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  hideClientButton: true,
  showDeveloperTools: "never",
  documentDownloadType: "json",
};

/** The page; its URLs are relative to `/v1/reference`, so they follow the mount. */
const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Resource API reference</title>
<link rel="stylesheet" href="reference/style.css">
</head>
<body>
<script id="api-reference" type="application/json" data-url="openapi.json" data-configuration="${JSON.stringify(SCALAR_CONFIGURATION).replace(/"/g, "&quot;")}"></script>
<script src="reference/standalone.js"></script>
</body>
</html>
`;

/** The files of the page, as the build names them in the Worker's assets. */
export const REFERENCE_ASSETS = ["standalone.js", "style.css"] as const;

function secure(response: Response): Response {
  response.headers.set("content-security-policy", REFERENCE_CONTENT_SECURITY_POLICY);
  response.headers.set("x-content-type-options", "nosniff");
  response.headers.set("referrer-policy", "no-referrer");
  response.headers.set("cross-origin-resource-policy", "same-origin");
  return response;
}

/** Registers the page and its two assets on the app. */
export function mountReference(app: Hono<AppEnv>): void {
  app.get(
    "/reference",
    documented({
      summary: "This document's reference page",
      success: { status: 200, description: "An HTML page", contentType: "text/html" },
    }),
    (c) => {
      const response = secure(c.html(REFERENCE_PAGE));
      response.headers.set("cache-control", "public, max-age=300");
      return response;
    },
  );
  for (const file of REFERENCE_ASSETS) {
    app.get(
      `/reference/${file}`,
      documented({
        summary: `The reference page's ${file}`,
        success: { status: 200, description: file, contentType: file.endsWith(".js") ? "text/javascript" : "text/css" },
      }),
      async (c: Context<AppEnv>) => {
        const response = secure(await staticAsset(c, "resource-api", `/${file}`));
        response.headers.set("cache-control", "public, max-age=3600");
        return response;
      },
    );
  }
}
