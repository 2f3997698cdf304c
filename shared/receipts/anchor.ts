/**
 * One anchoring pass (docs/receipts.md): the oldest live receipts without an anchor become the
 * leaves of a Merkle tree, the sink publishes its root, and one RPC writes the anchor together with
 * every receipt's inclusion proof. The cron worker runs it every minute; tests call it directly.
 */
import type { Sql } from "../kernel/db/client";
import { type RpcResult, rpc } from "../kernel/db/rpc";
import { merkleTree } from "./merkle";
import type {} from "./rpc";

/** Where a Merkle root is made public. A blockchain transport implements this; locally nothing leaves the database. */
export interface AnchorSink {
  /** Recorded on the anchor as `sink`. */
  readonly name: string;
  /** Publishes `root` (64 hex characters); `reference` is the sink's own handle for it (a transaction id), if any. */
  publish(root: string): Promise<{ reference: string | null }>;
}

/** The local sink: the anchor row in the database is the whole record of the root. */
export class LocalAnchorSink implements AnchorSink {
  readonly name = "local";
  async publish(_root: string): Promise<{ reference: string | null }> {
    return { reference: null };
  }
}

interface AnchorOptions {
  /** Receipts per anchor (one tree, one RPC). */
  batchSize?: number;
  /** Anchors written at most per pass; the rest waits for the next tick. */
  maxBatches?: number;
  /** Re-reads after a batch lost receipts to a concurrent run, per batch. */
  attempts?: number;
}

interface AnchorRecord {
  anchor_id: string;
  root: string;
  leaf_count: number;
}

interface AnchorPassResult {
  anchors: AnchorRecord[];
  /** Batches given up after `attempts` collisions with a concurrent run. */
  contended: number;
}

/**
 * Anchors the live receipts issued at or before `now`, in batches of `batchSize`, oldest first.
 *
 * @example await anchorPendingReceipts(sql, new LocalAnchorSink(), new Date(event.scheduledTime));
 */
export async function anchorPendingReceipts(
  sql: Sql,
  sink: AnchorSink,
  now: Date,
  { batchSize = 1000, maxBatches = 10, attempts = 3 }: AnchorOptions = {},
): Promise<AnchorPassResult> {
  const result: AnchorPassResult = { anchors: [], contended: 0 };
  for (let batch = 0; batch < maxBatches; batch++) {
    let pending: RpcResult<"receipts_pending_anchor">["receipts"] = [];
    let anchored: AnchorRecord | null = null;
    for (let attempt = 0; attempt < attempts && !anchored; attempt++) {
      ({ receipts: pending } = await rpc(sql, "receipts_pending_anchor", { now: now.toISOString(), limit: batchSize }));
      if (pending.length === 0) return result;
      const tree = await merkleTree(pending.map((receipt) => receipt.seal));
      const { reference } = await sink.publish(tree.root);
      const recorded = await rpc(sql, "receipt_anchor_record", {
        root: tree.root,
        sink: sink.name,
        sink_reference: reference,
        now: now.toISOString(),
        receipts: pending.map((receipt, i) => ({ id: receipt.id, proof: tree.proofs[i] })),
      });
      if (recorded.recorded) anchored = { anchor_id: recorded.anchor_id, root: tree.root, leaf_count: recorded.leaf_count };
    }
    if (!anchored) {
      result.contended += 1;
      return result;
    }
    result.anchors.push(anchored);
    if (pending.length < batchSize) return result;
  }
  return result;
}
