/** What the person's own page answers (functions/me), as schemas for its OpenAPI document. */
import * as v from "valibot";
import { described, instant, orNull } from "../kernel/answers";

export const signInStartedSchema = v.object({
  session_id: described(v.string(), "The hosted login session to prove presence in (hs_…); the finish names it."),
  url: described(v.string(), "The capture screen's address, its session token in the fragment."),
  expires_at: instant("When the capture screen stops accepting the capture."),
});

const sessionEnds = {
  environment: described(v.picklist(["test", "live"]), "The environment of the person's identity: the page shows that one only."),
  expires_at: instant("The session's absolute end."),
  idle_expires_at: instant("When the session ends without another request (moves on with each)."),
};

export const signedInSchema = v.object({
  signed_in: v.literal(true),
  csrf_token: described(v.string(), "Carried in x-csrf-token by every state-changing request of this session."),
  ...sessionEnds,
});

export const personSessionSchema = v.object(sessionEnds);

export const signedOutSchema = v.object({ signed_out: v.literal(true) });

const money = v.pipe(v.number(), v.integer());

const personMandateSchema = v.object({
  mandate_id: described(v.string(), "mdt_…"),
  status: described(v.string(), "Effective status now: active, exhausted, expired or revoked."),
  merchant: v.object({ merchant_id: v.string(), name: described(v.string(), "The merchant's display name.") }),
  granted_to: described(v.string(), "The merchant's identifier of the agent."),
  granted_to_kind: v.string(),
  agent_display_name: v.optional(v.string()),
  agent_descriptor: v.optional(v.string()),
  scopes: v.array(v.string()),
  scope_labels: described(v.array(v.string()), "Each scope in the request's locale, in the same order."),
  ceiling: v.object({
    kind: v.string(),
    amount: v.nullable(money),
    currency: v.nullable(v.string()),
    count: v.nullable(money),
    period: v.string(),
  }),
  remaining: described(
    v.object({
      amount: v.nullable(money),
      currency: v.nullable(v.string()),
      count: v.nullable(money),
      period_resets_at: v.nullable(v.string()),
    }),
    "What remains of the ceiling this period.",
  ),
  expires_at: instant("The mandate's expiry."),
  created_at: instant("When it was issued."),
  revoked_at: orNull(v.string(), "When it was revoked."),
  last_consumptions: described(
    v.array(
      v.object({
        consumption_id: v.string(),
        scope: v.string(),
        amount: v.optional(money),
        currency: v.optional(v.string()),
        created_at: v.string(),
      }),
    ),
    "The last five uses, newest first.",
  ),
});

export const personMandatesSchema = v.object({
  mandates: described(v.array(personMandateSchema), "Every mandate the person granted, at every merchant, newest first."),
});

export const revokedSchema = v.object({
  revoked: described(
    v.array(v.object({ mandate_id: v.string(), already_revoked: v.boolean(), revoked_at: v.string() })),
    "Each mandate revoked by this request (already_revoked: it was before).",
  ),
});
