/**
 * The merchant's capture theme (merchant-theme-get's tokens, as `/boot` answers them) as the
 * screen's CSS custom properties, for the person's colour scheme. A theme is drawn for one `mode`;
 * for the other scheme the screen derives its counterpart (lightness mirrored, the primary colour
 * flipped when it would vanish on the new background), so a light theme still reads well to a
 * person whose device asks for dark, and the reverse. Logos and font style sheets are used only
 * when the service itself serves them: the screen loads nothing from any other host. The console's
 * theme preview (D-670) dresses the same page by the same rules, on the server.
 */

export const schemes = ["light", "dark"] as const;
export type Scheme = (typeof schemes)[number];

/** The colour tokens and the custom property each becomes (`--primary: 212 78% 15%`, used as `hsl(var(--primary))`). */
const COLOURS = {
  color_primary: "--primary",
  color_primary_fg: "--primary-fg",
  color_background: "--background",
  color_foreground: "--foreground",
  color_muted: "--muted",
  color_border: "--border",
  color_success: "--success",
  color_danger: "--danger",
} as const;

type ColourToken = keyof typeof COLOURS;

export interface Hsl {
  h: number;
  s: number;
  l: number;
}

function parseHsl(value: string | number | undefined): Hsl | null {
  const match = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?)% (\d+(?:\.\d+)?)%$/.exec(String(value ?? ""));
  return match ? { h: Number(match[1]), s: Number(match[2]), l: Number(match[3]) } : null;
}

const format = ({ h, s, l }: Hsl) => `${h} ${s}% ${Math.round(l * 100) / 100}%`;
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/**
 * The theme's colours for `scheme`: as drawn when the scheme is the theme's `mode`, else mirrored.
 * Status colours keep their hue and move to a lightness that reads on the background; the muted
 * colour, the screen's secondary text, is made to read on it as text (WCAG 2 AA).
 *
 * @example colours({ mode: "light", color_background: "0 0% 97%", … }, "dark")["--background"] // "0 0% 3%"
 */
export function colours(theme: Record<string, string | number>, scheme: Scheme): Record<string, string> {
  const parsed = Object.fromEntries(Object.keys(COLOURS).map((token) => [token, parseHsl(theme[token])])) as Record<
    ColourToken,
    Hsl | null
  >;
  const out: Record<string, string> = {};
  const drawnFor: Scheme = theme.mode === "dark" ? "dark" : "light";
  const mirror = scheme !== drawnFor;
  const mirrored = (c: Hsl): Hsl => ({ ...c, l: 100 - c.l });
  const background = parsed.color_background && (mirror ? mirrored(parsed.color_background) : parsed.color_background);
  for (const [token, property] of Object.entries(COLOURS) as [ColourToken, string][]) {
    const colour = parsed[token];
    if (!colour) continue;
    let value = colour;
    if (mirror && (token === "color_background" || token === "color_foreground" || token === "color_muted" || token === "color_border")) {
      value = mirrored(colour);
    } else if (mirror && (token === "color_primary" || token === "color_primary_fg")) {
      // The primary stays the brand's colour unless it would sit too close to the new background.
      const primary = parsed.color_primary;
      const faint = primary && background && Math.abs(primary.l - background.l) < 35;
      value = faint ? mirrored(colour) : colour;
    } else if (mirror && (token === "color_success" || token === "color_danger")) {
      value = { ...colour, l: scheme === "dark" ? clamp(colour.l, 55, 75) : clamp(colour.l, 25, 45) };
    }
    out[property] = format(value);
  }
  const muted = parseHsl(out["--muted"]);
  const shown = parseHsl(out["--background"]);
  const primary = parseHsl(out["--primary"]);
  if (muted && shown) {
    out["--muted"] = format(legibleOn(muted, shown, [rgbOf(shown), ...(primary ? [panelOf(shown, primary)] : [])]));
  }
  return out;
}

type Rgb = [number, number, number];

