import { readFileSync } from "node:fs";
import { mandateTokens } from "../../shared/themes/theme";

/** A woff2 font the theme tests upload (Source Code Pro, weight 500). */
export const TEST_FONT = readFileSync(new URL("../fixtures/fonts/source-code-pro-500.woff2", import.meta.url));

/**
 * A complete capture theme (every token a published theme needs), its logos the uploaded `logo` and
 * its fonts the uploaded `font` under `family`; the brand and the primary colour vary per test.
 */
export function completeCaptureTheme({
  logo,
  font,
  brand,
  family,
  primary,
}: {
  logo: string;
  font: string;
  brand: string;
  family: string;
  primary: string;
}) {
  return {
    brand_name: brand,
    mode: "light",
    logo_wide_url: logo,
    logo_square_url: logo,
    logo_icon_url: logo,
    color_primary: primary,
    color_primary_fg: "0 0% 100%",
    color_background: "0 0% 100%",
    color_foreground: "240 10% 10%",
    color_muted: "240 4% 46%",
    color_border: "240 6% 90%",
    color_success: "142 71% 35%",
    color_danger: "0 72% 51%",
    radius_sm_px: 4,
    radius_md_px: 8,
    radius_lg_px: 16,
    font_heading_family: `"${family}", monospace`,
    font_body_family: `"${family}", monospace`,
    font_heading_url: font,
    font_body_url: font,
    font_heading_weight: 500,
    font_body_weight: 500,
  };
}

/** The same theme for the mandate surface: its tokens only (shared/themes/theme.ts, `mandateTokens`). */
export function completeMandateTheme(options: Parameters<typeof completeCaptureTheme>[0]) {
  const capture: Record<string, string | number> = completeCaptureTheme(options);
  return Object.fromEntries(mandateTokens.map((token) => [token, capture[token]]));
}
