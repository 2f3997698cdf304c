/**
 * The typed RPC catalogue: every `public.<name>(p jsonb) returns jsonb` of supabase/migrations with
 * the shape of its parameter and of its result, and the one function that calls them. A new RPC is
 * added here first; a call with a wrong name, parameter or result type does not compile.
 */
import type { PresenceBaseline } from "../../engine";
import type { Environment, KeyKind } from "../principal";
import { type Queryable, withConnectionRetry } from "./client";

type Iso = string;
type Uuid = string;
type AssuranceLevel = "face" | "face_voice" | "face_voice_doc";

// ---------------------------------------------------------------------------------------------
// Shapes the RPCs answer with
// ---------------------------------------------------------------------------------------------

/** A mandate decision as the database takes it (spec 4.8); messages are added at the edge. */
export interface Decision {
  allowed: boolean;
  reason?: string;
  remaining?: { amount: number | null; currency: string | null; count: number | null };
  period_resets_at?: string | null;
  consumption_id?: string;
  idempotent_replay?: boolean;
  /** On a replay: the mandate's effective status now. */
  mandate_status?: string;
  at_limit?: boolean;
  scope_used?: string;
  [field: string]: unknown;
}

/** A mandate as every mandate RPC shows it (spec 4.7, 4.10). */
interface MandateView {
  mandate_id: string;
  scopes: string[];
  assurance_level: AssuranceLevel;
  granted_to: string;
  agent_display_name?: string;
  agent_descriptor?: string;
  [field: string]: unknown;
}

/** The identity a transaction names, with what the sink needs to judge the act. */
export interface ResolvedIdentity {
  identity_id: Uuid;
  erased: boolean;
  baseline: PresenceBaseline | null;
  template: { key_id: string; embedding: number[] } | null;
  document: { document_type: string; issuing_country: string; expires_on: string; date_of_birth: string | null } | null;
  consent_revoked: boolean;
  session_active: boolean | null;
}

/** An owner of a merchant as the operator sees it: by the merchant's pseudonym. */
export interface MerchantOwner {
  merchant_id: Uuid;
  subject_ref: string;
  environment: Environment;
  added_at: Iso;
}

export interface TemplateMatch {
  identity_id: Uuid;
  similarity: number;
  /** False when the identity was erased: found, but never to be attached to anything. */
  reachable: boolean;
}

type IdempotencyBegin =
  | { outcome: "started" }
  | { outcome: "in_flight"; running_seconds: number; lease_left_seconds: number }
  | { outcome: "mismatch" }
  | { outcome: "replay"; status: number; body: unknown };

export interface StoredReceipt {
  id: Uuid;
  code: string;
  environment: Environment;
  jws: string;
  seal: string;
  issued_at: Iso;
  inclusion_proof: { side: "left" | "right"; hash: string }[] | null;
  anchor: { id: Uuid; root: string; leaf_count: number; sink: string; sink_reference: string | null; anchored_at: Iso } | null;
}

type AnchorRecorded = { recorded: true; anchor_id: Uuid; leaf_count: number } | { recorded: false; unclaimable: number };

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

type DeliveryOutcome =
  | { outcome: "succeeded" | "failed"; status: number | null; error?: string | null; attempted_at: Iso; gone?: boolean }
  | { outcome: "retry"; status: number | null; error: string | null; attempted_at: Iso; next_attempt_at: Iso }
  | { outcome: "released" };

/** A hosted session's stored state; reads report `expired` as soon as `expires_at` passes. */
type HostedSessionState = "open" | "opened" | "completed" | "failed" | "cancelled" | "expired";

/** A hosted session as every session RPC shows it (function API 2.7 without the token, plus state and outcome). */
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
  metadata: Record<string, string>;
  ttl_seconds: number;
  now: Iso;
}

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

/** What a /v1 session asks of the screen (boot's `mode`). */
export interface SessionModeTerms {
  name: string;
  attribute: string | null;
  mandate: Record<string, unknown> | null;
  branding: Record<string, string> | null;
  locale: string | null;
  return_url: string;
  cancel_url: string;
}

