import { describe, expect, it } from "vitest";
import { DEFAULT_ASSETS_PATH, defaultAsset } from "../../shared/themes/default-assets";
import {
  captureTokens,
  defaultTheme,
  isHslTriple,
  isHttpsUrl,
  mandateTokens,
  resolveTheme,
  themeAssetsBaseUrl,
  validateTheme,
} from "../../shared/themes/theme";

const CAPTURE_TOKENS = [
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
];
const CAPTURE_ONLY = ["logo_icon_url", "color_success", "color_danger"];

/** Where a service at https://auth.example.org serves its default assets. */
const ASSETS = "https://auth.example.org/functions/v1/merchant-theme-get/assets";
const UPLOADS = `${ASSETS}/u`;

/** A complete, valid, non-default theme of a surface. */
function customTheme(surface: "capture" | "mandate"): Record<string, string | number> {
  const all: Record<string, string | number> = {
    ...defaultTheme("capture", ASSETS),
    brand_name: "Acme Shoes",
    mode: "dark",
    logo_wide_url: "https://cdn.acme.test/wide.svg",
    color_primary: "340 82% 52%",
    radius_md_px: 0,
    font_body_weight: 300,
  };
  return Object.fromEntries(Object.entries(all).filter(([k]) => surface === "capture" || !CAPTURE_ONLY.includes(k)));
}

describe("theme tokens", () => {
  it("has exactly 22 capture tokens and 19 mandate tokens, in the spec's order", () => {
    expect([...captureTokens]).toEqual(CAPTURE_TOKENS);
    expect([...mandateTokens]).toEqual(CAPTURE_TOKENS.filter((t) => !CAPTURE_ONLY.includes(t)));
    expect(captureTokens).toHaveLength(22);
    expect(mandateTokens).toHaveLength(19);
  });
});

describe("default theme", () => {
  it("carries the spec's defaults and no null", () => {
    const theme = defaultTheme("capture", ASSETS);
    expect(Object.keys(theme)).toEqual(CAPTURE_TOKENS);
    expect(theme).toMatchObject({
      mode: "light",
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
      font_heading_weight: 600,
      font_body_weight: 400,
    });
    expect(Object.values(theme)).not.toContain(null);
    expect(theme.font_body_family).toMatch(/sans-serif$/);
  });

  it("points the five URL tokens at the default assets, each one an asset the service serves", () => {
    const theme = defaultTheme("capture", ASSETS);
    for (const token of ["logo_wide_url", "logo_square_url", "logo_icon_url", "font_heading_url", "font_body_url"] as const) {
      const url = String(theme[token]);
      expect(url.startsWith(`${ASSETS}/`)).toBe(true);
      expect(defaultAsset(url.slice(ASSETS.length + 1)), token).toBeDefined();
    }
    const elsewhere = defaultTheme("capture", "https://static.example.net/t");
    expect(elsewhere.logo_wide_url).toBe("https://static.example.net/t/logo-wide.svg");
  });

  it("is itself a valid theme of each surface", () => {
    expect(validateTheme("capture", defaultTheme("capture", ASSETS)).ok).toBe(true);
    expect(validateTheme("mandate", defaultTheme("mandate", ASSETS)).ok).toBe(true);
    expect(Object.keys(defaultTheme("mandate", ASSETS))).toEqual([...mandateTokens]);
  });
});

describe("assets base URL", () => {
  it("is the service's own when THEME_ASSETS_BASE_URL is unset or empty, whatever the service's base URL ends with", () => {
    for (const binding of [undefined, ""]) {
      expect(themeAssetsBaseUrl(binding, "https://auth.example.org")).toBe(ASSETS);
      expect(themeAssetsBaseUrl(binding, "https://auth.example.org/")).toBe(ASSETS);
    }
    expect(themeAssetsBaseUrl(undefined, "http://127.0.0.1:8787")).toBe(`http://127.0.0.1:8787${DEFAULT_ASSETS_PATH}`);
  });

  it("is the binding when set, without a trailing slash", () => {
    expect(themeAssetsBaseUrl("https://assets.example.org/theme/", "https://auth.example.org")).toBe("https://assets.example.org/theme");
  });

  it.each(["http://assets.example.org", "assets.example.org", 42])("refuses a binding of %s", (value) => {
    expect(() => themeAssetsBaseUrl(value, "https://auth.example.org")).toThrow(/THEME_ASSETS_BASE_URL/);
  });
});

