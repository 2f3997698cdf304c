/**
 * Alias rules (spec 2.10, 4.17): normalisation, the format rule with its named codes, the reserved
 * words and the deterministic suggestion candidates. Pure: no I/O; availability is the database's.
 */

const ALIAS_MIN_LENGTH = 3;
const ALIAS_MAX_LENGTH = 30;
/** The spec's pattern; trailing and double underscores are refused on top of it. */
export const ALIAS_PATTERN = /^[a-z][a-z0-9_]{2,29}$/;
/** At most this many suggestions are returned for a taken alias. */
export const MAX_SUGGESTIONS = 3;

type AliasFormatCode =
  | "ALIAS_TOO_SHORT"
  | "ALIAS_TOO_LONG"
  | "ALIAS_MUST_START_WITH_LETTER"
  | "ALIAS_INVALID_CHARS"
  | "ALIAS_TRAILING_UNDERSCORE"
  | "ALIAS_DOUBLE_UNDERSCORE"
  | "ALIAS_RESERVED";

export interface AliasVerdict {
  alias: string;
  formatOk: boolean;
  /** The first rule the alias breaks (see `aliasVerdict` for the order), or null when it is valid. */
  formatCode: AliasFormatCode | null;
}

/**
 * Refused whatever their availability: institutional words a person could use to pose as the
 * service or a merchant's staff, technical words that collide with routes and product nouns, and
 * brand names (payment networks and large platforms). Matching is exact, on the normalised alias.
 */
export const RESERVED_ALIASES: ReadonlySet<string> = new Set([
  // institutional
  "admin",
  "administrator",
  "root",
  "sysadmin",
  "support",
  "help",
  "helpdesk",
  "security",
  "legal",
  "official",
  "staff",
  "team",
  "moderator",
  "owner",
  "system",
  "service",
  "compliance",
  "privacy",
  "abuse",
  "fraud",
  "trust",
  "safety",
  "billing",
  "contact",
  "info",
  "terms",
  "policy",
  "verified",
  "verify",
  "everyone",
  "anonymous",
  "null",
  "undefined",
  // technical and product
  "api",
  "app",
  "web",
  "email",
  "login",
  "logout",
  "signin",
  "signup",
  "account",
  "auth",
  "oauth",
  "token",
  "session",
  "receipt",
  "receipts",
  "mandate",
  "mandates",
  "payment",
  "payments",
  "pay",
  "checkout",
  "webhook",
  "dashboard",
  "settings",
  "console",
  "docs",
  "developer",
  "sandbox",
  "live",
  "test",
  "mcp",
  "agent",
  "agents",
  "capture",
  "consent",
  "identity",
  "alias",
  "user",
  "merchant",
  "wallet",
  "refund",
  "invoice",
  "status",
  // brands
  "visa",
  "mastercard",
  "amex",
  "paypal",
  "stripe",
  "pix",
  "google",
  "apple",
  "microsoft",
  "amazon",
  "meta",
  "facebook",
  "instagram",
  "whatsapp",
  "openai",
]);

/**
 * Normalises raw input before it is judged (spec 4.17 rule 2): composed (NFC), trimmed, one leading
 * `@` dropped, lowercased, then every invalid character that is no letter, mark or digit stripped
 * (spaces, dots, hyphens, a second `@`, punctuation, symbols, emoji). A letter or digit outside
 * `a-z0-9` (`é`, Cyrillic, Arabic-Indic digits) is kept: stripping it would respell the name the
 * person typed (`josé` would become `jos`), so the verdict refuses it as ALIAS_INVALID_CHARS.
 *
 * @example normaliseAlias("  @Ana.Maria ") // "anamaria"
 * @example normaliseAlias("José") // "josé"
 */
export function normaliseAlias(input: string): string {
  return input
    .normalize("NFC")
    .trim()
    .replace(/^@/, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_]/gu, "");
}

/**
 * Normalises and judges an alias: the normalised alias is what is validated, echoed and stored.
 * The first failing rule wins, in this order: ALIAS_INVALID_CHARS (a letter or digit outside
 * `a-z0-9` that normalisation keeps), ALIAS_TOO_SHORT, ALIAS_TOO_LONG, ALIAS_MUST_START_WITH_LETTER,
 * ALIAS_TRAILING_UNDERSCORE, ALIAS_DOUBLE_UNDERSCORE, ALIAS_RESERVED.
 *
 * @example aliasVerdict("@Ana.Maria") // { alias: "anamaria", formatOk: true, formatCode: null }
 */
export function aliasVerdict(input: string): AliasVerdict {
  const alias = normaliseAlias(input);
  const formatCode = formatCodeOf(alias);
  return { alias, formatOk: formatCode === null, formatCode };
}

function formatCodeOf(alias: string): AliasFormatCode | null {
  if (/[^a-z0-9_]/.test(alias)) return "ALIAS_INVALID_CHARS";
  if (alias.length < ALIAS_MIN_LENGTH) return "ALIAS_TOO_SHORT";
  if (alias.length > ALIAS_MAX_LENGTH) return "ALIAS_TOO_LONG";
  if (!/^[a-z]/.test(alias)) return "ALIAS_MUST_START_WITH_LETTER";
  if (alias.endsWith("_")) return "ALIAS_TRAILING_UNDERSCORE";
  if (alias.includes("__")) return "ALIAS_DOUBLE_UNDERSCORE";
  if (RESERVED_ALIASES.has(alias)) return "ALIAS_RESERVED";
  return null;
}

/**
 * The fixed, ordered candidates from which suggestions for a taken (valid) alias are drawn: the
 * alias with the suffixes 1 to 9, the base cut short when needed to stay within 30 characters.
 * Only valid, non-reserved candidates other than the alias itself are listed. The caller checks
 * them all for availability in the same round trip as the alias and keeps the first three free.
 *
 * @example suggestionCandidates("ana") // ["ana1", "ana2", …, "ana9"]
 */
export function suggestionCandidates(alias: string): string[] {
  const candidates: string[] = [];
  for (let n = 1; n <= 9; n++) {
    const suffix = String(n);
    const candidate = alias.slice(0, ALIAS_MAX_LENGTH - suffix.length) + suffix;
    const verdict = aliasVerdict(candidate);
    if (verdict.formatOk && candidate !== alias && !candidates.includes(candidate)) candidates.push(candidate);
  }
  return candidates;
}

/**
 * The first `MAX_SUGGESTIONS` candidates that `available` reports free, in candidate order.
 *
 * @example pickSuggestions(["ana1", "ana2"], { ana1: false, ana2: true }) // ["ana2"]
 */
export function pickSuggestions(candidates: readonly string[], available: Readonly<Record<string, boolean>>): string[] {
  return candidates.filter((candidate) => available[candidate] === true).slice(0, MAX_SUGGESTIONS);
}
