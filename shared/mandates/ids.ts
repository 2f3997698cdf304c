import { canonicalUuid } from "../lib/uuid";

/**
 * The uuid behind a mandate id as responses show it (`mdt_` + 32 hex, formatted by the database) or
 * as a bare uuid (the consume body describes it as a uuid); null when it is neither.
 */
export function mandateUuid(id: string): string | null {
  return canonicalUuid(id.startsWith("mdt_") ? id.slice(4) : id);
}

/**
 * The mandate id as responses show it for a canonical uuid (mandateUuid's inverse, as private.public_id('mdt_', …)
 * formats it): for the stand-in's receipt, signed before the call that reads the mandate.
 */
export function mandatePublicId(uuid: string): string {
  return `mdt_${uuid.replaceAll("-", "")}`;
}
