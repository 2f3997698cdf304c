/** The merchants' slice of the RPC catalogue (shared/kernel/db/rpc.ts): merchants, their API keys and their owners. */

import type { Environment, KeyKind } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";

/** An owner of a merchant as the operator sees it: by the merchant's pseudonym. */
export interface MerchantOwner {
  merchant_id: Uuid;
  subject_ref: string;
  environment: Environment;
  added_at: Iso;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    merchant_create: [
      { name: string; keys: { kind: KeyKind; environment: Environment; key_hash: string; key_hint: string }[] },
      { merchant_id: Uuid },
    ];
    api_key_create: [{ merchant_id: Uuid; kind: KeyKind; environment: Environment; key_hash: string; key_hint: string }, { key_id: Uuid }];
    api_key_revoke: [{ key_hash: string } | { key_id: Uuid }, { key_id: Uuid; revoked_at: Iso; already_revoked: boolean } | null];
    merchant_owned: [{ identity_id: Uuid; environment: Environment }, { merchants: { merchant_id: Uuid; name: string }[] }];
    merchant_owner_add: [{ merchant_id: Uuid; subject_ref: string; now: Iso }, { owner: MerchantOwner; already_owner: boolean }];
    merchant_owner_list: [{ merchant_id: Uuid }, { owners: MerchantOwner[] }];
    merchant_owner_remove: [{ merchant_id: Uuid; subject_ref: string }, { merchant_id: Uuid; subject_ref: string; removed: boolean }];
  }
}
