/**
 * The Merkle tree over live receipts' seals (docs/receipts.md): leaf hash = SHA-256(0x00 ‖ seal
 * bytes), node hash = SHA-256(0x01 ‖ left ‖ right); leaves keep their order, each level pairs
 * neighbours left to right, and a node left without a partner is promoted unchanged. The same
 * construction is checked in SQL by private.merkle_fold (supabase/domains/receipts.sql).
 */
import { toHex } from "../lib/crypto";
import { SEAL } from "./signed-receipt";

/** One step from a node towards the root: the sibling's hash and the side the sibling is on. */
export interface ProofStep {
  hash: string;
  side: "left" | "right";
}

interface MerkleTree {
  root: string;
  /** proofs[i] is the inclusion proof of leaves[i]. */
  proofs: ProofStep[][];
}

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

function sealBytes(seal: string): Uint8Array {
  if (typeof seal !== "string" || !SEAL.test(seal)) throw new Error("a seal is 64 lowercase hex characters");
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(seal.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

async function digest(prefix: number, ...parts: Uint8Array[]): Promise<Uint8Array> {
  const input = new Uint8Array(1 + parts.reduce((n, part) => n + part.length, 0));
  input[0] = prefix;
  let offset = 1;
  for (const part of parts) {
    input.set(part, offset);
    offset += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", input));
}

/** SHA-256(0x00 ‖ seal bytes), hex. */
export async function merkleLeafHash(seal: string): Promise<string> {
  return toHex(await digest(LEAF_PREFIX, sealBytes(seal)));
}

/**
 * The root and every leaf's inclusion proof, in one pass over the tree. Leaves are seals (hex).
 *
 * @example const { root, proofs } = await merkleTree(receipts.map((r) => r.seal));
 */
export async function merkleTree(leaves: readonly string[]): Promise<MerkleTree> {
  if (leaves.length === 0) throw new Error("a Merkle tree needs at least one leaf");
  let level = await Promise.all(leaves.map((seal) => digest(LEAF_PREFIX, sealBytes(seal))));
  // position[i]: index within the current level of the node that holds leaf i.
  const position = leaves.map((_, i) => i);
  const proofs: ProofStep[][] = leaves.map(() => []);
  while (level.length > 1) {
    for (let i = 0; i < leaves.length; i++) {
      const at = position[i];
      const sibling = at % 2 === 0 ? at + 1 : at - 1;
      if (sibling < level.length) proofs[i].push({ hash: toHex(level[sibling]), side: at % 2 === 0 ? "right" : "left" });
      position[i] = at >> 1;
    }
    const next: Promise<Uint8Array>[] = [];
    for (let i = 0; i < level.length; i += 2) {
      next.push(i + 1 < level.length ? digest(NODE_PREFIX, level[i], level[i + 1]) : Promise.resolve(level[i]));
    }
    level = await Promise.all(next);
  }
  return { root: toHex(level[0]), proofs };
}

/** The Merkle root (hex) over seals `leaves`. */
export async function merkleRoot(leaves: readonly string[]): Promise<string> {
  return (await merkleTree(leaves)).root;
}

/** The inclusion proof of `leaves[index]`. */
export async function inclusionProof(leaves: readonly string[], index: number): Promise<ProofStep[]> {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) throw new RangeError("leaf index out of range");
  return (await merkleTree(leaves)).proofs[index];
}

/**
 * True when folding seal `leaf` with `proof` gives `root`. Malformed input is simply false.
 *
 * @example await verifyInclusion(receipt.seal, receipt.inclusion_proof, anchor.root) // true
 */
export async function verifyInclusion(leaf: string, proof: readonly ProofStep[], root: string): Promise<boolean> {
  try {
    if (!Array.isArray(proof) || proof.length > 64 || !SEAL.test(root)) return false;
    let node = await digest(LEAF_PREFIX, sealBytes(leaf));
    for (const step of proof) {
      const sibling = sealBytes(step?.hash);
      if (step.side === "left") node = await digest(NODE_PREFIX, sibling, node);
      else if (step.side === "right") node = await digest(NODE_PREFIX, node, sibling);
      else return false;
    }
    return toHex(node) === root;
  } catch {
    return false;
  }
}
