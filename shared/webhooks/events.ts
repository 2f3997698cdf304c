/**
 * The event catalogue (resource API section 6; docs/webhooks.md): every event type an endpoint can
 * subscribe to, when it fires and the fields of its `data`. The catalogue is open: a new type is one
 * entry here plus the RPC that emits it through `private.outbox_emit`. Endpoints that subscribe to
 * everything (the default) receive new types without being touched.
 */

interface EventDefinition {
  /** When the event is written, in the words of the spec. */
  firesWhen: string;
  /** The fields of `data`, in the order documented. */
  data: readonly string[];
}

export const eventCatalogue = {
  "mandate.granted": {
    firesWhen: "A verified human issued a mandate; sent once, after the grant is anchored.",
    data: ["mandate_id", "granted_to", "granted_to_kind", "scopes", "ceiling", "expires_at", "assurance_level", "step_up_of"],
  },
  "mandate.consumed": {
    firesWhen: "An action consumed part of the ceiling; one per consuming check. `remaining` is authoritative.",
    data: ["mandate_id", "consumption_id", "scope", "amount", "currency", "action_ref", "remaining", "period_resets_at", "at_limit"],
  },
  "mandate.at_limit": {
    firesWhen: "The remaining ceiling crossed the merchant's configured threshold, before the agent is refused.",
    data: ["mandate_id", "consumption_id", "remaining", "period_resets_at", "threshold_percent"],
  },
  "mandate.revoked": {
    firesWhen: "The granter revoked a mandate; effective on the agent's next request.",
    data: ["mandate_id", "granted_to", "revoked_at", "reason", "revoked_by"],
  },
  "device.registered": {
    firesWhen:
      "A device (a passkey) was registered for a person the merchant holds: at enrollment, approved by another of their devices, or re-proved with a document.",
    data: ["device_id", "subject_ref", "device_binding", "registered_via", "created_at"],
  },
  "device.revoked": {
    firesWhen: "A person the merchant holds revoked one of their devices; it signs nothing from the next request on.",
    data: ["device_id", "subject_ref", "revoked_at"],
  },
  "consent.withdrawn": {
    firesWhen:
      "The person withdrew their consent with the merchant on their own page (docs/decisions.md, D-468); revoke-consent's effect, at once.",
    data: ["subject_ref", "withdrawn_at", "withdrawn_by"],
  },
  "identity.erased": {
    firesWhen:
      "The person erased themselves at this merchant (or at every merchant) on their own page (docs/decisions.md, D-470); nothing else is said.",
    data: ["subject_ref", "erased_at"],
  },
  "session.completed": {
    firesWhen: "A hosted session ended with an outcome: completed, failed (the capture was refused) or cancelled by the person.",
    data: ["id", "metadata", "state", "action", "external_txn_ref", "ended_at", "result"],
  },
  "session.expired": {
    firesWhen: "A hosted session was not finished within its ttl_seconds; written by the outbox worker's first tick after expires_at.",
    data: ["id", "metadata", "state", "action", "external_txn_ref", "ended_at", "result"],
  },
  "webhook.test": {
    firesWhen:
      "The merchant asked to test an endpoint (POST /v1/webhook_endpoints/{id}/test, or the console): sent to that endpoint only, never fanned out.",
    data: ["endpoint_id", "message"],
  },
} as const satisfies Record<string, EventDefinition>;

type EventType = keyof typeof eventCatalogue;

/** Every known type, in catalogue order. */
export const eventTypes = Object.keys(eventCatalogue) as EventType[];

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(eventCatalogue, value);
}

/**
 * The body of every delivery (resource API 2.4). `id` is the outbox event id: the same on every
 * attempt and every replay, so the receiver deduplicates on it. `attempt` counts from 1.
 */
export interface WebhookEnvelope<T = Record<string, unknown>> {
  id: string;
  type: string;
  created_at: string;
  api_version: string;
  attempt: number;
  data: T;
}
