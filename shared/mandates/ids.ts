const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * The uuid behind a mandate id as responses show it (`mdt_` + 32 hex) or as a bare uuid (the consume
 * body describes it as a uuid); null when it is neither.
 */
export function mandateUuid(id: string): string | null {
  const raw = id.startsWith("mdt_") ? id.slice(4) : id;
  if (!UUID.test(raw)) return null;
  const hex = raw.replace(/-/g, "").toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
