/**
 * The receipt anchoring worker (cron, every minute): each tick anchors the live receipts issued so
 * far under a Merkle root (anchor.ts), published on the configured chain (chain-sink.ts) or, with
 * no chain configured, recorded locally. It serves no HTTP, so the public surface stays the spec's.
 */
import { cronWorker } from "../../shared/edge/cron";
import { anchorPendingReceipts } from "../../shared/receipts/anchor";
import { anchorSinkFor } from "../../shared/receipts/chain-sink";

export default cronWorker("receipt-anchor", async (sql, config, at) => {
  const sink = await anchorSinkFor(config);
  const result = await anchorPendingReceipts(sql, sink, at);
  if (!result.anchors.length && !result.contended) return null;
  const receipts = result.anchors.reduce((n, anchor) => n + anchor.leaf_count, 0);
  return { anchors: result.anchors.length, receipts, contended: result.contended, sink: sink.name };
});
