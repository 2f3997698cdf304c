/**
 * What every HTML page the service serves shares (the hosted screen, the person's page): the
 * headers of a page and its assets, with a Content-Security-Policy that loads nothing from another
 * host, and the page's words as a JSON data block.
 */

/** The directives of a page's Content-Security-Policy, by name (each page says what it needs). */
export type PolicyDirectives = Record<string, string>;

/** What a page may do by default: nothing, from nowhere, inside no frame; each page opens what it needs. */
const NOTHING: PolicyDirectives = {
  "default-src": "'none'",
  "base-uri": "'none'",
  "form-action": "'none'",
  "frame-ancestors": "'none'",
};

/** A Content-Security-Policy of `directives` over the default of nothing. */
export function contentSecurityPolicy(directives: PolicyDirectives): string {
  const all = { ...NOTHING, ...directives };
  const order = ["default-src", ...Object.keys(directives), "base-uri", "form-action", "frame-ancestors"];
  return [...new Set(order)].map((name) => `${name} ${all[name]}`).join("; ");
}

/** Sets the headers of a page or asset: its policy and permissions, no sniffing, no referrer, same-origin only. */
export function securePage(headers: Headers, policy: { csp: string; permissions: string }): void {
  headers.set("content-security-policy", policy.csp);
  headers.set("x-content-type-options", "nosniff");
  headers.set("referrer-policy", "no-referrer");
  headers.set("cross-origin-resource-policy", "same-origin");
  headers.set("permissions-policy", policy.permissions);
}

/** A value as a JSON data block in a page: `<` escaped, so no text can close the element. */
export function jsonBlock(id: string, value: unknown): string {
  return `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, "\\u003c")}</script>`;
}

/** Text for HTML: every character that could open markup or close an attribute, as a reference. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * A page's opening up to its body: the language, the viewport, both colour schemes, its title (HTML,
 * already escaped, with any attributes), its style sheet and its words as a JSON data block.
 */
export function pageHead(page: { locale: string; title: string; stylesheet: string; words: unknown }): string {
  return `<!doctype html>
<html lang="${page.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
${page.title}
<link rel="stylesheet" href="${page.stylesheet}">
${jsonBlock("messages", page.words)}
</head>`;
}
