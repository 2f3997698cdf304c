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
import { defaultAsset } from "../../shared/themes/default-assets";
import { merchantTheme, themeAnswerSchema, themeRequestSchema } from "../../shared/themes/merchant-theme";
import { themeAssetsBaseUrl } from "../../shared/themes/theme";

const app = createFunctionApp("merchant-theme-get");

app.on(
  ["GET", "POST"],
  "/",
  documented({ summary: "A surface's published theme", success: { status: 200, description: "The theme", schema: themeAnswerSchema } }),
  apiKeyAuth("publishable"),
  input("json-or-query", themeRequestSchema),
  async (c) => {
    const { config } = c.var;
    const assetsBaseUrl = themeAssetsBaseUrl(config.THEME_ASSETS_BASE_URL, serviceBaseUrl(config, c.req.url));
    const theme = await merchantTheme(depsOf(c.var), c.var.principal, c.var.input, assetsBaseUrl);
    c.header("cache-control", "public, max-age=60");
    c.header("vary", `${API_KEY_HEADER}, ${config.LEGACY_API_KEY_HEADER}`);
    return c.json(theme);
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
    c.header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'");
    return c.body(asset.body);
  },
);

export default app;
