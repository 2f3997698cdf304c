import * as v from "valibot";
import { described } from "../kernel/answers";
import { type Locale, type MessageKey, translate } from "../kernel/i18n";

/** The version of the scope vocabulary; it changes only when the vocabulary does. */
const SCOPE_CATALOGUE_VERSION = "1.0.0-beta";

/**
 * The closed scope vocabulary (spec 2.3). `login`, `purchase`, `payment` and `task` come from the
 * specification; `sign`, `read`, `message` and `booking` are ours (docs/decisions.md, D-029).
 * Only `purchase` and `payment` accept an amount ceiling; only `task` requires constraints.
 */
export const scopes = [
  { scope: "login", accepts_amount_ceiling: false, requires_constraints: false },
  { scope: "purchase", accepts_amount_ceiling: true, requires_constraints: false },
  { scope: "payment", accepts_amount_ceiling: true, requires_constraints: false },
  { scope: "task", accepts_amount_ceiling: false, requires_constraints: true },
  { scope: "sign", accepts_amount_ceiling: false, requires_constraints: false },
  { scope: "read", accepts_amount_ceiling: false, requires_constraints: false },
  { scope: "message", accepts_amount_ceiling: false, requires_constraints: false },
  { scope: "booking", accepts_amount_ceiling: false, requires_constraints: false },
] as const;

export type Scope = (typeof scopes)[number]["scope"];

const scopeIds: readonly Scope[] = scopes.map((s) => s.scope);
export const moneyScopes: readonly Scope[] = scopes.filter((s) => s.accepts_amount_ceiling).map((s) => s.scope);
export const constraintRequiredScopes: readonly Scope[] = scopes.filter((s) => s.requires_constraints).map((s) => s.scope);

export function isScope(value: string): value is Scope {
  return (scopeIds as readonly string[]).includes(value);
}

/** A scope's label in the given locale; the scope id itself always stays English. */
export function scopeLabel(scope: Scope, locale: Locale): string {
  return translate(locale, `scope.${scope}.label` as MessageKey);
}

/** The catalogue as `mandate-scopes` serves it, localised. */
export function scopeCatalogue(locale: Locale) {
  return {
    version: SCOPE_CATALOGUE_VERSION,
    locale,
    matching: "exact",
    money_scopes: moneyScopes,
    constraint_required_scopes: constraintRequiredScopes,
    scopes: scopes.map((entry) => ({
      ...entry,
      label: scopeLabel(entry.scope, locale),
      description: translate(locale, `scope.${entry.scope}.description` as MessageKey),
    })),
  };
}

/** mandate-scopes' answer: the closed vocabulary, labelled in the request's locale. */
export const scopeCatalogueSchema = v.object({
  version: described(v.string(), "The catalogue's version."),
  locale: described(v.string(), "The locale of the labels."),
  matching: described(v.literal("exact"), "Scopes match exactly: no wildcards."),
  money_scopes: described(v.array(v.string()), "Scopes whose mandates may carry an amount ceiling."),
  constraint_required_scopes: described(v.array(v.string()), "Scopes whose mandates must carry constraints."),
  scopes: described(
    v.array(v.looseObject({ scope: v.string(), label: v.string(), description: v.string() })),
    "Every scope with its label and description.",
  ),
});