/** A /v1 session (resource API 2.2, 4.5): `url` only on the create's answer. */
export interface ResourceSessionView {
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

/** What the hosted screen shows of an agent verification card (hosted_session_consume's `card`). */
export interface CardTerms {
  verification_id: string;
  purpose: string | null;
  agent_name: string | null;
  requested_by: "owner" | "agent";
}

/** An agent verification card as its RPCs answer it: the state derived from its hosted session. */
export interface AgentVerificationView {
  verification_id: string;
  merchant_id: Uuid;
  external_ref: string | null;
  purpose: string | null;
  ttl_seconds: number;
  created_at: Iso;
  expires_at: Iso;
  opened_at: Iso | null;
  ended_at: Iso | null;
  state: "pending" | "opened" | "verified" | "refused" | "expired";
  refusal_reason: string | null;
  assurance_level: AssuranceLevel | null;
  receipt_code: string | null;
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
}

/** The approval every approved act of the transaction sink answers with (spec 4.4). */
export interface Approval {
  success: true;
  status: "approved";
  transaction_id: Uuid;
  service_hash: string;
  immutability_seal: string;
  /** As on the receipt: the level proven at the act, or `mandate` when a mandate stood in. */
  assurance_level: AssuranceLevel | "mandate";
  receipt_id: Uuid;
  receipt_code: string;
}

/** The approval of an act a mandate stood in for, with its mandate block, as mandate_transaction builds and stores it. */
export interface StandInApproval extends Approval {
  assurance_level: "mandate";
  mandate: Record<string, unknown> & { mandate_id: string; consumption_id: string; idempotent_replay: boolean };
}

/** The capture row the transaction sink writes (refusals too, for audit). */
export interface CaptureRow {
  id: Uuid;
  merchant_id: Uuid;
  environment: Environment;
  identity_id?: Uuid;
  action: string;
  service_hash: string;
  amount_minor: number | null;
  currency: string | null;
  capture_nonce: string;
  liveness_passed?: boolean;
  liveness_reason?: string | null;
  coercion_signal?: boolean;
  assurance_level: AssuranceLevel | null;
  face_similarity?: number;
  engine_version: string;
  scenario?: string | null;
  created_at: Iso;
}

/** An identity document that passed passive authentication on a capture, as it is kept on record. */
interface DocumentRow {
  document_type: string;
  issuing_country: string;
  expires_on: string;
  date_of_birth: string | null;
  portrait_similarity: number;
  signer_fingerprint: string;
  csca_fingerprint: string;
  lds_sha256: string;
}

/** A Country Signing CA of a trust list as the CLI adds it (certificate: base64 DER). */
export interface TrustAnchorRow {
  fingerprint: string;
  subject: string;
  key_identifier: string | null;
  country: string | null;
  certificate: string;
  not_before: Iso;
  not_after: Iso;
}

/** The capture of a claim (identity_claim): the act is ACTION_SIGNUP, the person and the instant are the enrolment's. */
export interface ClaimCapture {
  id: Uuid;
  service_hash: string;
  coercion_signal: boolean;
  assurance_level: AssuranceLevel;
  engine_version: string;
}

/** A merchant's billed claims in one month and its allowance, per environment (billing_usage). */
export interface BillingUsage {
  merchant_id: Uuid;
  month: string;
  period_start: Iso;
  period_end: Iso;
  environments: Record<Environment, { claims_billed: number; allowance: number; allowance_remaining: number; persons_billed: number }>;
}

/** A signed receipt ready to be stored beside its capture. */
export interface ReceiptRow {
  id: Uuid;
  code: string;
  jws: string;
  seal: string;
}

/** The shared inputs of mandate_check and mandate_consume (spec 4.8), the tenant included. */
interface DecisionParams {
  merchant_id: Uuid;
  environment: Environment;
  now: Iso;
  mandate_id: Uuid;
  scope: string;
  amount?: number;
  currency?: string;
  action_ref?: string;
  context?: { merchant?: string; category?: string; country?: string };
}

interface ConsumeParams extends DecisionParams {
  idempotency_key: string;
  request_hash: string;
}

/** The decision inputs of a request before they are scoped to the authenticated merchant. */
export type DecisionInput = Omit<DecisionParams, "merchant_id" | "environment" | "now">;

/** Who calls (a key to authenticate, or a tenant the edge authenticated) and the nonce to claim. */
type AuthenticatedRequest = (
  | { credential: { key_hash: string; kind: KeyKind; environment: Environment } }
  | { tenant: { merchant_id: Uuid; environment: Environment } }
) & { now: Iso; nonce?: string; window_seconds?: number };

interface TenantAt {
  merchant_id: Uuid;
  environment: Environment;
  now: Iso;
}

/** The person a disclosure is about, as disclosure_subject finds them through a fresh capture. */
export interface DisclosureSubject {
  identity_id: Uuid;
  subject_ref: string;
  enrolled_at: Iso;
  assurance_level: AssuranceLevel;
  document: {
    document_type: string;
    issuing_country: string;
    expires_on: string;
    verified_at: Iso;
    portrait_similarity: number;
    date_of_birth: string | null;
  } | null;
}

/** A requested field as the consent ledger records it: never its value. */
export interface LedgerClaim {
  key: string;
  disclosure_type: "value" | "zk_proof" | "document";
  status: "disclosed" | "unavailable";
}

/** What a consent token unlocks (disclosure_fetch). */
export interface FetchedDisclosure {
  disclosure_id: Uuid;
  zk_proof_audit_id: string;
  transaction_type: string;
  issued_at: Iso;
  expires_at: Iso;
  claims: LedgerClaim[];
  documents: { key: string; document: Record<string, unknown> }[];
}

/** The consent ledger's chain check (consent_ledger_verify). */
export interface LedgerVerification {
  ok: boolean;
  identities: number;
  entries: number;
  breaks: { identity_id: Uuid; seq: number; reason: "row_hash_mismatch" | "prev_hash_mismatch" | "seq_gap" | "head_mismatch" }[];
}

/** A handoff as its registrant reads it. */
export interface HandoffView {
  handoff_id: string;
  state: "pending" | "claimed" | "expired" | "replaced";
  expires_at: Iso;
  claimed_at: Iso | null;
  session: { session_id: string; state: string };
}

// ---------------------------------------------------------------------------------------------
// The catalogue: name → [parameter, result]
// ---------------------------------------------------------------------------------------------

interface RpcCatalogue {
  alias_check: [{ environment: Environment; now: Iso; aliases: string[] }, { available: Record<string, boolean> }];
  alias_reserve: [
    { environment: Environment; now: Iso; merchant_id: Uuid; alias: string; claim_token_hash: string; ttl_seconds: number },
    { expires_at: Iso },
  ];
  alias_release: [
    { environment: Environment; now: Iso; merchant_id: Uuid; alias: string; claim_token_hash: string },
    { alias: string; released: true },
  ];
  api_key_create: [{ merchant_id: Uuid; kind: KeyKind; environment: Environment; key_hash: string; key_hint: string }, { key_id: Uuid }];
  api_key_revoke: [{ key_hash: string } | { key_id: Uuid }, { key_id: Uuid; revoked_at: Iso; already_revoked: boolean } | null];
  billing_allowance_set: [
    { merchant_id: Uuid; environment: Environment; monthly_claims: number; now: Iso },
    { merchant_id: Uuid; environment: Environment; monthly_claims: number },
  ];
  billing_usage: [{ merchant_id: Uuid; now: Iso; month?: string }, BillingUsage];
  capture_record: [
    {
      capture: CaptureRow;
      receipt: ReceiptRow | null;
      document?: DocumentRow | null;
      baseline?: PresenceBaseline | null;
      stored_response?: { record: IdempotencyRecord; status: number; body: unknown };
    },
    unknown,
  ];
  circuit_breaker_state: [
    { deployment: string; function_name: string; merchant_id: string; environment: Environment; now: Iso },
    { open: boolean; retry_after_seconds: number },
  ];
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
  document_trust_anchors_add: [
    { environment: Environment; source: "sandbox" | "master_list"; now: Iso; anchors: TrustAnchorRow[] },
    { added: number; already_listed: number },
  ];
  document_trust_anchors_remove: [{ environment: Environment; fingerprint: string }, { removed: number }];
  document_trust_anchors_list: [
    { environment: Environment },
    { anchors: (Omit<TrustAnchorRow, "certificate"> & { source: string; added_at: Iso })[] },
  ];
  document_trust_anchor_candidates: [
    { environment: Environment; subject: string; key_identifier: string | null },
    { certificates: string[] },
  ];
  consent_ledger_verify: [{ identity_id?: Uuid; limit?: number }, LedgerVerification];
  consent_retention_sweep: [
    { now: Iso; limit?: number },
    { expired: number; erased: number; captures: number; templates: number; disclosed_documents_expired: number },
  ];
  consent_revoke: [
    TenantAt & { reason?: string } & ({ consent_token_hash: string } | { subject_ref: string }),
    { revoked: true; already_revoked: boolean; revoked_at: Iso; disclosure_id?: Uuid; subject_ref?: string },
  ];
  disclosure_fetch: [TenantAt & { consent_token_hash: string }, FetchedDisclosure];
  disclosure_record: [
    {
      id: Uuid;
      identity_id: Uuid;
      merchant_id: Uuid;
      now: Iso;
      consent_token_hash: string;
      expires_at: Iso;
      zk_proof_audit_id: string;
      transaction_type: string;
      claims: LedgerClaim[];
      attestation: Record<string, unknown>;
      sd_jwt_digest: string;
      documents: { key: string; document: Record<string, unknown> }[];
    },
    { disclosure_id: Uuid; seq: number; row_hash: string; recorded_at: Iso },
  ];
  disclosure_subject: [TenantAt & { capture_id: Uuid; proof_max_age_seconds: number }, DisclosureSubject];
  face_identify: [
    { environment: Environment; merchant_id: Uuid; key_id: string; embedding: number[]; capture_nonce: string; now: Iso },
    { identity_id?: Uuid; similarity?: number },
  ];
  face_template_search: [
    {
      environment: Environment;
      key_id: string;
      embedding: number[];
      limit: number;
      exact?: boolean;
      ef_search?: number;
      /** Only persons with an active consent for this merchant (an exact scan). */
      merchant_id?: Uuid;
    },
    TemplateMatch[],
  ];
  handoff_claim: [{ code_hash: string; now: Iso }, { sealed_session_token: string; handoff: HandoffView }];
  handoff_get: [
    { handoff_id: Uuid; now: Iso } & ({ merchant_id: Uuid; environment: Environment } | { session_token_hash: string }),
    HandoffView | null,
  ];
  handoff_register: [
    { id: Uuid; now: Iso; session_token_hash: string; code_hash: string; sealed_session_token: string; ttl_seconds: number } & (
      | { merchant_id: Uuid; environment: Environment }
      | Record<never, never>
    ),
    HandoffView,
  ];
  agent_verification_request: [
    {
      id: Uuid;
      session_id: Uuid;
      merchant_id: Uuid;
      environment: Environment;
      owner_identity_id: Uuid;
      session_token_hash?: string;
      agent_client_id?: string;
      agent_name?: string;
      external_ref?: string;
      purpose?: string;
      ttl_seconds: number;
      token_hash: string;
      now: Iso;
    },
    AgentVerificationView,
  ];
  agent_verification_result: [
    { verification_id: Uuid; owner_identity_id: Uuid; environment: Environment; session_token_hash?: string; merchant_id?: Uuid; now: Iso },
    AgentVerificationView | null,
  ];
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
    { session: HostedSessionView; environment: Environment; merchant_name: string; card: CardTerms | null; mode?: SessionModeTerms },
  ];
  hosted_session_get: [TenantAt & { session_id: Uuid }, HostedSessionView | null];
  resource_session_create: [
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
    ResourceSessionView,
  ];
  resource_session_get: [TenantAt & { session_id: Uuid }, ResourceSessionView | null];
  hosted_session_complete_begin: [{ screen_token_hash: string; now: Iso }, SessionToComplete];
  hosted_session_complete_finish: [
    { session_id: Uuid; now: Iso; state: "completed" | "failed"; result: Record<string, unknown> },
    HostedSessionView,
  ];
  hosted_session_cancel: [{ screen_token_hash: string; now: Iso; reason: string }, HostedSessionView];
  hosted_sessions_expire: [{ now: Iso; limit?: number }, { expired: number }];
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
  idempotency_finish: [IdempotencyRecord & { status: number; body: unknown }, unknown];
  identity_enroll: [Record<string, unknown> & TenantAt, { created: boolean }];
  identity_claim: [
    Record<string, unknown> &
      TenantAt & {
        capture: ClaimCapture;
        receipt: ReceiptRow;
        stored_response?: { record: IdempotencyRecord; status: number; body: unknown };
      },
    { identity_id: Uuid; billed: boolean },
  ];
  identity_attribute_record: [
    TenantAt & { capture_nonce: string; stored_response?: { record: IdempotencyRecord; status: number; body: unknown } },
    unknown,
  ];
  identity_resolve: [TenantAt & ({ user_id: Uuid; session_token_hash: string } | { subject_ref: string | null }), ResolvedIdentity | null];
  mandate_check: [DecisionParams, Decision];
  mandate_consume: [ConsumeParams, Decision];
  mandate_check_request: [
    AuthenticatedRequest & { decision: DecisionInput },
    Decision & { caller: { merchant_id: Uuid; environment: Environment } },
  ];
  mandate_consume_request: [
    AuthenticatedRequest & { decision: DecisionInput & { idempotency_key: string; request_hash: string } },
    Decision,
  ];
  mandate_get: [TenantAt & { mandate_id: Uuid }, MandateView | null];
  mandate_issue: [TenantAt & Record<string, unknown> & { id: Uuid }, MandateView];
  resource_mandate_create: [
    TenantAt & Record<string, unknown> & { id: Uuid; stored_response?: { record: IdempotencyRecord } },
    Record<string, unknown>,
  ];
  mandate_list: [TenantAt & { status: string; limit: number }, MandateView[]];
  mandate_page: [
    TenantAt & {
      limit: number;
      mandate_id?: Uuid;
      granted_by?: string;
      granted_to?: string;
      status?: string;
      after?: { created_at: Iso; id: Uuid };
    },
    { data: Record<string, unknown>[]; more: boolean; last: { created_at: Iso; id: Uuid } | null },
  ];
  mandate_revoke: [
    { mandate_id: Uuid; reason?: string; now: Iso } & (
      | { by: "service_role" }
      | { by: "granting_human"; identity_id: Uuid; environment: Environment }
      | { by: "issuing_merchant"; merchant_id: Uuid; environment: Environment }
    ),
    Record<string, unknown> | null,
  ];
  mandate_transaction: [
    {
      identity_id: Uuid;
      consume: ConsumeParams;
      capture: CaptureRow;
      receipt: ReceiptRow;
      stored_response?: { record: IdempotencyRecord };
    },
    { decision: Decision; approval: StandInApproval | null },
  ];
  merchant_at_limit_threshold: [{ merchant_id: Uuid; percent?: number }, { merchant_id: Uuid; percent: number }];
  agent_sign_in_begin: [
    { session: HostedSessionRecord; request_hash: string; browser_hash: string },
    { started: false } | { started: true; session: HostedSessionView },
  ];
  agent_sign_in_finish: [
    { session_id: Uuid; request_hash: string; browser_hash: string; now: Iso },
    (
      | { signed_in: true; identity_id: Uuid; merchant_id: Uuid; environment: Environment }
      | { signed_in: false; reason: "unknown" | "used" | "pending" | "refused" | "stale" | "not_owner" }
    ),
  ];
  merchant_owned: [{ identity_id: Uuid; environment: Environment }, { merchants: { merchant_id: Uuid; name: string }[] }];
  merchant_owner_add: [{ merchant_id: Uuid; subject_ref: string; now: Iso }, { owner: MerchantOwner; already_owner: boolean }];
  merchant_owner_list: [{ merchant_id: Uuid }, { owners: MerchantOwner[] }];
  merchant_owner_remove: [{ merchant_id: Uuid; subject_ref: string }, { merchant_id: Uuid; subject_ref: string; removed: boolean }];
  merchant_create: [
    { name: string; keys: { kind: KeyKind; environment: Environment; key_hash: string; key_hint: string }[] },
    { merchant_id: Uuid },
  ];
  receipt_anchor_record: [
    { root: string; sink: string; sink_reference: string | null; now: Iso; receipts: { id: Uuid; proof: unknown }[] },
    AnchorRecorded,
  ];
  receipt_get: [{ id: Uuid } | { code: string }, StoredReceipt | null];
  receipts_pending_anchor: [{ now: Iso; limit: number }, { receipts: { id: Uuid; seal: string }[] }];
  request_authenticate: [AuthenticatedRequest, { key_id: Uuid | null; merchant_id: Uuid; environment: Environment }];
  resource_api_authenticate: [
    AuthenticatedRequest & { credential: unknown },
    { key_id: Uuid; merchant_id: Uuid; environment: Environment; api_version: string },
  ];

