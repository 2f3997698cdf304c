/**
 * What the management operations answer, as schemas (docs/management.md): the OpenAPI document
 * declares them and the tests hold every answer to them. Answers are open objects.
 */
import * as v from "valibot";
import { described, instant, orNull } from "../kernel/answers";
import { keyScopes } from "./caller";
import { deliveryStates } from "./webhooks";

const when = (description: string) => orNull(v.pipe(v.string(), v.isoTimestamp()), description);
/** A cursor page of `item`s (every list of the management API). */
export const list = <S extends v.GenericSchema>(item: S, description: string) =>
  v.object({
    object: v.literal("list"),
    data: described(v.array(item), description),
    next_cursor: orNull(v.string(), "The cursor of the next page (opaque); null on the last page."),
  });

export const apiKeySchema = v.object({
  id: described(v.pipe(v.string(), v.startsWith("key_")), "The key's id (never the key)."),
  object: v.literal("api_key"),
  name: orNull(v.string(), "The label given at creation."),
  kind: described(v.picklist(["secret", "publishable"]), "secret (sk_, servers) or publishable (pk_, browsers)."),
  environment: described(v.picklist(["test", "live"]), "The workspace the key acts in."),
  scopes: described(v.array(v.picklist(keyScopes)), "What the key may do: api, management.read, management.write."),
  hint: described(v.string(), "The key's prefix and last four characters."),
  status: described(
    v.picklist(["active", "expiring", "expired", "revoked"]),
    "active; expiring (rolled, working until expires_at); expired; revoked.",
  ),
  created_at: instant("When it was minted."),
  last_used_at: when("When it last authenticated a request (to the minute); null when never."),
  expires_at: when("When a rolled key stops working; null for a key without an end."),
  revoked_at: when("When it was revoked; null while not."),
  rolled_to: orNull(v.string(), "The key that replaced it, when it was rolled."),
});

export const apiKeyListSchema = list(apiKeySchema, "Every key of this environment, newest first.");

export const createdKeySchema = v.object({
  ...apiKeySchema.entries,
  secret: orNull(
    v.pipe(v.string(), v.regex(/^(sk|pk)_(test|live)_/)),
    "The key itself: in this answer only, store it now (null when a retry under the same Idempotency-Key replays the answer).",
  ),
});

export const rolledKeySchema = v.object({
  ...createdKeySchema.entries,
  rolled: described(apiKeySchema, "The key it replaces, now expiring at expires_at."),
});

const secretHintSchema = v.object({
  hint: described(v.string(), "The secret's prefix and last four characters."),
  created_at: described(v.string(), "When it was made."),
  expires_at: orNull(v.string(), "When it stops signing (a rotated secret); null for the current one."),
});

export const endpointSchema = v.object({
  id: described(v.pipe(v.string(), v.startsWith("we_")), "The endpoint's id."),
  object: v.literal("webhook_endpoint"),
  environment: described(v.picklist(["test", "live"]), "Whose events it receives: this environment's only."),
  url: described(v.string(), "Where events are POSTed (https)."),
  event_types: orNull(v.array(v.string()), "The types it receives; null for every type, later ones included."),
  status: described(v.picklist(["active", "disabled"]), "active, or disabled (nothing is sent)."),
  disabled_reason: orNull(v.picklist(["manual", "gone"]), "manual (disabled on request) or gone (it answered 410)."),
  disabled_at: orNull(v.string(), "When it was disabled."),
  created_at: described(v.string(), "When it was registered."),
  secrets: described(v.array(secretHintSchema), "The secrets signing now (two during a rotation): hints only."),
  deliveries: described(
    v.object({ pending: v.number(), succeeded: v.number(), failed: v.number() }),
    "How many of its deliveries are in each state.",
  ),
  last_error: orNull(v.record(v.string(), v.unknown()), "The latest failed attempt of its deliveries and why; null when none failed."),
});

export const endpointListSchema = list(endpointSchema, "Every endpoint of this environment, oldest first.");

export const createdEndpointSchema = v.object({
  ...endpointSchema.entries,
  secret: orNull(
    v.pipe(v.string(), v.startsWith("whsec_")),
    "The signing secret: in this answer only (null when a retry under the same Idempotency-Key replays the answer).",
  ),
});

export const rotatedEndpointSchema = v.object({
  ...createdEndpointSchema.entries,
  previous_valid_until: described(v.string(), "Until when the earlier secrets keep signing beside the new one."),
});

export const testEventSchema = v.object({
  object: v.literal("webhook_test"),
  event_id: described(v.pipe(v.string(), v.uuid()), "The webhook.test event's id (the envelope's id)."),
  delivery_id: described(v.pipe(v.string(), v.startsWith("whd_")), "Its delivery to this endpoint: see GET /webhook_deliveries/{id}."),
});

export const replaySchema = v.object({
  object: v.literal("webhook_replay"),
  events: described(v.number(), "How many events were queued again."),
  deliveries: described(v.number(), "How many new deliveries that made."),
});

const attemptSchema = v.object({
  attempt: described(v.number(), "The attempt's number, from 1 (the envelope's attempt)."),
  attempted_at: instant("When it was sent."),
  outcome: described(
    v.picklist(["succeeded", "retry", "failed"]),
    "succeeded (2xx), retry (failed, tried again later) or failed (given up).",
  ),
  response_status: orNull(v.number(), "The receiver's HTTP status; null when none came."),
  latency_ms: orNull(v.number(), "From sending to the answer, in milliseconds."),
  response_excerpt: orNull(v.string(), "The first 256 characters of the receiver's answer."),
  error: orNull(v.string(), "Why it failed; null on success."),
  next_attempt_at: when("When the next attempt is due, for an attempt that is retried."),
});

