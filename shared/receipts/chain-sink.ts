/**
 * The public seal (docs/receipts.md#the-chain-sink): each anchor's Merkle root goes into the
 * calldata of a plain transaction on an EVM chain, sent by the anchoring account to itself. No
 * contract: calldata is recorded by every node forever, and anyone can read it back by the
 * transaction's hash (scripts/verify-receipt.ts does, with nothing from the service's database).
 */
import { createPublicClient, type Hex, http, keccak256, parseGwei, stringToHex, TransactionNotFoundError } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../kernel/config";
import { type AnchorSink, LocalAnchorSink, type Publication } from "./anchor";

/** What precedes the root in the calldata: says what the 32 bytes after it are. Changing it changes the format. */
export const ANCHOR_CALLDATA_TAG = "receipt-root/v1";
const TAG_HEX = stringToHex(ANCHOR_CALLDATA_TAG);

/** The calldata of an anchor: the tag's ASCII bytes, then the root's 32 bytes. */
export function anchorCalldata(root: string): Hex {
  if (!/^[0-9a-f]{64}$/.test(root)) throw new Error("a Merkle root is 64 lowercase hex characters");
  return `${TAG_HEX}${root}`;
}

/** A chain sink's reference, `<transaction hash>@<block number>`, read back by the verifier. */
export const CHAIN_REFERENCE = /^(0x[0-9a-f]{64})@(\d+)$/;

interface ChainSinkOptions {
  rpcUrl: string;
  /** The anchoring account's secp256k1 key, 0x and 64 hex. It pays the fees and nothing else. */
  privateKey: Hex;
  /** Blocks on top of the transaction's (its own included) before the anchor counts as confirmed. */
  confirmations: number;
  /**
   * Blocks (its own included) before a confirmed anchor's block may count as final (D-650; default
   * 64, never fewer than `confirmations`): final once this deep and at or below the node's
   * `finalized` block, after which a reorg cannot take it out and the pass stops following it.
   */
  finalityDepth?: number;
  /** How long a pass waits for a new publication's confirmations before leaving it pending for the next pass. */
  timeoutMs?: number;
  /** A publication still unmined this long after it was sent is replaced at current fees (same nonce). */
  replaceAfterMs?: number;
  /** The most the account pays per gas (wei); above it nothing is sent and the receipts stay pending. */
  maxFeePerGas?: bigint;
}

/** What the anchor row keeps of a chain publication (`receipt_anchors.publication`). */
interface ChainState {
  /** The nonce every transaction of this publication uses: replacements share it, so at most one is mined. */
  nonce: number;
  /** Every transaction sent carrying the root, oldest first; the last is the one to send. */
  hashes: Hex[];
  /**
   * The last one, signed, so a send that failed can be repeated as is. Absent for a transaction
   * adopted from the chain (D-650: an anchor of D-339, kept by its reference only): that one was
   * sent long ago, and if it is lost a new one replaces it.
   */
  raw?: Hex;
  max_fee_per_gas: string;
  max_priority_fee_per_gas: string;
  /** The pass's clock when the last one was prepared. */
  sent_at: string;
  /** Once mined: the block that holds it (a reorg changes it). */
  block_hash?: Hex;
}

/** A replacement pays at least an eighth more than what it replaces (the usual mempool rule is a tenth). */
const bump = (previous: bigint) => previous + previous / 8n + 1n;

/**
 * Publishes a root as a self-addressed transaction with the root in its calldata (D-339), recorded
 * before it is sent and followed up until it has its confirmations (D-515): stuck ones are replaced
 * at current fees with the same nonce, lost ones (dropped, or taken out by a reorg) republished,
 * and nothing is sent while fees are above the cap.
 */
export class ChainAnchorSink implements AnchorSink {
  readonly follows = true;
  private constructor(
    readonly name: string,
    private readonly options: ChainSinkOptions,
    private readonly chainId: number,
  ) {}

