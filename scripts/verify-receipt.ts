/**
 * `npx tsx scripts/verify-receipt.ts --rpc <url> --answer <file | -> [--jws <compact JWS>]`: checks a
 * live receipt's public seal from the chain alone (docs/receipts.md#verifying-from-the-chain).
 *
 * `--answer` is receipt-verify's JSON answer (a file, or `-` for stdin); `--jws` the receipt itself
 * when you hold it (else the answer's `jws`). From the answer only pointers are taken: the
 * inclusion proof, the chain (`public_seal.sink`, `eip155:<chain id>`) and the transaction
 * (`public_seal.sink_reference`, `<hash>@<block>`). The seal, the root and the calldata expected
 * are recomputed here; the answer's own `root`, `immutability_seal` and `*_valid` are never read.
 * Deliberately independent of the service's code (its own SHA-256 fold, not shared/receipts/merkle.ts),
 * so a bug there cannot hide itself here. It does not check the JWS signature: that needs the
 * service's published keys (receipt-verify/jwks), which this check does not trust.
 *
 * Prints a JSON verdict; exits 0 when the root in the transaction's calldata is the one the receipt
 * and its proof fold to, 1 when it is not (or the transaction is missing or failed), 2 on bad usage.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createPublicClient, type Hex, http, stringToHex } from "viem";

/** The calldata format, restated rather than imported (shared/receipts/chain-sink.ts writes it). */
const TAG = "receipt-root/v1";

interface Step {
  hash: string;
  side: string;
}

function sha256(...parts: Buffer[]): Buffer {
  return createHash("sha256").update(Buffer.concat(parts)).digest();
}

/** leaf = SHA-256(0x00 ‖ seal); each step SHA-256(0x01 ‖ left ‖ right), the sibling on the side it names. */
function foldProof(seal: string, proof: Step[]): string {
  let node = sha256(Buffer.from([0]), Buffer.from(seal, "hex"));
  for (const step of proof) {
    if (!/^[0-9a-f]{64}$/.test(step?.hash ?? "")) throw new Error("a proof step's hash is 64 lowercase hex characters");
    const sibling = Buffer.from(step.hash, "hex");
    if (step.side === "left") node = sha256(Buffer.from([1]), sibling, node);
    else if (step.side === "right") node = sha256(Buffer.from([1]), node, sibling);
    else throw new Error(`a proof step's side is left or right, not ${JSON.stringify(step.side)}`);
  }
  return node.toString("hex");
}

function payloadOf(jws: string): Record<string, unknown> {
  const parts = jws.split(".");
  if (parts.length !== 3) throw new Error("the receipt is not a compact JWS");
  return JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { rpc: { type: "string" }, answer: { type: "string" }, jws: { type: "string" } } });
  if (!values.rpc || !values.answer) {
    console.error("usage: verify-receipt --rpc <url> --answer <file | -> [--jws <compact JWS>]");
    return 2;
  }
  const answer = JSON.parse(readFileSync(values.answer === "-" ? 0 : values.answer, "utf8"));
  const jws: string = values.jws ?? answer.jws;
  const seal = answer.public_seal;
  if (typeof jws !== "string" || !seal || !Array.isArray(seal.inclusion_proof)) {
    console.log(JSON.stringify({ match: false, reason: "the answer has no public seal (a pending or sandbox receipt)" }));
    return 1;
  }
  const chain = /^eip155:(\d+)$/.exec(String(seal.sink));
  const reference = /^(0x[0-9a-f]{64})@(\d+)$/.exec(String(seal.sink_reference));
  if (chain && /^0x[0-9a-f]{64}$/.test(String(seal.sink_reference))) {
    // A pending seal (D-515) names its transaction before it has its confirmations: nothing to hold it to yet.
    console.log(JSON.stringify({ match: false, reason: "the seal is pending: its transaction is not confirmed yet" }));
    return 1;
  }
  if (!chain || !reference) {
    console.log(JSON.stringify({ match: false, reason: `not anchored on a chain (sink ${seal.sink})` }));
    return 1;
  }

  const payload = payloadOf(jws);
  const receiptSeal = createHash("sha256").update(jws, "utf8").digest("hex");
  const root = foldProof(receiptSeal, seal.inclusion_proof);
  const expected = `${stringToHex(TAG)}${root}`;
  const [, hash, statedBlock] = reference;

  const client = createPublicClient({ transport: http(values.rpc, { retryCount: 1 }) });
  const chainId = await client.getChainId();
  const reasons: string[] = [];
  if (String(chainId) !== chain[1]) reasons.push(`the node serves chain ${chainId}, the seal names ${chain[1]}`);
  const transaction = await client.getTransaction({ hash: hash as Hex }).catch(() => null);
  const receipt = await client.getTransactionReceipt({ hash: hash as Hex }).catch(() => null);
  if (!transaction || !receipt) reasons.push("the transaction is not on this chain");
  else {
    if (receipt.status !== "success") reasons.push("the transaction failed");
    if (transaction.input.toLowerCase() !== expected) reasons.push("the transaction's calldata is not this receipt's root");
  }
  const block = receipt ? await client.getBlock({ blockNumber: receipt.blockNumber }) : null;
  const head = await client.getBlockNumber();
  if (receipt && String(receipt.blockNumber) !== statedBlock)
    reasons.push(`mined in block ${receipt.blockNumber}, not ${statedBlock} (a reorg)`);
  if (payload.env !== "live") reasons.push(`a ${String(payload.env)} receipt has no public seal`);

  const match = reasons.length === 0;
  console.log(
    JSON.stringify({
      match,
      receipt: { rid: payload.rid, code: payload.code, env: payload.env, iat: payload.iat },
      seal: receiptSeal,
      root,
      chain_id: chainId,
      transaction: hash,
      from: transaction?.from ?? null,
      block: receipt ? Number(receipt.blockNumber) : null,
      confirmations: receipt ? Number(head - receipt.blockNumber) + 1 : 0,
      // the seal existed no later than this: the block's own time
      anchored_by: block ? new Date(Number(block.timestamp) * 1000).toISOString() : null,
      reasons,
    }),
  );
  return match ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(String(error?.message ?? error));
    process.exit(2);
  },
);
