/**
 * Merchant themes (spec 2.9, 4.16): the token lists of the two surfaces, the default theme, the
 * schema a theme file must satisfy, and the resolution rule. Pure: no I/O.
 *
 * Rule 1 is read literally: a stored theme counts only when it is complete. A merchant without a
 * published theme, or whose published theme has any token NULL (or missing, or invalid), receives
 * the complete default theme with `customized: false`. Never a merge of the two.
 */
import * as v from "valibot";
import { DEFAULT_ASSETS_PATH, defaultAssetFiles, UPLOADS_DIRECTORY } from "./default-assets";

/** The interface version, served as `version` (spec 9.1); it changes only when the token set does. */
export const THEME_API_VERSION = "1.0.0-beta";

export const surfaces = ["capture", "mandate"] as const;
export type Surface = (typeof surfaces)[number];

/** The 22 capture tokens, in the spec's order (2.9). */
export const captureTokens = [
  "brand_name",
  "mode",
  "logo_wide_url",
  "logo_square_url",
  "logo_icon_url",
  "color_primary",
  "color_primary_fg",
  "color_background",
  "color_foreground",
  "color_muted",
  "color_border",
  "color_success",
  "color_danger",
  "radius_sm_px",
  "radius_md_px",
  "radius_lg_px",
  "font_heading_family",
  "font_body_family",
  "font_heading_url",
  "font_body_url",
  "font_heading_weight",
  "font_body_weight",
] as const;
type ThemeToken = (typeof captureTokens)[number];

/** Tokens the mandate surface does not have. */
const captureOnlyTokens = ["logo_icon_url", "color_success", "color_danger"] as const satisfies readonly ThemeToken[];

/** The 19 mandate tokens: the capture tokens minus the three capture-only ones, same order. */
export const mandateTokens: readonly ThemeToken[] = captureTokens.filter(
  (token) => !(captureOnlyTokens as readonly string[]).includes(token),
);

const themeTokens: Record<Surface, readonly ThemeToken[]> = { capture: captureTokens, mandate: mandateTokens };

type ThemeValues = Partial<Record<ThemeToken, string | number>>;

// ---------------------------------------------------------------------------------------------
// Token value rules (the SQL domains of supabase/migrations/*_themes.sql enforce the same ones)
// ---------------------------------------------------------------------------------------------

const HSL_TRIPLE = /^(\d{1,3}(?:\.\d{1,2})?) (\d{1,3}(?:\.\d{1,2})?)% (\d{1,3}(?:\.\d{1,2})?)%$/;

/**
 * An `H S% L%` colour triple: hue 0 to 360, saturation and lightness 0 to 100 percent, each with at
 * most two decimals, separated by single spaces.
 *
 * @example isHslTriple("212 78% 15%") // true
 * @example isHslTriple("#0a2540") // false
 */
export function isHslTriple(value: string): boolean {
  const match = HSL_TRIPLE.exec(value);
  return !!match && Number(match[1]) <= 360 && Number(match[2]) <= 100 && Number(match[3]) <= 100;
}