export const deliverySchema = v.object({
  id: described(v.pipe(v.string(), v.startsWith("whd_")), "The delivery's id."),
  object: v.literal("webhook_delivery"),
  endpoint_id: described(v.pipe(v.string(), v.startsWith("we_")), "The endpoint it goes to."),
  origin: described(v.picklist(["fanout", "replay", "test"]), "fanout (the event's first delivery), replay or test."),
  state: described(v.picklist(deliveryStates), "pending, delivering, succeeded or failed."),
  created_at: instant("When it was queued."),
  next_attempt_at: when("When it is due next, while pending."),
  finished_at: when("When it succeeded or was given up."),
  event: described(
    v.object({
      id: v.string(),
      type: v.string(),
      created_at: v.string(),
      api_version: v.string(),
      data: v.record(v.string(), v.unknown()),
    }),
    "The event sent: the envelope's fields but attempt (the payload viewer's content).",
  ),
  attempts: described(v.array(attemptSchema), "Every attempt, first first."),
});

export const deliveryListSchema = list(deliverySchema, "Deliveries, newest first.");

export const auditEventSchema = v.object({
  id: described(v.pipe(v.string(), v.startsWith("aud_")), "The audit event's id."),
  object: v.literal("audit_event"),
  occurred_at: instant("When the action was taken."),
  environment: described(v.picklist(["test", "live"]), "The workspace it was taken in."),
  actor: described(
    v.object({ kind: v.picklist(["api_key", "owner"]), id: v.string(), ip: v.nullable(v.string()) }),
    "Who acted: a key (its id) or an owner (their subject_ref), and from which address.",
  ),
  action: described(v.string(), "What was done: <object>.<verb>, e.g. api_key.rolled."),
  object_type: described(v.string(), "The kind of object acted on."),
  object_id: orNull(v.string(), "The object's id."),
  before: orNull(v.unknown(), "The object before, where it is safe to keep (never a secret)."),
  after: orNull(v.unknown(), "The object after, where it is safe to keep (never a secret)."),
});

export const auditListSchema = list(auditEventSchema, "Audit events, newest first.");

export const accountSchema = v.object({
  id: described(v.pipe(v.string(), v.uuid()), "The merchant's id."),
  object: v.literal("account"),
  name: described(v.string(), "The merchant's name."),
  environment: described(v.picklist(["test", "live"]), "The workspace the key acts in."),
  api_version: described(v.string(), "The pinned Service-Version."),
  at_limit_threshold_percent: described(
    v.number(),
    "When mandate.at_limit fires: at most this percentage of the ceiling left (0: at zero).",
  ),
});

export const auditExportAnswerSchema = v.object({
  object: v.literal("audit_export"),
  data: described(v.array(auditEventSchema), "The range's events, newest first."),
  truncated: described(
    v.boolean(),
    "Whether the range holds more than this answer (10,000): export the rest with to set to the last occurred_at.",
  ),
});

const subjectRefField = described(v.pipe(v.string(), v.startsWith("sub_")), "The person, by the merchant's pseudonym for them.");

export const invitationSchema = v.object({
  id: described(v.pipe(v.string(), v.startsWith("inv_")), "The invitation's id."),
  object: v.literal("owner_invitation"),
  subject_ref: subjectRefField,
  session_id: described(v.pipe(v.string(), v.startsWith("hs_")), "The recognise session the person accepts in."),
  status: described(v.picklist(["pending", "accepted", "expired"]), "pending, accepted (they proved presence) or expired."),
  invited_by: described(v.string(), "Who invited: a key's id or an owner's subject_ref."),
  created_at: instant("When it was made."),
  expires_at: instant("When it lapses unaccepted (its session's end)."),
  accepted_at: when("When the person accepted."),
});

export const createdInvitationSchema = v.object({
  ...invitationSchema.entries,
  url: orNull(
    v.string(),
    "Where the person accepts by proving presence: the session's single-use url, in this answer only (null on a replay).",
  ),
});

export const ownerListSchema = v.object({
  object: v.literal("list"),
  data: described(
    v.array(v.object({ object: v.literal("owner"), subject_ref: subjectRefField, added_at: instant("When they became an owner.") })),
    "The owners of this environment, oldest first.",
  ),
  invitations: described(v.array(invitationSchema), "Invitations, newest first."),
  next_cursor: orNull(v.string(), "Always null: every owner is on one page."),
});

export const removedOwnerSchema = v.object({
  object: v.literal("owner"),
  subject_ref: subjectRefField,
  removed: described(v.literal(true), "The person no longer owns the account."),
});

export const usageSchema = v.object({
  object: v.literal("usage"),
  environment: described(v.picklist(["test", "live"]), "The workspace counted."),
  month: described(v.string(), "YYYY-MM (UTC)."),
  period_start: described(v.string(), "The month's first instant."),
  period_end: described(v.string(), "The next month's first instant."),
  claims_billed: described(v.number(), "Claims billed in the month."),
  persons_billed: described(v.number(), "Persons ever billed (for life)."),
  allowance: described(v.number(), "Billed claims allowed per month (the operator sets it)."),
  allowance_remaining: described(v.number(), "What is left of it this month."),
});
