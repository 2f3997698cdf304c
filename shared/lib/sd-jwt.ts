/**
 * SD-JWT (RFC 9901) issuance with the service's Ed25519 keys, through @sd-jwt/core: every claim
 * named in `selective` becomes a salted disclosure whose digest sits in `_sd`, so the holder can
 * show a verifier any subset; the issuer JWT is signed EdDSA under the active key's `kid`, and
 * verifies against the published JWKS. Hashing and salts use WebCrypto (Node and workerd alike).
 */
import { SDJwtInstance } from "@sd-jwt/core";
import { randomBase64Url, toBase64Url } from "./crypto";
import type { KeySet } from "./signing";

const encoder = new TextEncoder();

/** SHA-256 of `data` (a string is UTF-8): the SD-JWT `sha-256` hash algorithm. */
async function sha256(data: string | ArrayBuffer): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", typeof data === "string" ? encoder.encode(data) : data));
}

/** `sha-256:` and the base64url SHA-256 of `text`: how a disclosure names content it does not carry. */
export async function contentDigest(text: string): Promise<string> {
  return `sha-256:${toBase64Url(await sha256(text))}`;
}

/**
 * Issues `payload` as an SD-JWT whose `selective` top-level claims are selectively disclosable.
 * Answers the compact form (`<issuer JWT>~<disclosure>~…~`).
 *
 * @example const sdJwt = await issueSdJwt(keys, { iss, iat, age_over_18: true }, ["age_over_18"], "example+sd-jwt");
 */
export async function issueSdJwt(keys: KeySet, payload: Record<string, unknown>, selective: string[], type: string): Promise<string> {
  const { privateKey } = keys.active;
  const issuer = new SDJwtInstance({
    hashAlg: "sha-256",
    hasher: (data) => sha256(data),
    saltGenerator: () => randomBase64Url(16),
    signAlg: "EdDSA",
    signer: async (data) => toBase64Url(await crypto.subtle.sign(privateKey.algorithm, privateKey, encoder.encode(data))),
  });
  const frame = { _sd: selective } as Parameters<typeof issuer.issue>[1];
  return issuer.issue(payload, frame, { header: { kid: keys.active.kid, typ: type } });
}
