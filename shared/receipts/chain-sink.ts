/**
 * The public seal (docs/receipts.md#the-chain-sink): each anchor's Merkle root goes into the
 * calldata of a plain transaction on an EVM chain, sent by the anchoring account to itself. No
 * contract: calldata is recorded by every node forever, and anyone can read it back by the
 * transaction's hash (scripts/verify-receipt.ts does, with nothing from the service's database).
 */
import { createPublicClient, createWalletClient, type Hex, http, stringToHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../kernel/config";
import { type AnchorSink, LocalAnchorSink } from "./anchor";

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
  /** Blocks on top of the transaction's (its own included) before the anchor is recorded. */
  confirmations: number;
  /** How long one publication waits for its confirmations before the pass gives up (the receipts stay pending). */
  timeoutMs?: number;
}

/**
 * Publishes a root as a self-addressed transaction with the root in its calldata, waits for
 * `confirmations`, and answers `<hash>@<block>`. Any failure (node unreachable, fees the account
 * cannot pay, no confirmation in time, a reverted transaction) throws: the pass records nothing, and
 * the same receipts are taken again by the next tick.
 */
export class ChainAnchorSink implements AnchorSink {
  private constructor(
    readonly name: string,
    private readonly options: ChainSinkOptions,
  ) {}

  /** Reads the chain's id from the node: the sink's name is its CAIP-2 id, `eip155:<chain id>`. */
  static async connect(options: ChainSinkOptions): Promise<ChainAnchorSink> {
    const chainId = await createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1 }) }).getChainId();
    return new ChainAnchorSink(`eip155:${chainId}`, options);
  }

  async publish(root: string): Promise<{ reference: string }> {
    const { rpcUrl, privateKey, confirmations, timeoutMs = 45_000 } = this.options;
    const transport = http(rpcUrl, { retryCount: 1 });
    const account = privateKeyToAccount(privateKey);
    const reader = createPublicClient({ transport });
    const writer = createWalletClient({ account, transport });
    // The next nonce counting only mined transactions: a publication stuck in the mempool (fees
    // rose after it was sent) is replaced at today's fees rather than queued behind.
    const nonce = await reader.getTransactionCount({ address: account.address, blockTag: "latest" });
    const hash = await writer.sendTransaction({ chain: null, to: account.address, value: 0n, data: anchorCalldata(root), nonce });
    const receipt = await reader.waitForTransactionReceipt({ hash, confirmations, timeout: timeoutMs, pollingInterval: 500 });
    if (receipt.status !== "success") throw new Error(`the anchor transaction ${hash} reverted`);
    return { reference: `${hash}@${receipt.blockNumber}` };
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
  config: Pick<Config, "ANCHOR_CHAIN_RPC_URL" | "ANCHOR_CHAIN_PRIVATE_KEY" | "ANCHOR_CHAIN_CONFIRMATIONS">,
): Promise<AnchorSink> {
  const { ANCHOR_CHAIN_RPC_URL: rpcUrl, ANCHOR_CHAIN_PRIVATE_KEY: privateKey } = config;
  if (!rpcUrl && !privateKey) return new LocalAnchorSink();
  if (!rpcUrl || !privateKey) {
    throw new Error("invalid configuration: ANCHOR_CHAIN_RPC_URL and ANCHOR_CHAIN_PRIVATE_KEY are set together or not at all");
  }
  return ChainAnchorSink.connect({ rpcUrl, privateKey: privateKey as Hex, confirmations: config.ANCHOR_CHAIN_CONFIRMATIONS });
}
