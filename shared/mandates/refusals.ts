import { type Locale, type MessageKey, translate } from "../kernel/i18n";
import type { Decision } from "./rpc";

/**
 * Every refusal `reason` of mandate-check, mandate-consume and the transaction stand-in, with its
 * English developer message, whether a step-up grant could help, and whether the person should be
 * told (integration errors carry no user_message: they are the caller's to fix).
 */
export const refusals = {
  idempotency_key_required: {
    developer: "Idempotency-Key header (8 to 200 characters) is required on mandate-consume.",
    stepUp: false,
    integration: true,
  },
  idempotency_key_invalid: {
    developer: "Idempotency-Key must be 8 to 200 printable ASCII characters, without spaces; nothing was consumed.",
    stepUp: false,
    integration: true,
  },
  mandate_not_found: { developer: "No mandate with this id exists for this merchant and environment.", stepUp: false, integration: true },
  unknown_scope: { developer: "The scope is not in the closed vocabulary (see mandate-scopes).", stepUp: false, integration: true },
  context_required: { developer: "The mandate restricts this context field; send it in context.", stepUp: false, integration: true },
  amount_required: {
    developer: "The mandate has an amount ceiling; send amount (minor unit) and currency.",
    stepUp: false,
    integration: true,
  },
  currency_mismatch: {
    developer: "currency differs from the ceiling's currency; no conversion is done.",
    stepUp: false,
    integration: true,
  },
  mandate_revoked: {
    developer: "The mandate was revoked; it is terminal. A replayed key still names the consumption it recorded, but grants nothing now.",
    stepUp: false,
    integration: false,
  },
  mandate_expired: { developer: "The mandate's expires_at has passed.", stepUp: true, integration: false },
  mandate_exhausted: {
    developer: "The ceiling is used up: a periodic one until period_resets_at, a lifetime one (period_resets_at null) for good.",
    stepUp: true,
    integration: false,
  },
  ceiling_exceeded: { developer: "This action would pass the ceiling of the current period.", stepUp: true, integration: false },
  scope_not_granted: { developer: "The mandate does not grant this scope.", stepUp: true, integration: false },
  merchant_not_allowed: { developer: "context.merchant is not in the mandate's merchant_allowlist.", stepUp: true, integration: false },
  category_not_allowed: { developer: "context.category is not in the mandate's category_allowlist.", stepUp: true, integration: false },
  country_not_allowed: { developer: "context.country is not in the mandate's country_allowlist.", stepUp: true, integration: false },
} as const;

type RefusalReason = keyof typeof refusals;

/** The answer shape of spec 4.8: the database's decision with its messages in the caller's locale. */
export function answer(decision: Decision, locale: Locale): Record<string, unknown> {
  if (decision.allowed) return { ...decision, developer_message: "The action is inside the mandate." };
  const reason = (decision.reason ?? "mandate_not_found") as RefusalReason;
  const entry = refusals[reason];
  const resets = typeof decision.period_resets_at === "string" ? decision.period_resets_at : "";
  return {
    ...decision,
    allowed: false,
    reason,
    developer_message: entry.developer,
    ...(entry.integration ? {} : { user_message: translate(locale, `refusal.${reason}` as MessageKey, { resets }) }),
    step_up_available: entry.stepUp,
  };
}

/** A refusal decided at the edge, before the database (a missing key, an unknown scope). */
export function refusal(reason: RefusalReason, locale: Locale): Record<string, unknown> {
  return answer({ allowed: false, reason }, locale);
}
