import { sha256Hex } from "./crypto";

export const TEMPLATE_DIMENSIONS = 128;

/** Bits of a template's search code: one per secret hyperplane (D-680). */
export const TEMPLATE_CODE_BITS = 2048;

export interface TemplateProtector {
  /** Identifies the key; templates protected under another key are never compared. */
  keyId: string;
  /** The protected form of an embedding: unit-normalised, then rotated by the secret matrix. */
  protect(embedding: readonly number[]): number[];
  /**
   * The search code of a protected embedding, as hex: the side of each of TEMPLATE_CODE_BITS secret
   * hyperplanes it falls on (D-680). Its Hamming distance to another code estimates their angle, enough
   * to pick candidates; the decision is an exact re-check in the store, never the estimate.
   */
  code(protectedEmbedding: readonly number[]): string;
}

const protectors = new Map<string, Promise<TemplateProtector>>();

/**
 * Protected templates: a secret orthonormal rotation R derived from TEMPLATE_PROTECTION_KEY, a key
 * held outside the database. Rotation preserves inner products, so cosine similarity between
 * protected templates equals that between the originals and 1:N search works on them unchanged;
 * a database dump alone yields vectors in an unknown basis, unusable against a face model.
 * Rotating the key changes R and so revokes every stored template at once.
 *
 * Since D-680 the store keeps no rotated embedding in the clear: it keeps this key's search code of it
 * (`code`: 2,048 signs of Gaussian hyperplanes derived from the same secret) and the rotated embedding
 * sealed under a key of the store's that no Worker holds, and re-checks candidates exactly there.
 *
 * R comes from a Gaussian matrix (AES-CTR keystream under a key derived from the secret, turned
 * into normals with Box–Muller), orthonormalised by modified Gram–Schmidt: a Haar-random rotation.
 */
export function templateProtector(secret: string): Promise<TemplateProtector> {
  let protector = protectors.get(secret);
  if (!protector) {
    protector = buildProtector(secret);
    protectors.set(secret, protector);
  }
  return protector;
}

async function buildProtector(secret: string): Promise<TemplateProtector> {
  const keyId = (await sha256Hex(`template-key-id:${secret}`)).slice(0, 16);
  const rotation = orthonormalise(await gaussianMatrix(`template-rotation:${secret}`, TEMPLATE_DIMENSIONS, TEMPLATE_DIMENSIONS));
  const planes = await gaussianMatrix(`template-code:${secret}`, TEMPLATE_CODE_BITS, TEMPLATE_DIMENSIONS);
  return {
    keyId,
    protect(embedding) {
      const norm = Math.hypot(...embedding) || 1;
      const out = new Array<number>(TEMPLATE_DIMENSIONS);
      for (let i = 0; i < TEMPLATE_DIMENSIONS; i++) {
        const row = rotation[i];
        let sum = 0;
        for (let j = 0; j < TEMPLATE_DIMENSIONS; j++) sum += row[j] * embedding[j];
        out[i] = sum / norm;
      }
      return out;
    },
    code(protectedEmbedding) {
      const bytes = new Uint8Array(TEMPLATE_CODE_BITS / 8);
      for (let i = 0; i < TEMPLATE_CODE_BITS; i++) {
        const plane = planes[i];
        let sum = 0;
        for (let j = 0; j < TEMPLATE_DIMENSIONS; j++) sum += plane[j] * protectedEmbedding[j];
        if (sum >= 0) bytes[i >> 3] |= 0x80 >> (i & 7);
      }
      return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    },
  };
}

/** A rows x n matrix of standard normals from an AES-CTR keystream under a key derived from `label`. */
async function gaussianMatrix(label: string, rows: number, n: number): Promise<Float64Array[]> {
  const keyBytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(label)));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "AES-CTR" }, false, ["encrypt"]);
  const stream = new Uint32Array(
    await crypto.subtle.encrypt({ name: "AES-CTR", counter: new Uint8Array(16), length: 64 }, key, new Uint8Array(rows * n * 4)),
  );
  const uniform = (i: number) => (stream[i] + 0.5) / 4294967296;
  const matrix = Array.from({ length: rows }, () => new Float64Array(n));
  for (let k = 0; k < rows * n; k += 2) {
    const radius = Math.sqrt(-2 * Math.log(uniform(k)));
    const angle = 2 * Math.PI * uniform(k + 1);
    matrix[Math.floor(k / n)][k % n] = radius * Math.cos(angle);
    matrix[Math.floor((k + 1) / n)][(k + 1) % n] = radius * Math.sin(angle);
  }
  return matrix;
}

function orthonormalise(rows: Float64Array[]): Float64Array[] {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    for (let j = 0; j < i; j++) {
      const basis = rows[j];
      let dot = 0;
      for (let k = 0; k < row.length; k++) dot += row[k] * basis[k];
      for (let k = 0; k < row.length; k++) row[k] -= dot * basis[k];
    }
    let norm = 0;
    for (let k = 0; k < row.length; k++) norm += row[k] * row[k];
    norm = Math.sqrt(norm);
    for (let k = 0; k < row.length; k++) row[k] /= norm;
  }
  return rows;
}
