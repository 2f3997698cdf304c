/**
 * The sessions' slice of the RPC catalogue (shared/kernel/db/rpc.ts): a hosted session's life
 * (create, consume at the screen, complete or cancel, expire) and the /v1 sessions built on it.
 */
import type { ScreenCard, ScreenModeTerms } from "../contracts/hosted-screen";
import type { Environment } from "../kernel/principal";
import type { IdempotencyRecord, Iso, TenantAt, Uuid } from "../kernel/rpc";

/** A hosted session's stored state; reads report `expired` as soon as `expires_at` passes. */
type HostedSessionState = "open" | "opened" | "completed" | "failed" | "cancelled" | "expired";

/** A hosted session as hosted_session_create stores it. */
export interface HostedSessionRecord {
  id: Uuid;
  merchant_id: Uuid;
  environment: Environment;
  token_hash: string;
  action: string;
  external_txn_ref?: string;
  amount_cents?: number;
  currency?: string;
  brand?: string;
  /** The merchant page's origin that opens the screen in a popup (D-643). */
  opener_origin?: string;
  metadata: Record<string, string>;
  ttl_seconds: number;
  now: Iso;
}

/** A hosted session as every session RPC shows it (function API 2.7 without the token, plus state and outcome). */
export interface HostedSessionView {
  session_id: string;
  merchant_id: Uuid;
  action: string;
  external_txn_ref: string | null;
  amount_cents: number | null;
  currency: string | null;
  brand: string | null;
  metadata: Record<string, string>;
  ttl_seconds: number;
  expires_at: Iso;
  single_use: true;
  state: HostedSessionState;
  created_at: Iso;
  opened_at: Iso | null;
  ended_at: Iso | null;
  result: Record<string, unknown> | null;
  /** A /v1 session that just ended (complete, cancel): its /v1 status and the person's way back. */
  status?: string;
  return_url?: string;
  cancel_url?: string;
}

/** A /v1 session (resource API 2.2, 4.5): `url` only on the create's answer. */
export interface ModeSessionView {
  id: string;
  object: "session";
  status: "open" | "completed" | "cancelled" | "expired";
  mode: string;
  metadata: Record<string, string>;
  created_at: Iso;
  expires_at: Iso;
  ended_at: Iso | null;
  result: Record<string, unknown> | null;
  url?: string;
  [field: string]: unknown;
}

/** What a completion needs of the session it started. */
export interface SessionToComplete {
  session_id: Uuid;
  merchant_id: Uuid;
  environment: Environment;
  action: string;
  external_txn_ref: string | null;
  amount_cents: number | null;
  currency: string | null;
  capture_nonce: string;
  /** /v1 modes: the person the session is for, the predicate asked, the mandate's terms. */
  facetoken: string | null;
  attribute: string | null;
  mandate_terms: Record<string, unknown> | null;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    hosted_session_create: [HostedSessionRecord, HostedSessionView];
    hosted_session_consume: [
      {
        token_hash: string;
        now: Iso;
        opened_by: "service" | "merchant";
        merchant_id?: Uuid;
        environment?: Environment;
        capture_nonce: string;
        screen_token_hash: string;
      },
      {
        session: HostedSessionView;
        environment: Environment;
        merchant_name: string;
        card: ScreenCard | null;
        opener_origin: string | null;
        mode?: ScreenModeTerms;
      },
    ];
    hosted_session_get: [TenantAt & { session_id: Uuid }, HostedSessionView | null];
    hosted_session_complete_begin: [{ screen_token_hash: string; now: Iso }, SessionToComplete];
    hosted_session_complete_finish: [
      { session_id: Uuid; now: Iso; state: "completed" | "failed"; result: Record<string, unknown> },
      HostedSessionView,
    ];
    hosted_session_cancel: [{ screen_token_hash: string; now: Iso; reason: string }, HostedSessionView];
    hosted_sessions_expire: [{ now: Iso; limit?: number }, { expired: number }];
    mode_session_create: [
      {
        id: Uuid;
        merchant_id: Uuid;
        environment: Environment;
        token_hash: string;
        mode: string;
        return_url: string;
        cancel_url: string;
        facetoken?: string;
        attribute?: string;
        mandate?: unknown;
        branding?: unknown;
        locale?: string;
        metadata: Record<string, string>;
        now: Iso;
        url: string;
        stored_response?: { record: IdempotencyRecord };
      },
      ModeSessionView,
    ];
    mode_session_get: [TenantAt & { session_id: Uuid }, ModeSessionView | null];
  }
}
