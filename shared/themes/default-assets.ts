/**
 * The default theme's assets (spec 2.9 gives `null` for the five URL tokens, yet a response never
 * contains NULL): two logos and an icon in the default colours, and the font stylesheet of the
 * default system font stack. The service serves them itself (merchant-theme-get, under
 * DEFAULT_ASSETS_PATH), so the default theme never points at a host that does not answer. Pure: no I/O.
 */

/** Where the service serves the default assets, below its own base URL. */
export const DEFAULT_ASSETS_PATH = "/functions/v1/merchant-theme-get/assets";

/** The folder below DEFAULT_ASSETS_PATH where the service serves the merchants' uploaded assets (D-526). */
export const UPLOADS_DIRECTORY = "u";

/** The default assets' paths below DEFAULT_ASSETS_PATH, as the default theme names them. */
export const defaultAssetFiles = {
  logoWide: "logo-wide.svg",
  logoSquare: "logo-square.svg",
  logoIcon: "logo-icon.svg",
  fontStylesheet: "fonts/system-sans.css",
} as const;

interface Asset {
  contentType: string;
  body: string;
}

/** The default primary colour (`212 78% 15%`) and its foreground (`0 0% 100%`), as SVG colours. */
const PRIMARY = "#082444";
const PRIMARY_FG = "#ffffff";

/** The mark: a rounded square holding a person's outline. */
function mark(size: number, radius: number): string {
  return [
    `<rect width="${size}" height="${size}" rx="${radius}" fill="${PRIMARY}"/>`,
    `<g fill="${PRIMARY_FG}" transform="scale(${size / 64})">`,
    `<circle cx="32" cy="24" r="9"/><path d="M15 50c0-9.4 7.6-17 17-17s17 7.6 17 17z"/>`,
    "</g>",
  ].join("");
}

const svg = (width: number, height: number, content: string): Asset => ({
  contentType: "image/svg+xml",
  body: `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="Human Authorisation">${content}</svg>\n`,
});

const assets: Record<string, Asset> = {
  [defaultAssetFiles.logoWide]: svg(
    320,
    64,
    `${mark(64, 14)}<text x="80" y="41" fill="${PRIMARY}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif" font-size="24" font-weight="600">Human Authorisation</text>`,
  ),
  [defaultAssetFiles.logoSquare]: svg(128, 128, mark(128, 28)),
  [defaultAssetFiles.logoIcon]: svg(32, 32, mark(32, 7)),
  [defaultAssetFiles.fontStylesheet]: {
    contentType: "text/css; charset=utf-8",
    body: "/* The default font families are system fonts (system-ui and its fallbacks): nothing to load. */\n",
  },
};

/** The default asset at `path` (below DEFAULT_ASSETS_PATH), or undefined. */
export function defaultAsset(path: string): Asset | undefined {
  return Object.hasOwn(assets, path) ? assets[path] : undefined;
}
