import { canonicalUuid } from "../lib/uuid";

/**
 * The uuid behind a mandate id as responses show it (`mdt_` + 32 hex, formatted by the database) or
 * as a bare uuid (the consume body describes it as a uuid); null when it is neither.
 */
export function mandateUuid(id: string): string | null {
  return canonicalUuid(id.startsWith("mdt_") ? id.slice(4) : id);
}
