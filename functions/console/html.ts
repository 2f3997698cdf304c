/**
 * HTML written by the server, safely: `html` is a tagged template whose every interpolation is
 * escaped (shared/edge/pages.ts's escapeHtml) unless it is itself `html` (markup built the same
 * way), a list of those, or nothing (null, undefined, false: written as nothing). So no value read
 * from the database or a request reaches a page as markup.
 */
import { escapeHtml } from "../../shared/edge/pages";

/** Markup that is already safe. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function write(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(write).join("");
  return escapeHtml(String(part));
}

/** @example html`<p>${name}</p>` // name escaped */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  return new Html(strings.reduce((out, text, i) => out + text + (i < parts.length ? write(parts[i]) : ""), ""));
}
