/**
 * The receipt anchoring worker (cron, every minute): each tick anchors the live receipts issued so
 * far under a Merkle root (anchor.ts). It serves no HTTP, so the public surface stays the spec's.
 */
import { cronWorker } from "../../shared/edge/cron";
import { anchorPendingReceipts, LocalAnchorSink } from "../../shared/receipts/anchor";

export default cronWorker("receipt-anchor", async (sql, _config, at) => {
  const result = await anchorPendingReceipts(sql, new LocalAnchorSink(), at);
  if (!result.anchors.length && !result.contended) return null;
  const receipts = result.anchors.reduce((n, anchor) => n + anchor.leaf_count, 0);
  return { anchors: result.anchors.length, receipts, contended: result.contended };
});
