/**
 * One anchoring pass (docs/receipts.md): the oldest live receipts without an anchor become the
 * leaves of a Merkle tree, the sink publishes its root, and one RPC writes the anchor together with
 * every receipt's inclusion proof. The cron worker runs it every minute; tests call it directly.
 */
import type { Sql } from "../kernel/db/client";
import { type RpcResult, rpc } from "../kernel/db/rpc";
import { merkleTree } from "./merkle";
import type {} from "./rpc";

/**
 * How one root is published, as the anchor row keeps it (D-515): the sink's handle for it (a
 * transaction hash, `<hash>@<block>` once confirmed; null locally), whether it counts yet, and what
 * the sink needs to follow it up (for a chain: nonce, fees, every transaction sent, the block hash).
 */
export interface Publication {
  reference: string | null;
  confirmed: boolean;
  /** Confirmed beyond a reorg's reach (a chain: deep enough and finalized, D-650): the pass stops following it. */
  final?: boolean;
  state: Record<string, unknown> | null;
}

/**
 * Where a Merkle root is made public. A publication is prepared (signed, not sent), recorded with
 * its anchor, then sent, so no root can reach the sink without an anchor holding it; the pass then
 * follows it up until it is confirmed, replaces it when it is stuck, and republishes it when a reorg
 * took it out. The root and the receipts' proofs never change, only how the root is published.
 */
export interface AnchorSink {
  /** Recorded on the anchor as `sink`. */
  readonly name: string;
  /** False for a sink whose publications are final when made (the local one): nothing to follow up. */
  readonly follows: boolean;
  /**
   * A publication of `root`, ready to send; `previous`, when given, is the one it replaces (a chain:
   * the same nonce at higher fees). Null when it should not be made now (fees above the cap): the
   * receipts stay pending. Throws when the sink cannot be reached: nothing is recorded.
   */
  prepare(root: string, previous: Publication | null, now: Date): Promise<Publication | null>;
  /** Sends a prepared publication. */
  send(publication: Publication): Promise<void>;
  /**
   * Where `publication` stands now (`wait`: give it the sink's time to confirm first): confirmed (and
   * whether final), pending, or `lost` when nothing of it is on the sink any more (never sent,
   * dropped, taken out by a reorg and not re-included). A publication recorded before its state was
   * kept (D-339: a reference only) is read back from the sink by its reference (D-650).
   */
  follow(publication: Publication, wait: boolean): Promise<Publication | "lost">;
  /** Whether a publication still pending at `now` has waited long enough to be replaced. */
  stale(publication: Publication, now: Date): boolean;
}

