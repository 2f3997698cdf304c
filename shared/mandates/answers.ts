/**
 * What the mandate operations answer, as schemas: the mandate as the resource API shows it
 * (`private.mandate_object_json`), a page of them, and a decision (mandate-check,
 * mandate-consume, POST /v1/mandates/{id}/check: spec 4.8's shape, a refusal being 200 with
 * `allowed: false`). The OpenAPI documents declare them; the tests hold every answer to them.
 */
import * as v from "valibot";
import { described, instant, orNull } from "../kernel/answers";
import { mandateStatuses } from "./page";
import { refusals } from "./refusals";

const minorUnits = v.pipe(v.number(), v.integer(), v.minValue(0));

/** A mandate on the resource API (2.3; docs/resource-api.md#mandates). */
export const mandateObjectSchema = v.object({
  id: described(v.pipe(v.string(), v.startsWith("mdt_")), "The mandate's id."),
  object: v.literal("mandate"),
  status: described(v.picklist(mandateStatuses), "The effective status at the request's instant (resource API 3.1)."),
  granted_by: described(v.string(), "The merchant's subject_ref of the person who granted it."),
  granted_to: described(v.string(), "Who holds it: the agent's identifier."),
  granted_to_kind: described(v.string(), "What kind of holder it is, for example agent."),
  agent_display_name: orNull(v.string(), "The agent's readable name, when given at issue."),
  agent_descriptor: orNull(v.string(), "One line on what the agent does, when given at issue."),
  scope: described(v.array(v.string()), "The scopes granted (GET mandate-scopes lists the vocabulary)."),
  constraints: v.optional(
    described(
      v.record(v.string(), v.array(v.string())),
      "merchant_allowlist, category_allowlist, country_allowlist: an act must name a listed value.",
    ),
  ),
  ceiling: orNull(
    v.object({
      amount: orNull(minorUnits, "The amount per period, in the currency's minor unit."),
      currency: orNull(v.pipe(v.string(), v.length(3)), "ISO 4217, with the amount."),
      count: orNull(minorUnits, "The number of acts per period."),
      period: described(v.picklist(["day", "week", "month", "lifetime"]), "The period the ceiling resets over."),
    }),
    "The ceiling per period; null when the mandate has none.",
  ),
  remaining: orNull(minorUnits, "What is left of the ceiling this period: the amount when it has one, else the count."),
  remaining_count: orNull(minorUnits, "The count left this period, when the ceiling has both an amount and a count."),
  period_resets_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When the current period ends and the ceiling resets."),
  until: instant("When the mandate expires."),
  step_up_of: orNull(v.pipe(v.string(), v.startsWith("mdt_")), "The mandate this one steps up from (a step-up), if any."),
  assurance_level: described(v.picklist(["face", "face_voice", "face_voice_doc"]), "How the granting person was verified."),
  created_at: instant("When it was issued."),
  revoked_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When it was revoked; null while not."),
});

/** A page of mandates, newest first (4.6). */
export const mandatePageAnswerSchema = v.object({
  object: v.literal("list"),
  data: described(v.array(mandateObjectSchema), "The page's mandates, newest first."),
  next_cursor: orNull(v.string(), "The cursor of the next page (opaque); null on the last page."),
});

const refusalReasons = Object.keys(refusals) as [keyof typeof refusals, ...(keyof typeof refusals)[]];

/** A decision (spec 4.8): allowed, or refused with a reason, both 200. */
export const decisionAnswerSchema = v.object({
  allowed: described(v.boolean(), "Whether the act is inside the mandate (and, when consuming, was debited)."),
  reason: v.optional(described(v.picklist(refusalReasons), "Why it was refused (docs/functions.md, Refusal reasons).")),
  developer_message: described(v.string(), "What the answer means, for the developer (English)."),
  user_message: v.optional(described(v.string(), "What to tell the person, in the request's locale (refusals the person can act on).")),
  step_up_available: v.optional(described(v.boolean(), "Whether a new grant by the person (a step-up) could allow the act.")),
  remaining: v.optional(
    described(
      v.object({ amount: v.nullable(minorUnits), currency: v.nullable(v.string()), count: v.nullable(minorUnits) }),
      "What is left of the ceiling this period, after this act when it was consumed.",
    ),
  ),
  period_resets_at: v.optional(orNull(v.pipe(v.string(), v.isoTimestamp()), "When the ceiling resets.")),
  consumption_id: v.optional(described(v.string(), "The consumption recorded (consuming only).")),
  idempotent_replay: v.optional(described(v.boolean(), "True when this is the stored answer of an earlier request with the same key.")),
  mandate_status: v.optional(described(v.string(), "On a replay: the mandate's effective status now.")),
  at_limit: v.optional(described(v.boolean(), "Whether this act used up the ceiling of the period.")),
  scope_used: v.optional(described(v.string(), "The scope the act was judged under.")),
  field: v.optional(described(v.string(), "With context_required: the context field to send.")),
});

