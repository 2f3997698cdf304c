/** The persons' slice of the RPC catalogue (shared/kernel/db/rpc.ts): a person's sign-in, session and own page. */
import type { DeviceCredentialRow } from "../devices/rpc";
import type { Environment } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";
import type { HostedSessionRecord, HostedSessionView } from "../sessions/rpc";

/** Why a sign-in did not sign anyone in (docs/decisions.md, D-465). */
export type SignInRefusal = "unknown" | "used" | "pending" | "refused" | "stale" | "unreachable";

/** A person's session as a request authenticates it. */
export interface PersonSessionView {
  session_id: Uuid;
  identity_id: Uuid;
  environment: Environment;
  csrf_hash: string;
  expires_at: Iso;
  idle_expires_at: Iso;
}

/** A mandate as the person's page shows it (private.person_mandate_json). */
export interface PersonMandateView {
  mandate_id: string;
  status: string;
  granted_to: string;
  granted_to_kind: string;
  agent_display_name?: string;
  agent_descriptor?: string;
  scopes: string[];
  ceiling: { kind: string; amount: number | null; currency: string | null; count: number | null; period: string };
  remaining: { amount: number | null; currency: string | null; count: number | null; period_resets_at: Iso | null };
  expires_at: Iso;
  created_at: Iso;
  revoked_at: Iso | null;
  merchant: { merchant_id: Uuid; name: string };
  last_consumptions: { consumption_id: string; scope: string; amount?: number; currency?: string; created_at: Iso }[];
  [field: string]: unknown;
}

/** A merchant that holds the person, with the consents the person gave it (public.person_merchants). */
export interface PersonMerchantView {
  merchant_id: Uuid;
  name: string;
  known_since: Iso;
  consent_state: "active" | "revoked" | "missing";
  consents: {
    version: string;
    retention_days: number;
    granted_at: Iso;
    retained_until: Iso;
    ended_at: Iso | null;
    ended_by: "consent_withdrawn" | "consent_expired" | null;
  }[];
}

/** The person's consent ledger, readable, and its chain checked (public.person_consent_ledger). */
export interface PersonLedgerView {
  entries: {
    seq: number;
    kind: string;
    merchant: { merchant_id: Uuid; name: string };
    recorded_at: Iso;
    ends_seq?: number;
    version?: string;
    retention_days?: number;
    purpose?: string;
    claims?: { key: string; disclosure_type: string; status: string }[];
    disclosure_expires_at?: Iso;
    reason?: string;
    prev_hash: string;
    row_hash: string;
  }[];
  verification: { ok: boolean; entries: number; breaks: { seq: number; reason: string }[] };
}

/** What one merchant received about the person (public.person_disclosures). */
export interface PersonDisclosureView {
  disclosure_seq: number;
  merchant: { merchant_id: Uuid; name: string };
  disclosed_at: Iso;
  purpose: string;
  claims: { key: string; disclosure_type: string; status: string }[];
  expires_at: Iso;
  revoked_at: Iso | null;
}

/** One of the person's own acts, approved with its receipt or refused (public.person_receipts). */
export interface PersonActView {
  transaction_id: Uuid;
  merchant: { merchant_id: Uuid; name: string };
  action: string;
  purpose: string | null;
  approved: boolean;
  refusal: string | null;
  assurance_level: string | null;
  amount: { minor: number; currency: string } | null;
  created_at: Iso;
  receipt: { receipt_id: Uuid; code: string; issued_at: Iso } | null;
}

interface PersonAt {
  identity_id: Uuid;
  environment: Environment;
  now: Iso;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    person_sign_in_begin: [
      { session: HostedSessionRecord; browser_hash: string },
      { started: false } | { started: true; session: HostedSessionView },
    ];
    person_sign_in_finish: [
      {
        session_id: Uuid;
        browser_hash: string;
        now: Iso;
        person_session: { id: Uuid; token_hash: string; csrf_hash: string; idle_seconds: number; ttl_seconds: number };
      },
      { signed_in: true; environment: Environment; expires_at: Iso; idle_expires_at: Iso } | { signed_in: false; reason: SignInRefusal },
    ];
    person_passkey_challenge_issue: [
      { environment: Environment; challenge_hash: string; browser_hash: string; ttl_seconds: number; now: Iso },
      { expires_at: Iso },
    ];
    person_passkey_attempt: [
      { environment: Environment; challenge_hash: string; browser_hash: string; credential_id: string; now: Iso },
      {
        challenge: "consumed" | "unknown" | "used" | "expired";
        locked_until: Iso | null;
        device: DeviceCredentialRow | null;
        merchant_id: Uuid | null;
      },
    ];
    person_passkey_refused: [{ environment: Environment; credential_id: string; reason: string; now: Iso }, { locked_until: Iso | null }];
    person_passkey_sweep: [{ now: Iso }, { challenges: number; refusals: number; sign_ins: number }];
    person_passkey_sign_in_begin: [
      { session: HostedSessionRecord; browser_hash: string; identity_id: Uuid; device_id: Uuid },
      { started: false } | { started: true; session: HostedSessionView },
    ];
    person_session_touch: [{ token_hash: string; now: Iso }, PersonSessionView | { reason: "unknown" | "ended" | "expired" }];
    person_session_end: [{ session_id: Uuid; now: Iso }, { ended: true }];
    person_mandates: [PersonAt, PersonMandateView[]];
    person_merchants: [{ identity_id: Uuid; environment: Environment }, PersonMerchantView[]];
    person_consent_ledger: [{ identity_id: Uuid }, PersonLedgerView];
    person_consent_withdraw: [
      PersonAt & { merchant_id: Uuid; reason?: string },
      { revoked: true; already_revoked: boolean; revoked_at: Iso } | null,
    ];
    person_disclosures: [{ identity_id: Uuid }, PersonDisclosureView[]];
    person_receipts: [{ identity_id: Uuid; environment: Environment }, PersonActView[]];
    person_presence_begin: [
      { session: HostedSessionRecord; person_session_id: Uuid; identity_id: Uuid },
      { started: false } | { started: true; session: HostedSessionView },
    ];
    person_erase: [
      PersonAt & { person_session_id: Uuid; presence_session_id: Uuid; merchant_id?: Uuid },
      (
        | { erased: true; merchants: number; identity_erased: boolean }
        | { erased: false; reason: "unknown" | "used" | "pending" | "refused" | "stale" | "mismatch" }
        | null
      ),
    ];
    person_export_create: [PersonAt & { id: Uuid; ttl_seconds: number }, { export_id: string; expires_at: Iso } | null];
    person_export_take: [{ id: Uuid; identity_id: Uuid; now: Iso }, { content: Record<string, unknown> } | null];
    person_mandate_revoke: [
      PersonAt & { reason?: string } & ({ mandate_id: Uuid } | { merchant_id: Uuid; granted_to: string }),
      { revoked: { mandate_id: string; already_revoked: boolean; revoked_at: Iso }[] } | null,
    ];
  }
}
