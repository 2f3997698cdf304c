/**
 * GET or POST /functions/v1/merchant-theme-get (spec 2.9, 4.16): the published theme of one
 * surface, or the complete default theme (shared/themes/merchant-theme.ts). Publishable or secret
 * key; cacheable for a minute per key. GET /functions/v1/merchant-theme-get/assets/<file> serves
 * the default theme's logos and font stylesheet, with no key: pages load them as images and
 * stylesheets (shared/themes/default-assets.ts).
 */
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { API_KEY_HEADER } from "../../shared/kernel/authenticate";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { ApiError } from "../../shared/kernel/errors";
import { defaultAsset, UPLOADS_DIRECTORY } from "../../shared/themes/default-assets";
import { merchantTheme, themeAnswerSchema, themeRequestSchema } from "../../shared/themes/merchant-theme";
import { themeAssetBases } from "../../shared/themes/theme";
import { uploadedAsset } from "../../shared/themes/uploads";

const app = createFunctionApp("merchant-theme-get");

app.on(
  ["GET", "POST"],
  "/",
  documented({ summary: "A surface's published theme", success: { status: 200, description: "The theme", schema: themeAnswerSchema } }),
  apiKeyAuth("publishable"),
  input("json-or-query", themeRequestSchema),
  async (c) => {
    const { config } = c.var;
    const bases = themeAssetBases(config.THEME_ASSETS_BASE_URL, serviceBaseUrl(config, c.req.url));
    const theme = await merchantTheme(depsOf(c.var), c.var.principal, c.var.input, bases);
    c.header("cache-control", "public, max-age=60");
    c.header("vary", `${API_KEY_HEADER}, ${config.LEGACY_API_KEY_HEADER}`);
    return c.json(theme);
  },
);

/** A served asset may run nothing and load nothing when opened on its own (an SVG is a document). */
const ASSET_CSP = "default-src 'none'; style-src 'unsafe-inline'";

app.get(
  `/assets/${UPLOADS_DIRECTORY}/:file{[0-9a-f]{32}(\\.css)?}`,
  documented({
    summary: "A merchant's uploaded logo or font",
    description:
      "Served by the service from its own origin, immutable (its URL never names other bytes): a logo, a font file, or a font's stylesheet (<id>.css).",
    success: { status: 200, description: "The file", contentType: "*/*" },
  }),
  async (c) => {
    const asset = await uploadedAsset(depsOf(c.var), c.req.param("file"));
    if (!asset) throw new ApiError("ROUTE_NOT_FOUND");
    c.header("content-type", asset.contentType);
    c.header("cache-control", "public, max-age=31536000, immutable");
    c.header("x-content-type-options", "nosniff");
    c.header("cross-origin-resource-policy", "same-origin");
    c.header("content-security-policy", ASSET_CSP);
    return typeof asset.body === "string" ? c.body(asset.body) : c.body(asset.body);
  },
);

app.get(
  "/assets/:path{.+}",
  documented({ summary: "The default theme's logos", success: { status: 200, description: "The image", contentType: "image/*" } }),
  (c) => {
    const asset = defaultAsset(c.req.param("path"));
    if (!asset) throw new ApiError("ROUTE_NOT_FOUND");
    c.header("content-type", asset.contentType);
    c.header("cache-control", "public, max-age=86400");
    c.header("x-content-type-options", "nosniff");
    // An SVG opened on its own is a document: it may run nothing and load nothing.
    c.header("content-security-policy", ASSET_CSP);
    return c.body(asset.body);
  },
);

export default app;
