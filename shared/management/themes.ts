/**
 * The merchant's themes through /v1 (docs/management.md, "Themes"; docs/decisions.md, D-525,
 * D-526): a draft per surface (capture, mandate) that may be incomplete, checked against the
 * surface's tokens, previewed as the hosted screen would receive it, and published only when it is
 * complete and valid, so a merchant can never publish a theme the resolution rule would replace
 * with the default. Logos and fonts are uploaded (shared/themes/assets.ts judges the bytes) and
 * named in a theme by their id; the served theme points at the service's own URL for them.
 */
import * as v from "valibot";
import { described, instant, orNull } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { toHex } from "../lib/crypto";
import { assetKinds, assetMaxBytes, assetTypes, FONT_FAMILY_NAME, sniffAssetType, svgRefusal } from "../themes/assets";
import {
  draftProblems,
  fontTokens,
  resolveTheme,
  type Surface,
  surfaces,
  type ThemeAssetBases,
  themeAssetUrl,
  validateTheme,
} from "../themes/theme";
import { type ManagementCaller, writeOf } from "./caller";
import type { StoredTheme, ThemeAssetRow } from "./rpc";

export const themeSurfaceSchema = v.picklist(surfaces);

const exampleTheme = {
  brand_name: "Acme Pay",
  color_primary: "262 83% 58%",
  logo_square_url: "ta_6f1d0c2b9a8e4f7d8c1b2a3f4e5d6c7b",
  font_body_family: '"Acme Sans", system-ui, sans-serif',
  font_body_url: "ta_0a1b2c3d4e5f60718293a4b5c6d7e8f9",
};

/** A draft: the surface's tokens, any of them absent or null until publishing. */
export const draftThemeSchema = v.pipe(
  v.strictObject({ theme: described(v.record(v.string(), v.unknown()), "The draft's tokens (URL tokens: an uploaded asset's id).") }),
  v.examples([{ theme: exampleTheme }]),
);

/** A theme to check without storing it. */
export const validateThemeSchema = draftThemeSchema;

/** At most this many base64 characters: the largest file (a font) and its padding. */
const MAX_BASE64 = Math.ceil((Math.max(...Object.values(assetMaxBytes)) * 4) / 3) + 4;

export const uploadAssetSchema = v.pipe(
  v.strictObject({
    kind: described(v.picklist(assetKinds), "logo (PNG, JPEG, WebP or SVG, at most 128 KiB) or font (WOFF2 or WOFF, at most 160 KiB)."),
    content_type: described(v.pipe(v.string(), v.maxLength(64)), "The file's type; it must be what its bytes are."),
    data: described(v.pipe(v.string(), v.minLength(4), v.maxLength(MAX_BASE64), v.regex(/^[A-Za-z0-9+/]+={0,2}$/)), "The file, base64."),
    family: v.optional(
      described(v.pipe(v.string(), v.regex(FONT_FAMILY_NAME)), "A font's family name, as the theme's font_*_family names it (fonts only)."),
    ),
  }),
  v.examples([{ kind: "logo", content_type: "image/svg+xml", data: "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=" }]),
);

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------
const tokensSchema = described(v.record(v.string(), v.unknown()), "Each token's value as stored (an uploaded asset by its id).");

const stageSchema = v.object({
  version: described(v.number(), "How many times this stage was written (the published one: since its last publication)."),
  updated_at: described(v.string(), "When it was last written."),
  theme: tokensSchema,
  valid: described(v.boolean(), "Whether it is complete and valid, so that publishing it would serve it."),
  problems: described(v.array(v.string()), "What keeps it from being served (each names its token)."),
});

export const themeSchema = v.object({
  object: v.literal("theme"),
  surface: v.picklist(surfaces),
  draft: v.nullable(stageSchema),
  published: v.nullable(stageSchema),
});

