/**
 * The transactions' slice of the RPC catalogue (shared/kernel/db/rpc.ts): the sink's two acts, a
 * capture recorded with its receipt, and a capture a mandate stood in for.
 */
import type { DeviceBinding } from "../contracts/device";
import type { PresenceBaseline } from "../engine";
import type { IdentityResolveParams } from "../identity/rpc";
import type { RpcParams, RpcResult } from "../kernel/db/rpc";
import type { Environment } from "../kernel/principal";
import type { AuthenticatedRequest, BreakerScope, BreakerState, IdempotencyRecord, Iso, StoredResponse, Uuid } from "../kernel/rpc";
import type { ConsumeParams, Decision } from "../mandates/rpc";
import type { ReceiptRow } from "../receipts/rpc";
import type { AssuranceLevel } from "../receipts/signed-receipt";

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
  /** What signed the capture (docs/devices.md); `none` when a mandate stood in (nobody was present at the act). */
  device_binding?: DeviceBinding;
}

/** The approval of an act a mandate stood in for, with its mandate block, as mandate_transaction builds and stores it. */
export interface StandInApproval extends Approval {
  assurance_level: "mandate";
  /** Nobody was present at the act, so no device signed it. */
  device_binding: "none";
  mandate: Record<string, unknown> & {
    mandate_id: string;
    consumption_id: string;
    idempotent_replay: boolean;
    /** What signed the capture that granted the mandate (none: no device, or no grant capture). */
    device_binding: DeviceBinding;
  };
}

/**
 * What the person was shown and proved presence for (`private.captures.purpose`): the sink's
 * action's own (login, payment, sign, enroll), or what the screen showed instead: an agent
 * verification card (`verify`, which authorises nothing), a /v1 attribute, a mandate's terms (`grant`).
 */
export type CapturePurpose = "login" | "payment" | "sign" | "enroll" | "verify" | "attribute" | "grant";

/** A capture's purpose, and for a grant the digest of the terms shown (shared/mandates/issue.ts#grantTermsDigest). */
export interface CaptureIntent {
  purpose: CapturePurpose;
  grant_terms_digest?: string;
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
  /** Absent on a mandate's stand-in: nobody was shown anything. */
  purpose?: CapturePurpose;
  grant_terms_digest?: string | null;
  /** The refusal's code when the act was refused: the capture is used up all the same. */
  refusal_code?: string | null;
  /** The passkey that signed the capture (private.device_credentials.id), and the binding it gave. */
  device_id?: Uuid | null;
  device_binding?: DeviceBinding | null;
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

/** A judged act as capture_record writes it: the capture, its receipt on approval, a document it carried, and the stored answer. */
export interface CaptureRecordParams {
  capture: CaptureRow;
  receipt: ReceiptRow | null;
  document?: DocumentRow | null;
  baseline?: PresenceBaseline | null;
  stored_response?: StoredResponse;
}

/** What stand_in_transaction answers of the person it resolved (identity_resolve's verdicts, no template). */
export interface StandInPerson {
  identity_id: Uuid;
  erased: boolean;
  consent_revoked: boolean;
  session_active: boolean | null;
  has_document: boolean;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    stand_in_transaction: [
      {
        resolve: IdentityResolveParams;
        document_required: boolean;
        consume: ConsumeParams;
        /** Its assurance level is the mandate's, set by the call. */
        capture: Omit<CaptureRow, "assurance_level">;
        /** The receipt signed for each level the mandate may have been granted at: the call keeps the mandate's. */
        receipts: Record<AssuranceLevel, ReceiptRow>;
        stored_response?: { record: IdempotencyRecord };
      },
      /** identity null: unknown; decision null: nothing was acted (identity says why). */
      { identity: StandInPerson | null; decision: Decision | null; approval: StandInApproval | null },
    ];
    /** The stand-in in one round trip (D-740): authentication, breaker, response store, then stand_in_transaction. */
    stand_in_request: [
      AuthenticatedRequest & {
        breaker: BreakerScope;
        idempotency?: Omit<RpcParams<"idempotency_begin">, "merchant_id" | "environment">;
        act: Omit<RpcParams<"stand_in_transaction">, "stored_response">;
      },
      {
        caller: RpcResult<"request_authenticate">;
        breaker: BreakerState;
        /** Under an Idempotency-Key; the act is absent unless it started (or goes to the ledger). */
        begun?: RpcResult<"idempotency_begin">;
        act?: RpcResult<"stand_in_transaction">;
      },
    ];
    capture_record: [CaptureRecordParams, unknown];
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
  }
}
