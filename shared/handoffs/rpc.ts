/** The handoffs' slice of the RPC catalogue (shared/kernel/db/rpc.ts): register, claim, read. */

import type { Environment } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";

/** A handoff as its registrant reads it. */
export interface HandoffView {
  handoff_id: string;
  state: "pending" | "claimed" | "expired" | "replaced";
  expires_at: Iso;
  claimed_at: Iso | null;
  session: { session_id: string; state: string };
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    handoff_register: [
      { id: Uuid; now: Iso; session_token_hash: string; code_hash: string; sealed_session_token: string; ttl_seconds: number } & (
        | { merchant_id: Uuid; environment: Environment }
        | Record<never, never>
      ),
      HandoffView,
    ];
    handoff_claim: [{ code_hash: string; now: Iso }, { sealed_session_token: string; handoff: HandoffView }];
    handoff_get: [
      { handoff_id: Uuid; now: Iso } & ({ merchant_id: Uuid; environment: Environment } | { session_token_hash: string }),
      HandoffView | null,
    ];
  }
}
