/** A UUID in its canonical 8-4-4-4-12 hexadecimal form, any case. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The canonical lowercase form of a UUID written with or without its dashes; null when `text` is
 * neither.
 *
 * @example canonicalUuid("0F8FAD5BD9CB469FA16570867728950E") // "0f8fad5b-d9cb-469f-a165-70867728950e"
 */
export function canonicalUuid(text: string): string | null {
  const hex = UUID.test(text) ? text.replace(/-/g, "") : text;
  if (!/^[0-9a-f]{32}$/i.test(hex)) return null;
  const lower = hex.toLowerCase();
  return `${lower.slice(0, 8)}-${lower.slice(8, 12)}-${lower.slice(12, 16)}-${lower.slice(16, 20)}-${lower.slice(20)}`;
}