/** An `H S% L%` colour as sRGB channels from 0 to 1. */
function rgbOf({ h, s, l }: Hsl): Rgb {
  const a = (s / 100) * Math.min(l / 100, 1 - l / 100);
  const channel = (n: number) => {
    const k = (n + h / 30) % 12;
    return l / 100 - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return [channel(0), channel(8), channel(4)];
}

/** The WCAG 2 relative luminance of an sRGB colour. */
function luminanceOf(rgb: Rgb): number {
  const [r, g, b] = rgb.map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

const contrast = (a: Rgb, b: Rgb) => {
  const [lighter, darker] = [luminanceOf(a), luminanceOf(b)].sort((x, y) => y - x) as [number, number];
  return (lighter + 0.05) / (darker + 0.05);
};

/** The WCAG 2 contrast ratio of two colours (1 to 21). */
export function contrastOf(a: Hsl, b: Hsl): number {
  return contrast(rgbOf(a), rgbOf(b));
}

/** WCAG 2 AA for text: the muted colour is the screen's secondary text, so it must read as text. */
const TEXT_CONTRAST = 4.5;

/** The primary's share in the panels' tint (screen.css: `.terms` and `.reading`, `hsl(var(--primary) / 0.07)`). */
export const PANEL_TINT = 0.07;

/**
 * `colour` moved away from the background in lightness, a point at a time, until it reads as text
 * (TEXT_CONTRAST) on every surface it is shown on (the background, and the panels' tint of it); as
 * it is when it already does. A theme's muted grey is often drawn for borders and hints and falls
 * short (the default theme's: 3.3:1 on its background).
 */
function legibleOn(colour: Hsl, background: Hsl, surfaces: Rgb[]): Hsl {
  const step = background.l >= 50 ? -1 : 1;
  let value = colour;
  const reads = (c: Hsl) => surfaces.every((surface) => contrast(rgbOf(c), surface) >= TEXT_CONTRAST);
  while (!reads(value) && value.l > 0 && value.l < 100) value = { ...value, l: clamp(value.l + step, 0, 100) };
  return value;
}

/** The panels' surface: `primary` at PANEL_TINT over `background`, composited in sRGB as the browser does. */
export function panelOf(background: Hsl, primary: Hsl): Rgb {
  const [under, over] = [rgbOf(background), rgbOf(primary)];
  return under.map((c, i) => c * (1 - PANEL_TINT) + over[i]! * PANEL_TINT) as Rgb;
}

/** The contrast of `text` on an sRGB surface (panelOf's). */
export function contrastOnSurface(text: Hsl, surface: Rgb): number {
  return contrast(rgbOf(text), surface);
}

/** Radii, fonts and weights: the same in both schemes. */
export function shape(theme: Record<string, string | number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const size of ["sm", "md", "lg"] as const) {
    const px = theme[`radius_${size}_px`];
    if (typeof px === "number") out[`--radius-${size}`] = `${px}px`;
  }
  if (typeof theme.font_body_family === "string") out["--font-body"] = theme.font_body_family;
  if (typeof theme.font_heading_family === "string") out["--font-heading"] = theme.font_heading_family;
  if (typeof theme.font_body_weight === "number") out["--weight-body"] = String(theme.font_body_weight);
  if (typeof theme.font_heading_weight === "number") out["--weight-heading"] = String(theme.font_heading_weight);
  return out;
}

/** A URL of the theme the screen may load: one the service itself serves (`origin`), else null. */
export function ownAsset(value: string | number | undefined, origin: string): string | null {
  if (typeof value !== "string") return null;
  try {
    const url = new URL(value);
    return url.origin === origin ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The ink that reads best on the sRGB colour `hex` (`#rrggbb`): black or white, whichever has the
 * higher WCAG 2 contrast ratio with it. On the light challenge's colours black wins everywhere but
 * on blue (contrast 5.5 or more either way).
 */
export function inkOn(hex: string): "#000000" | "#ffffff" {
  const linear = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
  return (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) ? "#000000" : "#ffffff";
}

/**
 * A /v1 session's accent (`#rrggbb`) as the theme's primary pair: the colour in the theme's `H S% L%`
 * form, and the ink that reads best on it. The pair then follows the person's scheme like the theme's own.
 *
 * @example accentTokens("#0a7d4f") // { color_primary: "156 85.19% 26.47%", color_primary_fg: "0 0% 100%" }
 */
export function accentTokens(hex: string): { color_primary: string; color_primary_fg: string } {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const l = (max + min) / 2;
  const d = max - min;
  const s = d === 0 ? 0 : d / (1 - Math.abs(2 * l - 1));
  const h = d === 0 ? 0 : max === r ? ((g - b) / d + 6) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    color_primary: `${Math.round(h * 60)} ${round(s * 100)}% ${round(l * 100)}%`,
    color_primary_fg: inkOn(hex) === "#000000" ? "0 0% 0%" : "0 0% 100%",
  };
}
