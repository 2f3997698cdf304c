/** The aliases' slice of the RPC catalogue (shared/kernel/db/rpc.ts): check, reserve, release. */

import type { Environment } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";

declare module "../kernel/db/rpc" {
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
    alias_claim: [
      { environment: Environment; now: Iso; merchant_id: Uuid; alias: string; claim_token_hash: string; subject_ref: string },
      { alias: string; claimed_at: Iso },
    ];
  }
}
