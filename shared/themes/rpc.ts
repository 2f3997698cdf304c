/** The themes' slice of the RPC catalogue (shared/kernel/db/rpc.ts): a merchant's theme per surface, draft and published. */
import type { Uuid } from "../kernel/rpc";

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    theme_get: [{ merchant_id: Uuid; surface: string }, Record<string, unknown> | null];
    theme_set: [{ merchant_id: Uuid; surface: string; theme: Record<string, unknown> }, Record<string, unknown>];
    theme_publish: [{ merchant_id: Uuid; surface: string }, Record<string, unknown>];
    theme_asset_get: [{ id: Uuid }, { content_type: string; family: string | null; content_base64: string } | null];
  }
}