const HTTPS_URL = /^https:\/\/[^\s/?#]+([/?#]\S*)?$/;

/** An absolute `https://` URL of at most 2048 characters. */
export function isHttpsUrl(value: string): boolean {
  if (value.length > 2048 || !HTTPS_URL.test(value)) return false;
  try {
    return new URL(value).protocol === "https:";
  } catch {
    return false;
  }
}

const THEME_ASSET_ID = /^ta_[0-9a-f]{32}$/;

/** An uploaded theme asset's id (`ta_` and 32 hex), which a URL token may hold instead of a URL (D-526). */
export function isThemeAssetId(value: string): boolean {
  return THEME_ASSET_ID.test(value);
}

/** The tokens that name a logo (an image) and those that name a font stylesheet. */
export const logoTokens = ["logo_wide_url", "logo_square_url", "logo_icon_url"] as const;
export const fontTokens = ["font_heading_url", "font_body_url"] as const;

/**
 * The URL the service serves an uploaded asset at, below `uploadsBaseUrl` (UPLOADS_PATH under the
 * service's own base): a logo's file, or the stylesheet that declares a font's face.
 *
 * @example themeAssetUrl("font_body_url", "ta_…", "https://auth.example.com/functions/v1/merchant-theme-get/assets/u") // "…/u/….css"
 */
export function themeAssetUrl(token: string, id: string, uploadsBaseUrl: string): string {
  const file = id.slice("ta_".length);
  return `${uploadsBaseUrl}/${(fontTokens as readonly string[]).includes(token) ? `${file}.css` : file}`;
}

const CONTROL = /[\u0000-\u001f\u007f]/;
const FONT_FAMILY = /^[A-Za-z0-9 ,'"._-]{1,200}$/;

const hsl = v.pipe(v.string("must be a string"), v.check(isHslTriple, 'must be an "H S% L%" triple such as "212 78% 15%"'));
const url = v.pipe(
  v.string("must be a string"),
  v.check((value) => isHttpsUrl(value) || isThemeAssetId(value), "must be an absolute https:// URL or an uploaded asset's id (ta_…)"),
);
const integerBetween = (min: number, max: number) =>
  v.pipe(
    v.number(`must be an integer from ${min} to ${max}`),
    v.integer(`must be an integer from ${min} to ${max}`),
    v.minValue(min, `must be an integer from ${min} to ${max}`),
    v.maxValue(max, `must be an integer from ${min} to ${max}`),
  );
const fontFamily = v.pipe(
  v.string("must be a string"),
  v.check(
    (s) => FONT_FAMILY.test(s) && /[A-Za-z]/.test(s),
    "must be a font family list of letters, digits, spaces, commas, quotes, dots, hyphens and underscores (at most 200)",
  ),
);
/** A brand name as screens show it: 1 to 80 characters, without control characters or surrounding spaces. */
export function isBrandName(value: unknown): value is string {
  return typeof value === "string" && [...value].length >= 1 && [...value].length <= 80 && value === value.trim() && !CONTROL.test(value);
}

const brandName = v.pipe(
  v.string("must be a string"),
  v.check((name) => isBrandName(name), "must be 1 to 80 characters, without control characters or surrounding spaces"),
);

const tokenSchemas = {
  brand_name: brandName,
  mode: v.picklist(["light", "dark"], 'must be "light" or "dark"'),
  logo_wide_url: url,
  logo_square_url: url,
  logo_icon_url: url,
  color_primary: hsl,
  color_primary_fg: hsl,
  color_background: hsl,
  color_foreground: hsl,
  color_muted: hsl,
  color_border: hsl,
  color_success: hsl,
  color_danger: hsl,
  radius_sm_px: integerBetween(0, 64),
  radius_md_px: integerBetween(0, 64),
  radius_lg_px: integerBetween(0, 64),
  font_heading_family: fontFamily,
  font_body_family: fontFamily,
  font_heading_url: url,
  font_body_url: url,
  font_heading_weight: integerBetween(100, 900),
  font_body_weight: integerBetween(100, 900),
} satisfies Record<ThemeToken, v.GenericSchema>;

function surfaceSchema(surface: Surface) {
  const entries: v.ObjectEntries = Object.fromEntries(themeTokens[surface].map((token) => [token, tokenSchemas[token]]));
  return v.strictObject(entries, "must be a JSON object");
}

/** The schema of a complete theme of each surface: every token present and valid, nothing else. */
const themeSchemas: Record<Surface, v.GenericSchema<unknown, ThemeValues>> = {
  capture: surfaceSchema("capture") as v.GenericSchema<unknown, ThemeValues>,
  mandate: surfaceSchema("mandate") as v.GenericSchema<unknown, ThemeValues>,
};

type ThemeValidation = { ok: true; theme: ThemeValues } | { ok: false; problems: string[] };

/**
 * Validates a theme file for one surface. Each problem names its token.
 *
 * @example validateTheme("mandate", { ...tokens, color_danger: "0 84% 60%" })
 * // { ok: false, problems: ["color_danger: not a mandate token (capture only)"] }
 */
export function validateTheme(surface: Surface, data: unknown): ThemeValidation {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { ok: false, problems: ["the theme must be a JSON object of tokens"] };
  }
  const allowed = themeTokens[surface] as readonly string[];
  const unknown = Object.keys(data).filter((key) => !allowed.includes(key));
  const known = Object.fromEntries(Object.entries(data).filter(([key]) => allowed.includes(key)));
  const result = v.safeParse(themeSchemas[surface], known);
  if (result.success && unknown.length === 0) return { ok: true, theme: result.output };
  const problems = unknown.map((token) => {
    const captureOnly = (captureOnlyTokens as readonly string[]).includes(token);
    return `${token}: not a ${surface} token${captureOnly ? " (capture only)" : ""}`;
  });
  for (const issue of result.issues ?? []) {
    const token = v.getDotPath(issue);
    if (issue.input === undefined) problems.push(`${token}: missing (every ${surface} token is required)`);
    else problems.push(`${token}: ${issue.message} (got ${JSON.stringify(issue.input)})`);
  }
  return { ok: false, problems: [...new Set(problems)] };
}

/**
 * The problems of a draft, which may be incomplete: every token it holds must be valid for the
 * surface (and known to it); a token it lacks, or holds as null, is no problem until publishing.
 *
 * @example draftProblems("capture", { color_primary: "blue" }) // ['color_primary: must be an "H S% L%" triple … (got "blue")']
 */
export function draftProblems(surface: Surface, data: unknown): string[] {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return ["the theme must be a JSON object of tokens"];
  const present = Object.fromEntries(Object.entries(data).filter(([, value]) => value !== null && value !== undefined));
  const result = validateTheme(surface, present);
  return result.ok ? [] : result.problems.filter((problem) => !/: missing \(every /.test(problem));
}

// ---------------------------------------------------------------------------------------------
// Defaults and resolution
// ---------------------------------------------------------------------------------------------

/** The default sans-serif family stack (the spec omits the names): system fonts, nothing to download. */
const DEFAULT_FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';

/**
 * Where the default theme's assets are: the `THEME_ASSETS_BASE_URL` binding when it is set (a
 * deployment's own assets host: an https URL, anything else is a misconfiguration and throws),
 * otherwise the service itself, which serves them under `serviceBaseUrl` (docs/decisions.md, D-031).
 *
 * @example themeAssetsBaseUrl(undefined, "https://auth.example.com")
 * // "https://auth.example.com/functions/v1/merchant-theme-get/assets"
 */
export function themeAssetsBaseUrl(binding: unknown, serviceBaseUrl: string): string {
  if (binding === undefined || binding === null || binding === "") return `${serviceBaseUrl.replace(/\/+$/, "")}${DEFAULT_ASSETS_PATH}`;
  if (typeof binding !== "string" || !isHttpsUrl(binding)) {
    throw new Error("invalid configuration: THEME_ASSETS_BASE_URL must be an absolute https:// URL");
  }
  return binding.replace(/\/+$/, "");
}

/**
 * Where the service serves the merchants' uploaded assets: always the service itself, whatever
 * THEME_ASSETS_BASE_URL says of the default ones (D-526).
 *
 * @example themeUploadsBaseUrl("https://auth.example.com") // "https://auth.example.com/functions/v1/merchant-theme-get/assets/u"
 */
export function themeUploadsBaseUrl(serviceBaseUrl: string): string {
  return `${serviceBaseUrl.replace(/\/+$/, "")}${DEFAULT_ASSETS_PATH}/${UPLOADS_DIRECTORY}`;
}

/** The two bases a resolved theme's URLs are built on: the default assets' and the uploads'. */
export interface ThemeAssetBases {
  assets: string;
  uploads: string;
}

/** Both bases, from the configuration's THEME_ASSETS_BASE_URL and the service's base URL. */
export function themeAssetBases(binding: unknown, serviceBaseUrl: string): ThemeAssetBases {
  return { assets: themeAssetsBaseUrl(binding, serviceBaseUrl), uploads: themeUploadsBaseUrl(serviceBaseUrl) };
}

/**
 * The complete default theme of a surface (spec 2.9 defaults). The five URL tokens, `null` in the
 * spec, point at the default assets (`themeAssetsBaseUrl`), because a response never contains NULL.
 */
export function defaultTheme(surface: Surface, assetsBaseUrl: string): Record<ThemeToken, string | number> {
  const all: Record<ThemeToken, string | number> = {
    brand_name: "Human Authorisation",
    mode: "light",
    logo_wide_url: `${assetsBaseUrl}/${defaultAssetFiles.logoWide}`,
    logo_square_url: `${assetsBaseUrl}/${defaultAssetFiles.logoSquare}`,
    logo_icon_url: `${assetsBaseUrl}/${defaultAssetFiles.logoIcon}`,
    color_primary: "212 78% 15%",
    color_primary_fg: "0 0% 100%",
    color_background: "0 0% 97%",
    color_foreground: "212 78% 15%",
    color_muted: "210 10% 55%",
    color_border: "210 14% 89%",
    color_success: "152 55% 42%",
    color_danger: "0 84% 60%",
    radius_sm_px: 8,
    radius_md_px: 12,
    radius_lg_px: 20,
    font_heading_family: DEFAULT_FONT_FAMILY,
    font_body_family: DEFAULT_FONT_FAMILY,
    font_heading_url: `${assetsBaseUrl}/${defaultAssetFiles.fontStylesheet}`,
    font_body_url: `${assetsBaseUrl}/${defaultAssetFiles.fontStylesheet}`,
    font_heading_weight: 600,
    font_body_weight: 400,
  };
  return pick(all, themeTokens[surface]);
}

interface ResolvedTheme {
  customized: boolean;
  tokens: ThemeToken[];
  theme: Record<ThemeToken, string | number>;
}

/**
 * What a caller receives for one surface: the published theme when it is complete and valid
 * (`customized: true`), otherwise the complete default theme (`customized: false`). Never a merge.
 *
 * @example resolveTheme("capture", null, assetsBaseUrl, uploadsBaseUrl).customized // false
 */
export function resolveTheme(
  surface: Surface,
  published: Record<string, unknown> | null | undefined,
  assetsBaseUrl: string,
  uploadsBaseUrl: string,
): ResolvedTheme {
  const tokens = [...themeTokens[surface]];
  const stored = published ? pick(published, tokens) : null;
  const complete = stored !== null && tokens.every((token) => stored[token] !== null && stored[token] !== undefined);
  if (complete && validateTheme(surface, stored).ok) {
    const theme = Object.fromEntries(
      tokens.map((token) => {
        const value = stored[token] as string | number;
        return [token, typeof value === "string" && isThemeAssetId(value) ? themeAssetUrl(token, value, uploadsBaseUrl) : value];
      }),
    );
    return { customized: true, tokens, theme: theme as Record<ThemeToken, string | number> };
  }
  return { customized: false, tokens, theme: defaultTheme(surface, assetsBaseUrl) };
}

function pick<T>(source: Record<string, T>, keys: readonly ThemeToken[]): Record<ThemeToken, T> {
  return Object.fromEntries(keys.map((key) => [key, source[key]])) as Record<ThemeToken, T>;
}
