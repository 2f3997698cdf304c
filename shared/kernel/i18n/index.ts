import { en } from "./en";
import { es } from "./es";
import { ptBR } from "./pt-br";

export const locales = ["en", "pt-BR", "es"] as const;
export type Locale = (typeof locales)[number];
export type MessageKey = keyof typeof en;

/** One catalogue: every locale must define every key (the type checker enforces it). */
const catalogue: Record<Locale, Record<MessageKey, string>> = { en, "pt-BR": ptBR, es };

/**
 * Picks the best supported locale from an Accept-Language header, honouring q-values.
 * A bare `pt` selects `pt-BR`; anything unsupported falls back to English silently.
 *
 * @example negotiateLocale("es-MX,es;q=0.9,en;q=0.5") // "es"
 */
export function negotiateLocale(header: string | null | undefined): Locale {
  if (!header) return "en";
  const ranked = header
    .split(",")
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag: tag.trim().toLowerCase(), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((entry) => entry.tag && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const { tag } of ranked) {
    const primary = tag.split("-")[0];
    if (primary === "pt") return "pt-BR";
    if (primary === "es") return "es";
    if (primary === "en") return "en";
  }
  return "en";
}

/** The message for `key` in `locale`, with `{name}` placeholders filled from `params`. */
export function translate(locale: Locale, key: MessageKey, params: Record<string, string | number> = {}): string {
  return catalogue[locale][key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}

/** Every message of `locale` whose key starts with `prefix` (a page's own words, embedded in it). */
export function messagesOf(locale: Locale, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(catalogue[locale]).filter(([key]) => key.startsWith(prefix)));
}
