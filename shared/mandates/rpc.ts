/** The mandates' slice of the RPC catalogue (shared/kernel/db/rpc.ts): issue, read, decide, consume, revoke. */
import type { KeysetAfter, KeysetPage } from "../kernel/cursor";
import type { Environment } from "../kernel/principal";
import type { AuthenticatedRequest, IdempotencyRecord, Iso, TenantAt, Uuid } from "../kernel/rpc";
import type { AssuranceLevel } from "../receipts/signed-receipt";

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

/** The inputs of mandate_check (spec 4.8), the tenant included; mandate_consume takes them too. */
interface DecisionParams extends TenantAt {
  mandate_id: Uuid;
  scope: string;
  amount?: number;
  currency?: string;
  context?: { merchant?: string; category?: string; country?: string };
}

/** A consumption also records the caller's reference of the act and is idempotent by its key. */
export interface ConsumeParams extends DecisionParams {
  action_ref?: string;
  idempotency_key: string;
  request_hash: string;
}

/**
 * The decision inputs of a request before they are scoped to the authenticated merchant. Both
 * functions accept `action_ref`; only a consumption records it (a check reads no reference).
 */
export type DecisionInput = Omit<DecisionParams, "merchant_id" | "environment" | "now"> & { action_ref?: string };

/** A mandate to record (spec 4.7), its rules checked at the edge; the RPC checks the proof and the step-up's parent. */
/** A mandate's ceiling as the database stores it: every field present, null where the kind has none. */
export interface MandateCeiling {
  kind: "amount" | "count" | "both" | "none";
  amount: number | null;
  currency: string | null;
  count: number | null;
  period: string;
}

interface MandateToIssue extends TenantAt {
  id: Uuid;
  granted_by_ref: string;
  granted_to: string;
  granted_to_kind: string;
  agent_display_name?: string;
  agent_descriptor?: string;
  scopes: string[];
  /** The scopes that move money: a mandate with one needs a proof with a verified document. */
  money_scopes: readonly string[];
  constraints: { merchant_allowlist?: string[]; category_allowlist?: string[]; country_allowlist?: string[] };
  ceiling: MandateCeiling;
  expires_at: Iso;
  step_up_of?: Uuid;
  capture_id: Uuid;
  /** grantTermsDigest of these terms: the proof must be a grant capture that showed them. */
  terms_digest: string;
  proof_max_age_seconds: number;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
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
    mandate_issue: [MandateToIssue, MandateView];
    mandate_issue_stored: [MandateToIssue & { stored_response?: { record: IdempotencyRecord } }, Record<string, unknown>];
    mandate_list: [TenantAt & { status: string; limit: number; issued_before?: Uuid }, MandateView[] | null];
    mandate_page: [
      TenantAt & {
        limit: number;
        mandate_id?: Uuid;
        granted_by?: string;
        granted_to?: string;
        status?: string;
        after?: KeysetAfter;
      },
      KeysetPage<Record<string, unknown>>,
    ];
    mandate_revoke: [
      { mandate_id: Uuid; reason?: string; now: Iso } & (
        | { by: "service_role" }
        | { by: "granting_human"; identity_id: Uuid; environment: Environment }
        | { by: "issuing_merchant"; merchant_id: Uuid; environment: Environment }
      ),
      Record<string, unknown> | null,
    ];
    merchant_at_limit_threshold: [{ merchant_id: Uuid; percent?: number }, { merchant_id: Uuid; percent: number }];
  }
}
