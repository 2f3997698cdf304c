/**
 * Public ids of the account's objects (docs/management.md): a prefix and the uuid's 32 hex, as the
 * database writes them (private.public_id). A request may name an object by either form.
 */
import { canonicalUuid } from "../lib/uuid";

export const idPrefixes = { key: "key_", endpoint: "we_", delivery: "whd_", audit: "aud_", themeAsset: "ta_" } as const;

/** The uuid behind `id` (with its prefix, or bare), or null when it is neither. */
export function uuidOf(kind: keyof typeof idPrefixes, id: string): string | null {
  const prefix = idPrefixes[kind];
  return canonicalUuid(id.startsWith(prefix) ? id.slice(prefix.length) : id);
}

/** The public id of a uuid. */
export function publicId(kind: keyof typeof idPrefixes, uuid: string): string {
  return `${idPrefixes[kind]}${uuid.replace(/-/g, "")}`;
}