export const themeValidationSchema = v.object({
  object: v.literal("theme_validation"),
  surface: v.picklist(surfaces),
  valid: described(v.boolean(), "Whether the theme is complete and every token valid (it could be published)."),
  problems: described(v.array(v.string()), "Each problem, naming its token."),
});

export const themePreviewSchema = v.object({
  object: v.literal("theme_preview"),
  surface: v.picklist(surfaces),
  version: described(v.number(), "The draft's version this preview is of (publish checks it has not changed)."),
  valid: v.boolean(),
  problems: v.array(v.string()),
  customized: described(v.boolean(), "false when the draft could not be served: the screen would show the default theme, which theme is."),
  theme: described(v.record(v.string(), v.unknown()), "What the hosted screen would receive were the draft published (asset ids as URLs)."),
});

export const themeAssetSchema = v.object({
  id: described(v.pipe(v.string(), v.startsWith("ta_")), "The asset's id, which a theme's URL token holds."),
  object: v.literal("theme_asset"),
  kind: v.picklist(assetKinds),
  content_type: described(v.string(), "What its bytes are."),
  family: orNull(v.string(), "A font's family name; null for a logo."),
  bytes: described(v.number(), "Its size."),
  sha256: described(v.string(), "SHA-256 of the file, hex."),
  created_at: instant("When it was uploaded."),
  url: described(v.string(), "Where the service serves it (immutable: cached for a year)."),
  stylesheet_url: orNull(v.string(), "A font's stylesheet (what a font_*_url token resolves to); null for a logo."),
});

export const themeAssetListSchema = v.object({
  object: v.literal("list"),
  data: described(v.array(themeAssetSchema), "The newest 100 assets of the merchant."),
  next_cursor: orNull(v.string(), "Always null: the list is one page."),
});

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------
function stageOf(surface: Surface, stored: StoredTheme | null) {
  if (!stored) return null;
  const result = validateTheme(surface, withoutNulls(stored.theme));
  return {
    version: stored.version,
    updated_at: new Date(stored.updated_at).toISOString(),
    theme: stored.theme,
    valid: result.ok,
    problems: result.ok ? [] : result.problems,
  };
}

function withoutNulls(theme: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(theme).filter(([, value]) => value !== null && value !== undefined));
}

/** The draft and the published theme of a surface, as stored, each with what keeps it from being served. */
export async function readThemes(deps: Deps, caller: ManagementCaller, surface: Surface) {
  const stored = await rpc(deps.sql, "management_themes_get", { merchant_id: caller.merchantId, surface });
  return { object: "theme" as const, surface, draft: stageOf(surface, stored.draft), published: stageOf(surface, stored.published) };
}

/** Checks a theme without storing it: complete and valid, or its problems. */
export function checkTheme(surface: Surface, theme: Record<string, unknown>) {
  const result = validateTheme(surface, withoutNulls(theme));
  return { object: "theme_validation" as const, surface, valid: result.ok, problems: result.ok ? [] : result.problems };
}

/**
 * Writes the draft of a surface (it replaces the draft whole). Every token it holds must be valid
 * and every asset it names the merchant's, of the token's kind (`422 theme_invalid` with `problems`).
 */
export async function draftTheme(deps: Deps, caller: ManagementCaller, surface: Surface, input: v.InferOutput<typeof draftThemeSchema>) {
  const problems = draftProblems(surface, input.theme);
  if (problems.length > 0) throw new ApiError("THEME_INVALID", { problems });
  const written = await rpc(deps.sql, "management_theme_draft", {
    ...writeOf(caller, deps.now),
    surface,
    theme: withoutNulls(input.theme),
  });
  if (written.problems) throw new ApiError("THEME_INVALID", { problems: written.problems });
  return readThemes(deps, caller, surface);
}

