/**
 * A merchant's uploaded theme assets (docs/management.md, "Themes"; docs/decisions.md, D-526): what
 * a logo or a font file may be, judged by its bytes (never by the type the caller declares), and
 * the stylesheet that declares an uploaded font's face. Pure: no I/O.
 *
 * An SVG is refused, not rewritten, unless it is made only of drawing: an allow-list of elements,
 * no attribute that runs script (`on…`), no reference outside the file (`href`, `url()` and
 * `@import` only to `#fragment`), no DOCTYPE or entity, no style sheet. A sanitiser that rewrites
 * would have to parse XML as every browser does; a refusal needs only to be stricter than they are.
 * The served file adds a CSP of its own (`default-src 'none'`), so an SVG opened on its own still
 * runs and loads nothing.
 */

export const assetKinds = ["logo", "font"] as const;
export type AssetKind = (typeof assetKinds)[number];

/** The types each kind may be, as served. */
export const assetTypes = {
  logo: ["image/png", "image/jpeg", "image/webp", "image/svg+xml"],
  font: ["font/woff2", "font/woff"],
} as const satisfies Record<AssetKind, readonly string[]>;

/** The largest file of each kind, in bytes (the upload's base64 stays under the 256 KiB body limit). */
export const assetMaxBytes: Record<AssetKind, number> = { logo: 128 * 1024, font: 160 * 1024 };

const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) => prefix.every((byte, i) => bytes[at + i] === byte);
const ascii = (text: string) => [...text].map((ch) => ch.charCodeAt(0));

/** The type `bytes` are, by their signature; null when they are none of the accepted ones. */
export function sniffAssetType(bytes: Uint8Array): string | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp";
  if (startsWith(bytes, ascii("wOF2"))) return "font/woff2";
  if (startsWith(bytes, ascii("wOFF"))) return "font/woff";
  const head = new TextDecoder("utf-8", { fatal: false })
    .decode(bytes.subarray(0, 1024))
    .replace(/^\uFEFF/, "")
    .trimStart();
  if (/^(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*(<svg[\s>]|<!DOCTYPE\s+svg)/i.test(head)) return "image/svg+xml";
  return null;
}

/** The SVG elements a logo may hold: shapes, text, paint servers and structure, nothing that loads or runs. */
const SVG_ELEMENTS = new Set(
  [
    "svg",
    "g",
    "defs",
    "title",
    "desc",
    "symbol",
    "use",
    "path",
    "rect",
    "circle",
    "ellipse",
    "line",
    "polyline",
    "polygon",
    "text",
    "tspan",
    "lineargradient",
    "radialgradient",
    "stop",
    "clippath",
    "mask",
    "pattern",
    "metadata",
  ].map((name) => name.toLowerCase()),
);

/**
 * Why an SVG is refused, or null when it is only drawing (the rules at the top of this file).
 *
 * @example svgRefusal('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') // "the element <script> is not allowed"
 */
export function svgRefusal(text: string): string | null {
  if (/<!DOCTYPE|<!ENTITY|<!\[CDATA\[/i.test(text)) return "a DOCTYPE, entity or CDATA section is not allowed";
  if (/<\?xml-stylesheet/i.test(text)) return "a style sheet is not allowed";
  if (!/^\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(text.replace(/^\uFEFF/, ""))) return "it must begin with <svg>";
  for (const match of text.matchAll(/<\s*([A-Za-z][\w:.-]*)/g)) {
    const name = match[1]!.toLowerCase();
    if (!SVG_ELEMENTS.has(name)) return `the element <${match[1]}> is not allowed`;
  }
  for (const match of text.matchAll(/[\s"'/]([A-Za-z_:][\w:.-]*)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/g)) {
    const name = match[1]!.toLowerCase();
    const value = match[2]!.replace(/^["']|["']$/g, "").trim();
    if (name.startsWith("on")) return `the attribute ${match[1]} is not allowed`;
    if ((name === "href" || name.endsWith(":href")) && !value.startsWith("#")) return `${match[1]} may only point inside the file (#…)`;
    if (/javascript:|data:|@import/i.test(value)) return `the attribute ${match[1]} holds a reference that is not allowed`;
    if (/url\(\s*['"]?(?!#)/i.test(value)) return `the attribute ${match[1]} may use url() only to point inside the file (#…)`;
  }
  return null;
}

/** A font family name as an uploaded font's stylesheet declares it: 1 to 64 letters, digits, spaces, dots, hyphens, underscores. */
export const FONT_FAMILY_NAME = /^[A-Za-z0-9 ._-]{1,64}$/;

/**
 * The stylesheet the service serves for an uploaded font (its URL is what the `font_*_url` tokens
 * resolve to): one face of `family`, every weight from the one file (a variable font draws them; a
 * static one is synthesised), from the service's own URL of the file.
 *
 * @example fontStylesheet("Brand Sans", "font/woff2", "0123…") // '@font-face { font-family: "Brand Sans"; src: url("0123…") format("woff2"); … }'
 */
export function fontStylesheet(family: string, contentType: string, file: string): string {
  const format = contentType === "font/woff2" ? "woff2" : "woff";
  return `@font-face { font-family: "${family}"; src: url("${file}") format("${format}"); font-weight: 100 900; font-display: swap; }\n`;
}