  /** Reads the chain's id from the node: the sink's name is its CAIP-2 id, `eip155:<chain id>`. */
  static async connect(options: ChainSinkOptions): Promise<ChainAnchorSink> {
    const chainId = await createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1 }) }).getChainId();
    return new ChainAnchorSink(`eip155:${chainId}`, options, chainId);
  }

  private get reader() {
    return createPublicClient({ transport: http(this.options.rpcUrl, { retryCount: 1 }) });
  }

  async prepare(root: string, previous: Publication | null, now: Date): Promise<Publication | null> {
    const account = privateKeyToAccount(this.options.privateKey);
    const reader = this.reader;
    const before = previous?.state as ChainState | null | undefined;
    const fees = await reader.estimateFeesPerGas();
    let maxFeePerGas = fees.maxFeePerGas;
    let maxPriorityFeePerGas = fees.maxPriorityFeePerGas;
    let nonce: number;
    const mined = await reader.getTransactionCount({ address: account.address, blockTag: "latest" });
    if (before && before.nonce >= mined) {
      // Replace what is stuck or lost: the same nonce, so the old one can no longer be mined too.
      nonce = before.nonce;
      const floorFee = bump(BigInt(before.max_fee_per_gas));
      const floorTip = bump(BigInt(before.max_priority_fee_per_gas));
      if (maxFeePerGas < floorFee) maxFeePerGas = floorFee;
      if (maxPriorityFeePerGas < floorTip) maxPriorityFeePerGas = floorTip;
    } else {
      // A first publication, or one whose nonce something else used: the next one free, counting the pool.
      nonce = await reader.getTransactionCount({ address: account.address, blockTag: "pending" });
    }
    if (this.options.maxFeePerGas !== undefined && maxFeePerGas > this.options.maxFeePerGas) return null;
    const data = anchorCalldata(root);
    const gas = await reader.estimateGas({ account: account.address, to: account.address, value: 0n, data });
    const raw = await account.signTransaction({
      type: "eip1559",
      chainId: this.chainId,
      to: account.address,
      value: 0n,
      data,
      nonce,
      gas,
      maxFeePerGas,
      maxPriorityFeePerGas,
    });
    const hash = keccak256(raw);
    const state: ChainState = {
      nonce,
      hashes: [...(before?.hashes ?? []), hash],
      raw,
      max_fee_per_gas: String(maxFeePerGas),
      max_priority_fee_per_gas: String(maxPriorityFeePerGas),
      sent_at: now.toISOString(),
    };
    return { reference: hash, confirmed: false, state: { ...state } };
  }

  async send(publication: Publication): Promise<void> {
    const { raw } = publication.state as unknown as ChainState;
    if (!raw) throw new Error("only a prepared publication is sent");
    await this.reader.sendRawTransaction({ serializedTransaction: raw });
  }

  async follow(publication: Publication, wait: boolean): Promise<Publication | "lost"> {
    const { confirmations, timeoutMs = 45_000 } = this.options;
    const kept = publication.state as unknown as ChainState | null;
    // An anchor recorded before publications were kept (D-339) has its reference only: its transaction is read back (D-650).
    const state = kept?.hashes ? kept : await this.adopt(publication.reference);
    if (!state) return "lost";
    const reader = this.reader;
    const latest = state.hashes[state.hashes.length - 1] as Hex;
    if (wait) {
      await reader
        .waitForTransactionReceipt({ hash: latest, confirmations, timeout: timeoutMs, pollingInterval: 500 })
        .catch(() => undefined);
    }
    // Newest first: a replacement is the likelier to be mined; at most one of them can be (one nonce).
    for (const hash of [...state.hashes].reverse()) {
      const receipt = await reader.getTransactionReceipt({ hash }).catch(() => null);
      if (receipt?.status !== "success") continue;
      const tip = await reader.getBlockNumber({ cacheTime: 0 });
      const depth = tip - receipt.blockNumber + 1n;
      // Still in the block it was confirmed in: confirmed, however deep this sink now asks.
      const confirmed = (publication.confirmed && receipt.blockHash === state.block_hash) || depth >= BigInt(confirmations);
      return {
        reference: confirmed ? `${hash}@${receipt.blockNumber}` : hash,
        confirmed,
        final: confirmed && (await this.final(receipt.blockNumber, depth)),
        state: { ...state, block_hash: receipt.blockHash },
      };
    }
    for (const hash of [...state.hashes].reverse()) {
      const waiting = await reader.getTransaction({ hash }).catch(() => null);
      if (waiting) return { reference: latest, confirmed: false, state: { ...state, block_hash: undefined } };
    }
    return "lost";
  }

  /**
   * Whether a block `depth` deep is beyond a reorg's reach: at least the finality depth, and at or
   * below the node's `finalized` block where it has one. Both, because each alone can be wrong: a
   * depth is no finality on a chain that finalizes later (Base: its L1 batch's finality, tens of
   * minutes), and a development node (ganache) calls every block finalized.
   */
  private async final(block: bigint, depth: bigint): Promise<boolean> {
    const floor = Math.max(this.options.finalityDepth ?? 64, this.options.confirmations);
    if (depth < BigInt(floor)) return false;
    const finalized = await this.reader.getBlock({ blockTag: "finalized" }).catch(() => null);
    return finalized === null || block <= finalized.number;
  }

  /**
   * The state of a publication kept by its reference only (an anchor of D-339, `<hash>@<block>`),
   * read back from the chain: its transaction's nonce and fees, its hash. Null when the chain has
   * no such transaction (a reorg took it out and it was never re-included): the root is then
   * republished. When it was sent is unknown, so one still waiting in the pool counts as stuck.
   */
  private async adopt(reference: string | null): Promise<ChainState | null> {
    const hash = CHAIN_REFERENCE.exec(reference ?? "")?.[1] as Hex | undefined;
    if (!hash) return null;
    const transaction = await this.reader.getTransaction({ hash }).catch((error: unknown) => {
      if (error instanceof TransactionNotFoundError) return null;
      throw error;
    });
    if (!transaction) return null;
    return {
      nonce: transaction.nonce,
      hashes: [hash],
      max_fee_per_gas: String(transaction.maxFeePerGas ?? transaction.gasPrice ?? 0n),
      max_priority_fee_per_gas: String(transaction.maxPriorityFeePerGas ?? transaction.gasPrice ?? 0n),
      sent_at: new Date(0).toISOString(),
    };
  }

  stale(publication: Publication, now: Date): boolean {
    const state = publication.state as unknown as ChainState;
    if (state.block_hash) return false; // mined, only short of its confirmations
    return now.getTime() - Date.parse(state.sent_at) >= (this.options.replaceAfterMs ?? 300_000);
  }
}

