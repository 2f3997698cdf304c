/** The agents' slice of the RPC catalogue (shared/kernel/db/rpc.ts): verification cards and an owner's sign-in by presence. */
import type { Environment } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";
import type { AssuranceLevel } from "../receipts/signed-receipt";
import type { HostedSessionRecord, HostedSessionView } from "../sessions/rpc";

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

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
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
      {
        verification_id: Uuid;
        owner_identity_id: Uuid;
        environment: Environment;
        session_token_hash?: string;
        merchant_id?: Uuid;
        now: Iso;
      },
      AgentVerificationView | null,
    ];
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
    agent_sign_in_sweep: [{ now: Iso }, { sign_ins: number }];
  }
}