const ceilingPeriod = v.picklist(["daily", "weekly", "monthly", "lifetime"]);

/** A mandate on the function API (spec 4.7, 4.10): mandate_json's shape, agent fields absent when not given. */
export const mandateSchema = v.object({
  mandate_id: described(v.pipe(v.string(), v.startsWith("mdt_")), "The mandate's id."),
  status: described(v.picklist(mandateStatuses), "The effective status at the request's instant."),
  granted_by: described(v.string(), "The merchant's subject_ref of the person who granted it."),
  granted_to: described(v.string(), "Who holds it: the agent's identifier."),
  granted_to_kind: described(v.string(), "What kind of holder it is, for example agent."),
  agent_display_name: v.optional(described(v.string(), "The agent's readable name, when given at issue.")),
  agent_descriptor: v.optional(described(v.string(), "One line on what the agent does, when given at issue.")),
  scopes: described(v.array(v.string()), "The scopes granted."),
  constraints: described(v.record(v.string(), v.array(v.string())), "merchant_allowlist, category_allowlist, country_allowlist."),
  ceiling: described(
    v.object({
      kind: v.picklist(["none", "amount", "count", "both"]),
      amount: v.nullable(minorUnits),
      currency: v.nullable(v.string()),
      count: v.nullable(minorUnits),
      period: v.nullable(ceilingPeriod),
    }),
    "The ceiling: its kind, the amount (minor units) and currency, the count, and the period it resets over.",
  ),
  assurance_level: described(v.picklist(["face", "face_voice", "face_voice_doc"]), "How the granting person was verified."),
  expires_at: instant("When the mandate expires."),
  step_up_of: orNull(v.string(), "The mandate this one raised (a step-up), if any."),
  created_at: instant("When it was issued."),
  updated_at: instant("When it last changed."),
  revoked_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When it was revoked; null while not."),
});

/** mandate-issue's answer: the mandate, with its scopes labelled in the request's locale. */
export const issuedMandateSchema = v.object({
  ...mandateSchema.entries,
  scope_labels: described(
    v.array(v.object({ scope: v.string(), label: v.string() })),
    "Each scope with its label in the request's locale.",
  ),
});

/** One consumption of a mandate, newest first on mandate-get. */
const consumptionSchema = v.object({
  consumption_id: v.string(),
  scope: v.string(),
  amount: v.optional(v.nullable(minorUnits)),
  currency: v.optional(v.nullable(v.string())),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
});

/** mandate-get's answer: one mandate with its consumptions, or a list. */
export const mandateReadSchema = v.union([
  v.object({
    ...mandateSchema.entries,
    stored_status: described(v.string(), "The status as stored (the effective one is `status`)."),
    consumptions: described(v.array(consumptionSchema), "The mandate's consumptions, newest first."),
  }),
  v.object({
    mandates: described(v.array(mandateSchema), "The mandates the query names, newest first, at most 1,000."),
    has_more: described(v.boolean(), "Whether more follow: ask again with issued_before set to the last mandate_id."),
  }),
]);

/** mandate-revoke's answer. */
export const revokedMandateSchema = v.object({
  mandate_id: v.string(),
  status: v.picklist(mandateStatuses),
  revoked: described(v.literal(true), "Revoked (now or before)."),
  already_revoked: described(v.boolean(), "True when it was revoked before this request."),
  revoked_at: instant("When it was revoked."),
});
