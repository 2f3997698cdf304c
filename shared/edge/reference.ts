/**
 * The reference page of an OpenAPI document (`GET /v1/reference`, `GET /functions/v1/openapi/reference`):
 * Scalar's API reference (@scalar/api-reference, its standalone browser bundle and style sheet
 * copied into the function's static assets by scripts/local/build.ts), reading the document the
 * service serves. Nothing comes from any other host: the Content-Security-Policy allows only this
 * origin, Scalar's web fonts, telemetry and agent are off, and no proxy is configured (its "try it"
 * requests go to the service).
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "./app";
import { staticAsset } from "./assets";
import { documented } from "./openapi";

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

/** The page: its own files relative to its path (`<path>/style.css`), the document at `documentUrl`. */
function referencePage(title: string, documentUrl: string): string {
  const configuration = JSON.stringify({ ...SCALAR_CONFIGURATION, url: documentUrl })
    .replace(/&/g, "&amp;")
    .replace(/"/g, "&quot;");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="reference/style.css">
</head>
<body>
<script id="api-reference" type="application/json" data-configuration="${configuration}"></script>
<script src="reference/standalone.js"></script>
</body>
</html>
`;
}

/** The files of the page, as the build names them in the Worker's assets. */
export const REFERENCE_ASSETS = ["standalone.js", "style.css"] as const;

function secure(response: Response): Response {
  response.headers.set("content-security-policy", REFERENCE_CONTENT_SECURITY_POLICY);
  response.headers.set("x-content-type-options", "nosniff");
  response.headers.set("referrer-policy", "no-referrer");
  response.headers.set("cross-origin-resource-policy", "same-origin");
  return response;
}

interface ReferenceOptions {
  /** The function whose assets hold Scalar's files. */
  functionName: string;
  title: string;
  /** The document's absolute path on the service. */
  documentUrl: string;
}

/** Registers the page at `/reference` of `app` and its two assets below it. */
export function mountReference(app: Hono<AppEnv>, { functionName, title, documentUrl }: ReferenceOptions): void {
  const page = referencePage(title, documentUrl);
  app.get(
    "/reference",
    documented({
      summary: "This document's reference page",
      success: { status: 200, description: "An HTML page", contentType: "text/html" },
    }),
    (c) => {
      const response = secure(c.html(page));
      response.headers.set("cache-control", "public, max-age=300");
      return response;
    },
  );
  for (const file of REFERENCE_ASSETS) {
    const contentType = file.endsWith(".js") ? "text/javascript" : "text/css";
    app.get(
      `/reference/${file}`,
      documented({ summary: `The reference page's ${file}`, success: { status: 200, description: file, contentType } }),
      async (c: Context<AppEnv>) => {
        const response = secure(await staticAsset(c, functionName, `/${file}`));
        response.headers.set("cache-control", "public, max-age=3600");
        return response;
      },
    );
  }
}