/** The local sink: the anchor row in the database is the whole record of the root. */
export class LocalAnchorSink implements AnchorSink {
  readonly name = "local";
  readonly follows = false;
  async prepare(): Promise<Publication> {
    return { reference: null, confirmed: true, state: null };
  }
  async send(): Promise<void> {}
  async follow(publication: Publication): Promise<Publication> {
    return publication;
  }
  stale(): boolean {
    return false;
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
  /** Anchors still waiting for their confirmations after this pass (new or older). */
  pending: number;
  /** Earlier anchors confirmed by this pass. */
  confirmed: number;
  /** Publications replaced (stuck) or republished (lost, a reorg) by this pass. */
  republished: number;
  /** Confirmed anchors found taken out or moved by a reorg. */
  reorged: number;
  /** Anchors found final by this pass: no longer followed. */
  finalised: number;
  /** True when the sink declined to publish now (fees above the cap): the receipts wait. */
  deferred: boolean;
}

/**
 * One pass: first the anchors already published and not final are followed up (confirmed, replaced
 * when stuck, republished when lost or taken out by a reorg, final once beyond a reorg's reach), then the live receipts issued at or before `now`
 * are anchored, in batches of `batchSize`, oldest first. A chain's new anchor is recorded pending
 * before its transaction is sent, and confirmed when it has its confirmations (this pass, if they
 * come in the sink's time, else a later one). A live grant's `mandate.granted` is sent by its
 * anchor's first confirmation (D-516).
 *
 * @example await anchorPendingReceipts(sql, new LocalAnchorSink(), new Date(event.scheduledTime));
 */
export async function anchorPendingReceipts(
  sql: Sql,
  sink: AnchorSink,
  now: Date,
  { batchSize = 1000, maxBatches = 10, attempts = 3 }: AnchorOptions = {},
): Promise<AnchorPassResult> {
  const result: AnchorPassResult = {
    anchors: [],
    contended: 0,
    pending: 0,
    confirmed: 0,
    republished: 0,
    reorged: 0,
    finalised: 0,
    deferred: false,
  };
  if (sink.follows) await followAnchors(sql, sink, now, result);
  if (result.deferred) return result;
  for (let batch = 0; batch < maxBatches; batch++) {
    let pending: RpcResult<"receipts_pending_anchor">["receipts"] = [];
    let anchored: AnchorRecord | null = null;
    let publication: Publication | null = null;
    for (let attempt = 0; attempt < attempts && !anchored; attempt++) {
      ({ receipts: pending } = await rpc(sql, "receipts_pending_anchor", { now: now.toISOString(), limit: batchSize }));
      if (pending.length === 0) return result;
      const tree = await merkleTree(pending.map((receipt) => receipt.seal));
      publication = await sink.prepare(tree.root, null, now);
      if (!publication) {
        result.deferred = true;
        return result;
      }
      const recorded = await rpc(sql, "receipt_anchor_record", {
        root: tree.root,
        sink: sink.name,
        sink_reference: publication.reference,
        now: now.toISOString(),
        confirmed: publication.confirmed,
        publication: publication.state,
        receipts: pending.map((receipt, i) => ({ id: receipt.id, proof: tree.proofs[i] })),
      });
      if (recorded.recorded) anchored = { anchor_id: recorded.anchor_id, root: tree.root, leaf_count: recorded.leaf_count };
    }
    if (!anchored || !publication) {
      result.contended += 1;
      return result;
    }
    result.anchors.push(anchored);
    if (!publication.confirmed) {
      // Recorded first, then sent: a failure from here on leaves a pending anchor the next pass follows up.
      await sink.send(publication);
      const settled = await sink.follow(publication, true);
      if (settled !== "lost" && settled.confirmed) await recordFollow(sql, anchored.anchor_id, settled, now);
      else result.pending += 1;
    }
    if (pending.length < batchSize) return result;
  }
  return result;
}

/**
 * Confirms, replaces, republishes, finalises or marks pending again each anchor this sink still
 * follows: every one not final (D-650), however long ago it was confirmed, since a reorg can take
 * a root out until its block is final; an anchor kept without its publication's state (D-339) is
 * adopted, its state read back from the sink and recorded.
 */
async function followAnchors(sql: Sql, sink: AnchorSink, now: Date, result: AnchorPassResult) {
  const { anchors } = await rpc(sql, "receipt_anchors_open", { sink: sink.name });
  for (const anchor of anchors) {
    const recorded: Publication = { reference: anchor.sink_reference, confirmed: anchor.confirmed, state: anchor.publication };
    let current = await sink.follow(recorded, false);
    if (anchor.confirmed && (current === "lost" || !current.confirmed || current.reference !== recorded.reference)) {
      result.reorged += 1;
    }
    if (current === "lost" || (!current.confirmed && sink.stale(current, now))) {
      const next = await sink.prepare(anchor.root, current === "lost" ? recorded : current, now);
      if (!next) {
        // Fees above the cap: the old publication (if any) may still confirm; nothing new is sent now.
        result.deferred = true;
        if (current === "lost") current = { ...recorded, confirmed: false };
      } else {
        // Recorded before it is sent, as a new anchor's publication is.
        await recordFollow(sql, anchor.id, next, now);
        await sink.send(next);
        result.republished += 1;
        result.pending += 1;
        continue;
      }
    }
    const changed =
      current.confirmed !== anchor.confirmed ||
      current.reference !== anchor.sink_reference ||
      current.final === true ||
      (anchor.publication === null && current.state !== null);
    if (changed) await recordFollow(sql, anchor.id, current, now);
    if (current.confirmed && !anchor.confirmed) result.confirmed += 1;
    if (current.confirmed && current.final) result.finalised += 1;
    if (!current.confirmed) result.pending += 1;
  }
}

function recordFollow(sql: Sql, anchorId: string, publication: Publication, now: Date) {
  return rpc(sql, "receipt_anchor_follow", {
    anchor_id: anchorId,
    sink_reference: publication.reference,
    confirmed: publication.confirmed,
    final: publication.confirmed && publication.final === true,
    publication: publication.state,
    now: now.toISOString(),
  });
}
