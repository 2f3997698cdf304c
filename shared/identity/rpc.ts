/**
 * The identity slice of the RPC catalogue (shared/kernel/db/rpc.ts): enrolment and claims, the face
 * templates, the identity a transaction names, attributes and the document trust list.
 */

import type { DeviceBinding } from "../contracts/device";
import type { VerifiedCredential } from "../devices/capture";
import type { PresenceBaseline } from "../engine";
import type { Environment } from "../kernel/principal";
import type { Iso, StoredResponse, TenantAt, Uuid } from "../kernel/rpc";
import type { ReceiptRow } from "../receipts/rpc";
import type { AssuranceLevel } from "../receipts/signed-receipt";
import type { VerifiedDocument } from "./passive-authentication";

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

/** Whom identity_resolve looks up: a first-party session's own identity, or the person a merchant knows by subject_ref. */
export type IdentityResolveParams = TenantAt & ({ user_id: Uuid; session_token_hash: string } | { subject_ref: string | null });

export interface TemplateMatch {
  identity_id: Uuid;
  similarity: number;
  /** False when the identity was erased: found, but never to be attached to anything. */
  reachable: boolean;
}

/**
 * One enrolment attempt as identity_enroll takes it, and identity_claim, which enrols first: the
 * identity the face matched (`existing`) or a new one, its protected template, the consent, the
 * first-party session and the presence baseline.
 */
export interface EnrollParams extends TenantAt {
  capture_nonce: string;
  identity_id: Uuid;
  existing: boolean;
  subject_ref: string;
  key_id: string;
  embedding: number[];
  /** The similarity at or above which a concurrent enrolment of the same face is refused as a race. */
  match_threshold: number;
  consent: { version: string; retention_days: number };
  session: { token_hash: string; expires_at: Iso };
  baseline: PresenceBaseline | null;
  /** The first-party session the person presented, ended when it is another identity's. */
  presented_session_hash?: string;
  /** A new person's first device, registered in the enrolment's ceremony: stored with the identity. */
  device?: VerifiedCredential;
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
  /** The credential that signed the claim's capture (registered by it, or the person's), null when none did (sandbox). */
  device_id: Uuid | null;
  device_binding: DeviceBinding;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    identity_enroll: [EnrollParams, { created: boolean }];
    identity_claim: [
      EnrollParams & { capture: ClaimCapture; receipt: ReceiptRow; document?: VerifiedDocument; stored_response?: StoredResponse },
      { identity_id: Uuid; billed: boolean },
    ];
    identity_attribute_record: [TenantAt & { capture_nonce: string; stored_response?: StoredResponse }, unknown];
    identity_resolve: [IdentityResolveParams, ResolvedIdentity | null];
    face_identify: [
      { environment: Environment; merchant_id: Uuid; key_id: string; embedding: number[]; capture_nonce: string; now: Iso },
      /** The best match's cosine and the runner-up's (a near miss when they are close: D-385). */
      { identity_id?: Uuid; similarity?: number; second_similarity?: number },
    ];
    face_template_search: [
      {
        environment: Environment;
        key_id: string;
        embedding: number[];
        limit: number;
        exact?: boolean;
        /** Only persons with an active consent for this merchant (an exact scan). */
        merchant_id?: Uuid;
      },
      TemplateMatch[],
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
  }
}
