/** The receipts' slice of the RPC catalogue (shared/kernel/db/rpc.ts): a receipt as stored and read, and its anchoring. */

import type { Environment } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";

/** A signed receipt ready to be stored beside its capture. */
export interface ReceiptRow {
  id: Uuid;
  code: string;
  jws: string;
  seal: string;
}

export interface StoredReceipt {
  id: Uuid;
  code: string;
  environment: Environment;
  jws: string;
  seal: string;
  issued_at: Iso;
  inclusion_proof: { side: "left" | "right"; hash: string }[] | null;
  anchor: {
    id: Uuid;
    root: string;
    leaf_count: number;
    sink: string;
    sink_reference: string | null;
    anchored_at: Iso;
    /** Null while the root's publication is pending (not yet confirmed, or being repaired after a reorg). */
    confirmed_at: Iso | null;
  } | null;
}

type AnchorRecorded = { recorded: true; anchor_id: Uuid; leaf_count: number } | { recorded: false; unclaimable: number };

/** An anchor the pass follows up: pending, or confirmed but not final yet (a reorg could still take it out: D-650). */
export interface OpenAnchor {
  id: Uuid;
  root: string;
  sink_reference: string | null;
  confirmed: boolean;
  publication: Record<string, unknown> | null;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    receipt_get: [{ id: Uuid } | { code: string }, StoredReceipt | null];
    receipts_pending_anchor: [{ now: Iso; limit: number }, { receipts: { id: Uuid; seal: string }[] }];
    receipt_anchor_record: [
      {
        root: string;
        sink: string;
        sink_reference: string | null;
        now: Iso;
        confirmed?: boolean;
        publication?: Record<string, unknown> | null;
        receipts: { id: Uuid; proof: unknown }[];
      },
      AnchorRecorded,
    ];
    receipt_anchors_open: [{ sink: string }, { anchors: OpenAnchor[] }];
    receipt_anchor_follow: [
      {
        anchor_id: Uuid;
        sink_reference: string | null;
        confirmed: boolean;
        final?: boolean;
        publication: Record<string, unknown> | null;
        now: Iso;
      },
      { confirmed: boolean; announced: boolean },
    ];
  }
}
