/** The management slice of the RPC catalogue (shared/kernel/db/rpc.ts): a merchant's own account through /v1 (docs/management.md). */

import type { KeysetAfter, KeysetPage } from "../kernel/cursor";
import type { Environment, KeyKind } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";
import type { HostedSessionRecord, HostedSessionView } from "../sessions/rpc";
import type { EndpointView } from "../webhooks/rpc";

/** Who acted, as the audit log keeps it. */
export interface Actor {
  kind: "api_key" | "owner";
  /** The key's public id (key_…), or the owner's subject_ref. */
  id: string;
  ip: string | null;
}

/** The request every management RPC is scoped by: the merchant and environment of the caller, its clock. */
export interface ManagementScope {
  merchant_id: Uuid;
  environment: Environment;
  now: Iso;
}

/** A write: the scope, and who acted, for the audit log. */
export type ManagementWrite = ManagementScope & { actor: Actor };

export interface KeyRow {
  id: string;
  object: "api_key";
  name: string | null;
  kind: KeyKind;
  environment: Environment;
  scopes: string[];
  hint: string;
  status: "active" | "expiring" | "expired" | "revoked";
  created_at: Iso;
  last_used_at: Iso | null;
  expires_at: Iso | null;
  revoked_at: Iso | null;
  rolled_to: string | null;
}

/** An uploaded logo or font, as /v1/theme_assets shows it (never its content). */
export interface ThemeAssetRow {
  id: string;
  object: "theme_asset";
  kind: "logo" | "font";
  content_type: string;
  family: string | null;
  bytes: number;
  sha256: string;
  created_at: Iso;
}

/** A stored theme row of one stage (private.theme_result): its tokens as stored, asset ids included. */
export interface StoredTheme {
  merchant_id: Uuid;
  surface: "capture" | "mandate";
  stage: "draft" | "published";
  version: number;
  updated_at: Iso;
  theme: Record<string, string | number | null>;
}

