/**
 * GET or POST /functions/v1/merchant-theme-get (spec 2.9, 4.16): the published theme of one
 * surface, or the complete default theme (shared/themes/merchant-theme.ts). Publishable or secret
 * key; cacheable for a minute per key.
 */
import { createFunctionApp, depsOf } from "../../shared/platform/app";
import { apiKeyAuth } from "../../shared/platform/auth";
import { API_KEY_HEADER } from "../../shared/platform/authenticate";
import { input } from "../../shared/platform/input";
import { merchantTheme, themeRequestSchema } from "../../shared/themes/merchant-theme";
import { themeAssetsBaseUrl } from "../../shared/themes/theme";

const app = createFunctionApp("merchant-theme-get");

app.on(["GET", "POST"], "/", apiKeyAuth("publishable"), input("json-or-query", themeRequestSchema), async (c) => {
  const theme = await merchantTheme(depsOf(c.var), c.var.principal, c.var.input, themeAssetsBaseUrl(c.var.config.THEME_ASSETS_BASE_URL));
  c.header("cache-control", "public, max-age=60");
  c.header("vary", `${API_KEY_HEADER}, ${c.var.config.LEGACY_API_KEY_HEADER}`);
  return c.json(theme);
});

export default app;
