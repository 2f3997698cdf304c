/** The consent slice of the RPC catalogue (shared/kernel/db/rpc.ts): disclosures, their ledger, revocation and retention. */
import type { Iso, TenantAt, Uuid } from "../kernel/rpc";
import type { AssuranceLevel } from "../receipts/signed-receipt";

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

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    disclosure_subject: [
      TenantAt & ({ capture_id: Uuid } | { identity_id: Uuid }) & { proof_max_age_seconds: number },
      // capture_id: the capture that proved the person present, the one named or the newest found (D-368)
      DisclosureSubject & { capture_id: Uuid },
    ];
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
    disclosure_fetch: [TenantAt & { consent_token_hash: string }, FetchedDisclosure];
    consent_revoke: [
      TenantAt & { reason?: string } & ({ consent_token_hash: string } | { subject_ref: string }),
      { revoked: true; already_revoked: boolean; revoked_at: Iso; disclosure_id?: Uuid; subject_ref?: string },
    ];
    consent_ledger_verify: [{ identity_id?: Uuid; limit?: number }, LedgerVerification];
    consent_retention_sweep: [
      { now: Iso; limit?: number },
      { expired: number; erased: number; captures: number; templates: number; disclosed_documents_expired: number },
    ];
  }
}