/** An owner's console session as the console reads it (private.owner_session_json). */
export interface OwnerSessionView {
  session_id: Uuid;
  merchant_id: Uuid;
  merchant_name: string;
  environment: Environment;
  identity_id: Uuid;
  subject_ref: string;
  csrf_hash: string;
  expires_at: Iso;
  idle_expires_at: Iso;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    management_keys_list: [ManagementScope, { data: KeyRow[] }];
    management_key_create: [
      ManagementWrite & { kind: KeyKind; scopes: string[]; name?: string; key_hash: string; key_hint: string },
      KeyRow,
    ];
    management_key_roll: [
      ManagementWrite & { key_id: Uuid; overlap_seconds: number; key_hash: string; key_hint: string },
      { key: KeyRow; rolled: KeyRow },
    ];
    management_key_revoke: [ManagementWrite & { key_id: Uuid }, KeyRow];
    management_endpoint_create: [
      ManagementWrite & { endpoint_id: Uuid; url: string; event_types: string[] | null; sealed_secret: string; secret_hint: string },
      EndpointView,
    ];
    management_endpoint_get: [ManagementScope & { endpoint_id: Uuid }, EndpointView];
    management_endpoint_update: [ManagementWrite & { endpoint_id: Uuid; url?: string; event_types?: string[] | null }, EndpointView];
    management_endpoint_set_status: [ManagementWrite & { endpoint_id: Uuid; status: "active" | "disabled" }, EndpointView];
    management_endpoint_rotate: [
      ManagementWrite & { endpoint_id: Uuid; sealed_secret: string; secret_hint: string; overlap_seconds: number },
      EndpointView & { previous_valid_until: Iso },
    ];
    management_endpoint_test: [ManagementWrite & { endpoint_id: Uuid }, { event_id: Uuid; delivery_id: string }];
    management_deliveries_page: [
      Omit<ManagementScope, "now"> & {
        limit: number;
        endpoint_id?: Uuid;
        delivery_id?: Uuid;
        event_id?: Uuid;
        state?: string;
        after?: KeysetAfter;
      },
      KeysetPage<Record<string, unknown>>,
    ];
    management_delivery_replay: [ManagementWrite & { delivery_id: Uuid }, { events: number; deliveries: number }];
    management_events_replay: [ManagementWrite & { from: Iso; to: Iso; endpoint_id?: Uuid }, { events: number; deliveries: number }];
    management_audit_page: [
      Omit<ManagementScope, "now"> & { limit: number; action?: string; from?: Iso; to?: Iso; after?: KeysetAfter },
      KeysetPage<Record<string, unknown>>,
    ];
    management_owners_list: [
      ManagementScope,
      { owners: { object: "owner"; subject_ref: string; added_at: Iso }[]; invitations: Record<string, unknown>[] },
    ];
    management_owner_invite: [ManagementWrite & { subject_ref: string; session_id: Uuid; expires_at: Iso }, Record<string, unknown>];
    management_owner_remove: [ManagementWrite & { subject_ref: string }, { object: "owner"; subject_ref: string; removed: true }];
    management_sessions_page: [
      ManagementScope & { limit: number; status?: string; mode?: string; facetoken?: string; after?: KeysetAfter },
      KeysetPage<Record<string, unknown>>,
    ];
    management_receipts_page: [
      Omit<ManagementScope, "now"> & { limit: number; facetoken?: string; action?: string; code?: string; after?: KeysetAfter },
      KeysetPage<Record<string, unknown>>,
    ];
    management_consents_page: [
      Omit<ManagementScope, "now"> & { limit: number; facetoken?: string; status?: string; after?: KeysetAfter },
      KeysetPage<Record<string, unknown>>,
    ];
    management_disclosures_page: [
      ManagementScope & { limit: number; facetoken?: string; status?: string; after?: KeysetAfter },
      KeysetPage<Record<string, unknown>>,
    ];
    management_account: [Omit<ManagementScope, "now">, Record<string, unknown> | null];
    management_account_update: [ManagementWrite & { at_limit_threshold_percent: number }, Record<string, unknown>];
    management_theme_asset_create: [
      ManagementWrite & { kind: string; content_type: string; family?: string; content_base64: string; sha256: string },
      ThemeAssetRow,
    ];
    management_theme_assets_list: [{ merchant_id: Uuid }, { data: ThemeAssetRow[] }];
    management_themes_get: [{ merchant_id: Uuid; surface: string }, { draft: StoredTheme | null; published: StoredTheme | null }];
    management_theme_draft: [
      ManagementWrite & { surface: string; theme: Record<string, unknown> },
      { draft: StoredTheme; problems?: undefined } | { problems: string[]; draft?: undefined },
    ];
    management_checks_by_day: [
      ManagementScope & { days: number },
      {
        data: { day: string; completed: number; failed: number }[];
        recent_failures: { at: Iso | null; action: string; state: string; reason: string | null }[];
      },
    ];
    management_mandate_revoke: [ManagementWrite & { mandate_id: Uuid; reason?: string }, Record<string, unknown> | null];
    owner_sign_in_begin: [
      { session: HostedSessionRecord; browser_hash: string },
      { started: false } | { started: true; session: HostedSessionView },
    ];
    owner_sign_in_finish: [
      {
        session_id: Uuid;
        browser_hash: string;
        now: Iso;
        ip: string | null;
        owner_session: { id: Uuid; token_hash: string; csrf_hash: string; idle_seconds: number; ttl_seconds: number };
      },
      { signed_in: true; session: OwnerSessionView } | { signed_in: false; reason: string },
    ];
    owner_session_touch: [{ token_hash: string; now: Iso }, { session: OwnerSessionView } | { reason: "unknown" | "ended" | "expired" }];
    owner_session_end: [{ session_id: Uuid; now: Iso; everywhere: boolean; ip: string | null }, { ended: number }];
    owner_merchants: [{ identity_id: Uuid }, { data: { merchant_id: Uuid; name: string; environment: Environment }[] }];
    owner_console_sweep: [{ now: Iso }, { sign_ins: number; sessions: number }];
    management_theme_publish: [ManagementWrite & { surface: string; version: number }, { published: StoredTheme }];
  }
}