  theme_get: [{ merchant_id: Uuid; surface: string; draft?: boolean }, Record<string, unknown> | null];
  theme_set: [{ merchant_id: Uuid; surface: string; theme: Record<string, unknown> }, Record<string, unknown>];
  theme_publish: [{ merchant_id: Uuid; surface: string }, Record<string, unknown>];
  webhook_deliveries_claim: [
    { now: Iso; limit?: number; lease_seconds: number },
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
  webhook_endpoint_get: [{ endpoint_id: Uuid }, EndpointView | null];
  webhook_endpoint_list: [{ merchant_id: Uuid; environment?: Environment; now: Iso }, { endpoints: EndpointView[] }];
  webhook_endpoint_disable: [{ endpoint_id: Uuid; now: Iso }, EndpointView & { already_disabled: boolean; failed_deliveries: number }];
  webhook_fanout: [{ now: Iso; limit?: number }, { events: number; deliveries: number }];
  webhook_replay: [Record<string, unknown> & { now: Iso }, { events: number; deliveries: number }];
  webhook_secret_rotate: [
    { endpoint_id: Uuid; sealed_secret: string; secret_hint: string; overlap_seconds: number; now: Iso },
    EndpointView & { previous_valid_until: Iso },
  ];
  webhook_secrets_sealed: [Record<string, never>, { secret_id: Uuid; endpoint_id: Uuid; sealed_secret: string }[]];
  webhook_secrets_reseal: [
    { secrets: { secret_id: Uuid; sealed_secret: string; resealed_secret: string }[] },
    { resealed: number; skipped: number },
  ];
}

type RpcName = keyof RpcCatalogue;
export type RpcParams<N extends RpcName> = RpcCatalogue[N][0];
export type RpcResult<N extends RpcName> = RpcCatalogue[N][1];

/**
 * Calls one RPC in one round trip and one implicit transaction. Our SQLSTATEs become their API
 * error; an unreachable database becomes `503 DATABASE_UNAVAILABLE` (shared/platform/db/client.ts).
 *
 * @example const { expires_at } = await rpc(sql, "alias_reserve", { alias, ttl_seconds, … });
 */
export function rpc<N extends RpcName>(sql: Queryable, name: N, params: RpcParams<N>): Promise<RpcResult<N>> {
  return withConnectionRetry(() => rawRpc<RpcResult<N>>(sql, name, params));
}

/**
 * The statement behind `rpc`, untyped and untranslated: for SQL-level tests and benchmarks that
 * call RPCs with inputs the edge never sends and read raw SQLSTATEs.
 */
export async function rawRpc<T>(sql: Queryable, name: string, params: unknown): Promise<T> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid rpc name ${name}`);
  const rows = await sql.unsafe(`select public.${name}($1::jsonb) as result`, [params as never]);
  return rows[0].result as T;
}
