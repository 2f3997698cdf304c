/** The webhooks' slice of the RPC catalogue (shared/kernel/db/rpc.ts): endpoints, their secrets, fan-out and delivery. */

import type { Environment } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";

export interface EndpointView {
  endpoint_id: Uuid;
  merchant_id: Uuid;
  environment: Environment;
  url: string;
  event_types: string[] | null;
  status: "active" | "disabled";
  disabled_reason: "manual" | "gone" | null;
  disabled_at: Iso | null;
  created_at: Iso;
  secrets: { hint: string; created_at: Iso; expires_at: Iso | null }[];
  deliveries: { pending: number; succeeded: number; failed: number };
  /** The latest failed attempt of any of its deliveries and why (null when none failed). */
  last_error: { at: Iso | null; event_id: Uuid; state: string; status: number | null; error: string } | null;
}

/**
 * A merchant whose events a quick pass may fan out and deliver (docs/webhooks.md#delivery): in one
 * environment, or in both when the caller does not know which (the hosted screen's completion).
 */
export interface DeliveryScope {
  merchant_id: Uuid;
  environment?: Environment;
}

export interface ClaimedDelivery {
  delivery_id: Uuid;
  lease_token: string;
  attempt: number;
  window_start: Iso;
  endpoint_id: Uuid;
  event: { id: string; type: string; created_at: Iso; api_version: string; livemode: boolean; data: Record<string, unknown> };
}

export interface ClaimedEndpoint {
  endpoint_id: Uuid;
  url: string;
  sealed_secrets: string[];
}

/** What the delivery log keeps of a sent attempt (private.webhook_delivery_attempts). */
interface AttemptTrace {
  latency_ms?: number;
  response_excerpt?: string | null;
}

type DeliveryOutcome =
  | ({ outcome: "succeeded" | "failed"; status: number | null; error?: string | null; attempted_at: Iso; gone?: boolean } & AttemptTrace)
  | ({ outcome: "retry"; status: number | null; error: string | null; attempted_at: Iso; next_attempt_at: Iso } & AttemptTrace)
  | { outcome: "released" };

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    webhook_deliveries_claim: [
      { now: Iso; limit?: number; lease_seconds: number; scope?: DeliveryScope[] },
      { deliveries: ClaimedDelivery[]; endpoints: ClaimedEndpoint[] },
    ];
    webhook_deliveries_record: [
      { now: Iso; results: (DeliveryOutcome & { delivery_id: Uuid; lease_token: string })[] },
      { recorded: number; stale: number; endpoints_disabled: number },
    ];
    webhook_endpoint_create: [
      {
        endpoint_id: Uuid;
        merchant_id: Uuid;
        environment: Environment;
        url: string;
        event_types: string[] | null;
        sealed_secret: string;
        secret_hint: string;
        now: Iso;
      },
      EndpointView,
    ];
    webhook_endpoint_get: [{ endpoint_id: Uuid; now: Iso }, EndpointView | null];
    webhook_endpoint_list: [{ merchant_id: Uuid; environment?: Environment; now: Iso }, { endpoints: EndpointView[] }];
    webhook_endpoint_disable: [{ endpoint_id: Uuid; now: Iso }, EndpointView & { already_disabled: boolean; failed_deliveries: number }];
    webhook_fanout: [{ now: Iso; limit?: number; scope?: DeliveryScope[] }, { events: number; deliveries: number }];
    webhook_replay: [
      ({ event_id: Uuid } | { merchant_id: Uuid; environment: Environment; from: Iso; to: Iso }) & { endpoint_id?: Uuid; now: Iso },
      { events: number; deliveries: number },
    ];
    webhook_secret_rotate: [
      { endpoint_id: Uuid; sealed_secret: string; secret_hint: string; overlap_seconds: number; now: Iso },
      EndpointView & { previous_valid_until: Iso },
    ];
    webhook_secrets_sealed: [Record<never, never>, { secret_id: Uuid; endpoint_id: Uuid; sealed_secret: string }[]];
    webhook_secrets_reseal: [
      { secrets: { secret_id: Uuid; sealed_secret: string; resealed_secret: string }[] },
      { resealed: number; skipped: number },
    ];
  }
}