describe("default assets", () => {
  it("serves SVG logos and a stylesheet that loads nothing, and nothing else", () => {
    for (const file of ["logo-wide.svg", "logo-square.svg", "logo-icon.svg"]) {
      const asset = defaultAsset(file);
      expect(asset?.contentType).toBe("image/svg+xml");
      expect(asset?.body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      expect(asset?.body).not.toMatch(/<script|href=|url\(/i);
    }
    const css = defaultAsset("fonts/system-sans.css");
    expect(css?.contentType).toBe("text/css; charset=utf-8");
    expect(css?.body).not.toMatch(/@import|url\(/);
    for (const path of ["", "logo-wide", "../logo-wide.svg", "fonts", "toString", "__proto__", "constructor"]) {
      expect(defaultAsset(path), path).toBeUndefined();
    }
  });
});

describe("token rules", () => {
  it.each(["212 78% 15%", "0 0% 0%", "360 100% 100%", "222.2 84% 4.9%"])("accepts the triple %s", (value) => {
    expect(isHslTriple(value)).toBe(true);
  });

  it.each([
    "#0a2540",
    "212 78 15",
    "212, 78%, 15%",
    "361 50% 50%",
    "200 101% 50%",
    "200 50% 100.5%",
    "212  78% 15%",
    " 212 78% 15%",
    "hsl(212 78% 15%)",
    "1.234 5% 5%",
  ])("refuses the triple %j", (value) => {
    expect(isHslTriple(value)).toBe(false);
  });

  it("accepts only absolute https URLs", () => {
    expect(isHttpsUrl("https://cdn.acme.test/logo.svg?v=2")).toBe(true);
    for (const bad of [
      "http://cdn.acme.test/logo.svg",
      "//cdn.acme.test/x",
      "javascript:alert(1)",
      "https://",
      "https://a b",
      "logo.svg",
      `https://a.test/${"x".repeat(2048)}`,
    ]) {
      expect(isHttpsUrl(bad), bad).toBe(false);
    }
  });
});

describe("validateTheme", () => {
  it("accepts a complete custom theme of each surface", () => {
    expect(validateTheme("capture", customTheme("capture"))).toEqual({ ok: true, theme: customTheme("capture") });
    expect(validateTheme("mandate", customTheme("mandate")).ok).toBe(true);
  });

  it.each([
    ["color_primary", "#ff0000", /color_primary: must be an "H S% L%" triple/],
    ["radius_sm_px", 65, /radius_sm_px: must be an integer from 0 to 64 \(got 65\)/],
    ["radius_lg_px", -1, /radius_lg_px: must be an integer from 0 to 64/],
    ["radius_md_px", 12.5, /radius_md_px: must be an integer from 0 to 64/],
    ["font_body_weight", 950, /font_body_weight: must be an integer from 100 to 900 \(got 950\)/],
    ["font_heading_weight", 50, /font_heading_weight: must be an integer from 100 to 900/],
    ["font_heading_weight", "600", /font_heading_weight: must be an integer from 100 to 900/],
    ["logo_square_url", "not a url", /logo_square_url: must be an absolute https:\/\/ URL/],
    ["font_body_url", "http://fonts.acme.test/a.css", /font_body_url: must be an absolute https:\/\/ URL/],
    ["mode", "dim", /mode: must be "light" or "dark"/],
    ["brand_name", "", /brand_name: must be 1 to 80 characters/],
    ["font_body_family", "Inter; } body { display: none", /font_body_family: must be a font family list/],
    ["color_border", null, /color_border: must be a string \(got null\)/],
  ])("names the bad token %s = %j", (token, value, message) => {
    const result = validateTheme("capture", { ...customTheme("capture"), [token]: value });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems).toHaveLength(1);
      expect(result.problems[0]).toMatch(message);
    }
  });

  it("requires every token of the surface and names the missing ones", () => {
    const { radius_lg_px, color_muted, ...rest } = customTheme("capture");
    const result = validateTheme("capture", rest);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems.sort()).toEqual([
        "color_muted: missing (every capture token is required)",
        "radius_lg_px: missing (every capture token is required)",
      ]);
  });

  it("refuses tokens that are not in the surface", () => {
    const result = validateTheme("mandate", { ...customTheme("mandate"), color_danger: "0 84% 60%", colour_primary: "1 1% 1%" });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems.sort()).toEqual(["color_danger: not a mandate token (capture only)", "colour_primary: not a mandate token"]);
  });

  it.each([[[]], ["theme"], [null], [42]])("refuses a file that is not an object (%j)", (data) => {
    expect(validateTheme("capture", data)).toEqual({ ok: false, problems: ["the theme must be a JSON object of tokens"] });
  });
});

describe("resolveTheme (rule 1: complete published theme or the complete default, never a merge)", () => {
  it("serves the default with customized false when nothing is published", () => {
    for (const surface of ["capture", "mandate"] as const) {
      expect(resolveTheme(surface, null, ASSETS, UPLOADS)).toEqual({
        customized: false,
        tokens: [...(surface === "capture" ? captureTokens : mandateTokens)],
        theme: defaultTheme(surface, ASSETS),
      });
    }
  });

  it("serves a complete published theme as it is, with customized true", () => {
    const published = { ...customTheme("mandate") };
    const resolved = resolveTheme("mandate", published, ASSETS, UPLOADS);
    expect(resolved.customized).toBe(true);
    expect(resolved.theme).toEqual(published);
    expect(Object.keys(resolved.theme)).toEqual([...mandateTokens]);
  });

  it.each(CAPTURE_TOKENS)("serves the full default (not a merge) when %s is null", (token) => {
    const resolved = resolveTheme("capture", { ...customTheme("capture"), [token]: null }, ASSETS, UPLOADS);
    expect(resolved).toEqual({ customized: false, tokens: [...captureTokens], theme: defaultTheme("capture", ASSETS) });
  });

  it("ignores capture-only columns on the mandate surface, null or not", () => {
    const stored = { ...customTheme("mandate"), logo_icon_url: null, color_success: null, color_danger: null };
    expect(resolveTheme("mandate", stored, ASSETS, UPLOADS).customized).toBe(true);
  });

  it("serves the default when a stored value is missing or invalid", () => {
    const { brand_name, ...missing } = customTheme("capture");
    expect(resolveTheme("capture", missing, ASSETS, UPLOADS).customized).toBe(false);
    expect(resolveTheme("capture", { ...customTheme("capture"), radius_sm_px: 99 }, ASSETS, UPLOADS).customized).toBe(false);
  });

  it("uses the configured assets host for the default URLs", () => {
    const resolved = resolveTheme("capture", null, "https://static.example.net/t", UPLOADS);
    expect(resolved.theme.logo_icon_url).toBe("https://static.example.net/t/logo-icon.svg");
  });
});