/** What the hosted screen would receive were the draft published (`404 not_found` without a draft). */
export async function previewTheme(deps: Deps, caller: ManagementCaller, surface: Surface, bases: ThemeAssetBases) {
  const { draft } = await rpc(deps.sql, "management_themes_get", { merchant_id: caller.merchantId, surface });
  if (!draft) throw new ApiError("not_found", { missing: "draft" });
  const checked = checkTheme(surface, draft.theme);
  const resolved = resolveTheme(surface, draft.theme, bases.assets, bases.uploads);
  return {
    object: "theme_preview" as const,
    surface,
    version: draft.version,
    valid: checked.valid,
    problems: checked.problems,
    customized: resolved.customized,
    theme: resolved.theme,
  };
}

/**
 * Publishes the draft: only a complete, valid one (`422 theme_invalid`), and only the version
 * checked here (`409 theme_draft_changed` when another draft was written meanwhile).
 */
export async function publishTheme(deps: Deps, caller: ManagementCaller, surface: Surface) {
  const { draft } = await rpc(deps.sql, "management_themes_get", { merchant_id: caller.merchantId, surface });
  if (!draft) throw new ApiError("not_found", { missing: "draft" });
  const checked = checkTheme(surface, draft.theme);
  if (!checked.valid) throw new ApiError("THEME_INVALID", { problems: checked.problems });
  await rpc(deps.sql, "management_theme_publish", { ...writeOf(caller, deps.now), surface, version: draft.version });
  return readThemes(deps, caller, surface);
}

function assetAnswer(row: ThemeAssetRow, uploadsBaseUrl: string) {
  return {
    ...row,
    url: themeAssetUrl("logo_square_url", row.id, uploadsBaseUrl),
    stylesheet_url: row.kind === "font" ? themeAssetUrl(fontTokens[0], row.id, uploadsBaseUrl) : null,
  };
}

/** `422 asset_invalid` naming why. */
const refuse = (problem: string) => new ApiError("ASSET_INVALID", { problem });

/**
 * Stores a logo or a font after judging its bytes: its type by signature (and the declared one must
 * agree), its size, an SVG by the allow-list (refused, never rewritten), a font's family name.
 */
export async function uploadAsset(
  deps: Deps,
  caller: ManagementCaller,
  input: v.InferOutput<typeof uploadAssetSchema>,
  uploadsBaseUrl: string,
) {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = Uint8Array.from(atob(input.data), (ch) => ch.charCodeAt(0));
  } catch {
    throw refuse("data is not base64");
  }
  const max = assetMaxBytes[input.kind];
  if (bytes.length > max) throw refuse(`a ${input.kind} is at most ${max} bytes (this one is ${bytes.length})`);
  const type = sniffAssetType(bytes);
  const allowed: readonly string[] = assetTypes[input.kind];
  if (!type || !allowed.includes(type)) throw refuse(`a ${input.kind} must be one of ${allowed.join(", ")}`);
  if (type !== input.content_type.toLowerCase()) throw refuse(`its bytes are ${type}, not ${input.content_type}`);
  if (type === "image/svg+xml") {
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw refuse("an SVG must be UTF-8");
    }
    const why = svgRefusal(text);
    if (why) throw refuse(`the SVG is refused: ${why}`);
  }
  if (input.kind === "font" && !input.family) throw refuse("a font needs its family name");
  if (input.kind === "logo" && input.family !== undefined) throw refuse("family is for fonts only");
  const sha256 = toHex(await crypto.subtle.digest("SHA-256", bytes));
  const row = await rpc(deps.sql, "management_theme_asset_create", {
    ...writeOf(caller, deps.now),
    kind: input.kind,
    content_type: type,
    ...(input.family ? { family: input.family } : {}),
    content_base64: input.data,
    sha256,
  });
  return assetAnswer(row, uploadsBaseUrl);
}

/** The merchant's newest 100 assets, without their content. */
export async function listAssets(deps: Deps, caller: ManagementCaller, uploadsBaseUrl: string) {
  const { data } = await rpc(deps.sql, "management_theme_assets_list", { merchant_id: caller.merchantId });
  return { object: "list" as const, data: data.map((row) => assetAnswer(row, uploadsBaseUrl)), next_cursor: null };
}
