/**
 * merchant-theme-get (spec 2.9, 4.16): the published theme of one surface, or the complete default
 * theme (`customized: false`). A key reads only its own merchant's theme: any other `merchant_id`
 * is answered exactly as an unknown merchant is (the default theme), so the answer never tells
 * whether another merchant exists or has a theme.
 */
import * as v from "valibot";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { coded, jsonObject, requiredAs } from "../kernel/validation";
import type {} from "./rpc";
import { resolveTheme, surfaces, THEME_API_VERSION, type ThemeAssetBases } from "./theme";

/** `merchant_id` (required, non-blank: `400 MERCHANT_ID_REQUIRED`) and `surface` (default `capture`, else `400 INVALID_SURFACE`). */
export const themeRequestSchema = v.pipe(
  jsonObject,
  v.object({
    merchant_id: requiredAs(
      "MERCHANT_ID_REQUIRED",
      v.pipe(v.string(coded("MERCHANT_ID_REQUIRED")), v.trim(), v.nonEmpty(coded("MERCHANT_ID_REQUIRED"))),
    ),
    surface: v.nullish(v.picklist(surfaces, coded("INVALID_SURFACE")), "capture"),
  }),
);

export async function merchantTheme(deps: Deps, tenant: Tenant, request: v.InferOutput<typeof themeRequestSchema>, bases: ThemeAssetBases) {
  const { merchant_id: merchantId, surface } = request;
  const ownMerchant = merchantId.toLowerCase() === tenant.merchantId.toLowerCase();
  const published = ownMerchant ? await rpc(deps.sql, "theme_get", { merchant_id: tenant.merchantId, surface }) : null;
  const { customized, tokens, theme } = resolveTheme(surface, published, bases.assets, bases.uploads);
  return { version: THEME_API_VERSION, merchant_id: merchantId, surface, customized, tokens, theme };
}

/** merchant-theme-get's answer: the published theme of one surface, every token resolved. */
export const themeAnswerSchema = v.object({
  version: v.string(),
  merchant_id: v.string(),
  surface: v.picklist(["capture", "mandate"]),
  customized: described(v.boolean(), "Whether the merchant published a theme (else the default)."),
  tokens: described(v.array(v.string()), "The tokens this surface's theme has."),
  theme: described(v.record(v.string(), v.unknown()), "Each token's value."),
});
