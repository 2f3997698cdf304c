/**
 * GET or POST /functions/v1/merchant-theme-get (spec 2.9, 4.16): the published theme of one
 * surface, or the complete default theme (`customized: false`). Publishable or secret key.
 *
 * A key reads only its own merchant's theme. Any other `merchant_id` is answered exactly as an
 * unknown merchant is (the default theme), so the response never tells whether another merchant
 * exists or has a theme, and no code outside the spec's list appears.
 */
import * as v from "valibot";
import { type AppContext, createFunctionApp } from "../../shared/platform/app";
import { API_KEY_HEADER, apiKeyAuth } from "../../shared/platform/auth";
import { rpc } from "../../shared/platform/db/client";
import { ApiError } from "../../shared/platform/errors";
import { readJson } from "../../shared/platform/validation";
import { resolveTheme, type Surface, surfaces, THEME_API_VERSION, themeAssetsBaseUrl } from "../../shared/themes/theme";

const app = createFunctionApp("merchant-theme-get");

app.get("/", apiKeyAuth("publishable"), (c) => serveTheme(c, c.req.query()));
app.post("/", apiKeyAuth("publishable"), async (c) => serveTheme(c, await readJson(c)));

const merchantIdSchema = v.pipe(v.string(), v.trim(), v.nonEmpty());
const surfaceSchema = v.optional(v.picklist(surfaces), "capture");

async function serveTheme(c: AppContext, input: unknown) {
  const { merchantId, surface } = parseInput(input);
  const principal = c.var.principal!;
  const ownMerchant = merchantId.toLowerCase() === principal.merchantId.toLowerCase();
  const published = ownMerchant
    ? await rpc<Record<string, unknown> | null>(c.var.db(), "theme_get", { merchant_id: principal.merchantId, surface })
    : null;
  const { customized, tokens, theme } = resolveTheme(surface, published, themeAssetsBaseUrl(c.env.THEME_ASSETS_BASE_URL));

  c.header("cache-control", "public, max-age=60");
  c.header("vary", `${API_KEY_HEADER}, ${c.var.config.LEGACY_API_KEY_HEADER}`);
  return c.json({ version: THEME_API_VERSION, merchant_id: merchantId, surface, customized, tokens, theme });
}

/** `merchant_id` (required, non-blank) and `surface` (default `capture`), each with its own code. */
function parseInput(input: unknown): { merchantId: string; surface: Surface } {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ApiError("INVALID_INPUT", { fields: ["body"] });
  }
  const fields = input as Record<string, unknown>;
  const merchantId = v.safeParse(merchantIdSchema, fields.merchant_id);
  if (!merchantId.success) throw new ApiError("MERCHANT_ID_REQUIRED");
  const surface = v.safeParse(surfaceSchema, fields.surface ?? undefined);
  if (!surface.success) throw new ApiError("INVALID_SURFACE");
  return { merchantId: merchantId.output, surface: surface.output };
}

export default app;
