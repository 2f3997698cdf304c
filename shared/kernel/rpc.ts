/**
 * The kernel's slice of the RPC catalogue (shared/kernel/db/rpc.ts): authentication, the response
 * store, the circuit breaker; and the shapes every slice shares (the tenant and instant of a call,
 * a request to authenticate, a response-store record).
 */
import type { Environment, KeyKind } from "./principal";

/** An instant as the RPCs take and answer it: ISO 8601. */
export type Iso = string;
export type Uuid = string;

/** The tenant a call acts for and the instant it acts at (the clock is the edge's, never the database's). */
export interface TenantAt {
  merchant_id: Uuid;
  environment: Environment;
  now: Iso;
}

/** Who calls (a key to authenticate, or a tenant the edge authenticated) and the nonce to claim. */
/** Whose circuit breaker: a deployment's function (its merchant and environment are the caller's). */
export interface BreakerScope {
  deployment: string;
  function_name: string;
}

/** A circuit breaker's state: open (the function paused) and for how long. */
export interface BreakerState {
  open: boolean;
  retry_after_seconds: number;
}

export type AuthenticatedRequest = (
  | { credential: { key_hash: string; kind: KeyKind; environment: Environment } }
  | { tenant: { merchant_id: Uuid; environment: Environment } }
) & { now: Iso; nonce?: string; window_seconds?: number };

/** A record of the response store (private.idempotency_keys): whose request, to which function, under which key. */
export interface IdempotencyRecord {
  merchant_id: Uuid;
  environment: Environment;
  function_name: string;
  key: string;
}

/**
 * A request's in-flight record in the response store, for the RPC that performs the request's act to
 * complete with the answer in the act's own transaction; `stored` says it did, so nothing stores the
 * answer again after the act.
 */
export interface PendingResponse {
  record: IdempotencyRecord;
  stored: boolean;
  /** The mandate the request consumed, when its act's RPC stored nothing: its replays go to the mandate's ledger. */
  mandateId?: Uuid;
}

/** The answer an act stores under its request's record, in the act's own transaction. */
export interface StoredResponse {
  record: IdempotencyRecord;
  status: number;
  body: unknown;
}

type IdempotencyBegin =
  | { outcome: "started" }
  | { outcome: "in_flight"; running_seconds: number; lease_left_seconds: number }
  | { outcome: "mismatch" }
  | { outcome: "replay"; status: number; body: unknown }
  /** The request consumed a mandate: the mandate's ledger answers its replay. */
  | { outcome: "ledger" };

declare module "./db/rpc" {
  interface RpcCatalogue {
    request_authenticate: [
      AuthenticatedRequest & { breaker?: BreakerScope },
      { key_id: Uuid | null; merchant_id: Uuid; environment: Environment; breaker?: BreakerState },
    ];
    bearer_key_authenticate: [
      AuthenticatedRequest & { credential: unknown },
      { key_id: Uuid; merchant_id: Uuid; environment: Environment; api_version: string; scopes: string[] },
    ];
    idempotency_begin: [
      IdempotencyRecord & {
        request_hash: string;
        now: Iso;
        lease_seconds: number;
        retention_seconds: number;
        nonce?: string;
        window_seconds?: number;
      },
      IdempotencyBegin,
    ];
    idempotency_finish: [IdempotencyRecord & { status: number; body: unknown; mandate_id?: Uuid }, unknown];
    circuit_breaker_state: [BreakerScope & { merchant_id: string; environment: Environment; now: Iso }, BreakerState];
    circuit_breaker_record: [
      {
        deployment: string;
        function_name: string;
        merchant_id: string;
        environment: Environment;
        now: Iso;
        window_seconds: number;
        threshold: number;
        open_seconds: number;
      },
      unknown,
    ];
  }
}