/**
 * The sink the deployment configures: the chain when both ANCHOR_CHAIN_RPC_URL and
 * ANCHOR_CHAIN_PRIVATE_KEY are set, the local sink when neither is; one without the other is a
 * misconfiguration, refused rather than silently anchoring nowhere public.
 *
 * @example const sink = await anchorSinkFor(config);
 */
export async function anchorSinkFor(
  config: Pick<Config, "ANCHOR_CHAIN_RPC_URL" | "ANCHOR_CHAIN_PRIVATE_KEY" | "ANCHOR_CHAIN_CONFIRMATIONS" | "ANCHOR_CHAIN_MAX_FEE_GWEI"> &
    Partial<Pick<Config, "ANCHOR_CHAIN_FINALITY_DEPTH">>,
): Promise<AnchorSink> {
  const { ANCHOR_CHAIN_RPC_URL: rpcUrl, ANCHOR_CHAIN_PRIVATE_KEY: privateKey } = config;
  if (!rpcUrl && !privateKey) return new LocalAnchorSink();
  if (!rpcUrl || !privateKey) {
    throw new Error("invalid configuration: ANCHOR_CHAIN_RPC_URL and ANCHOR_CHAIN_PRIVATE_KEY are set together or not at all");
  }
  return ChainAnchorSink.connect({
    rpcUrl,
    privateKey: privateKey as Hex,
    confirmations: config.ANCHOR_CHAIN_CONFIRMATIONS,
    ...(config.ANCHOR_CHAIN_FINALITY_DEPTH !== undefined && { finalityDepth: config.ANCHOR_CHAIN_FINALITY_DEPTH }),
    ...(config.ANCHOR_CHAIN_MAX_FEE_GWEI !== undefined && { maxFeePerGas: parseGwei(config.ANCHOR_CHAIN_MAX_FEE_GWEI) }),
  });
}
