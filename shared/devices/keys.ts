/**
 * A device's public key in the forms outside the WebAuthn ceremony use it: the COSE key the
 * authenticator registered as a JWK (an SD-JWT's `cnf`, RFC 7800), its RFC 7638 thumbprint (how a
 * key a holder presents finds its device), and an SPKI PEM (`biometric_attestation.device_pubkey_pem`,
 * spec 4.5) read back as a JWK. The algorithms are the ones a device may register (registration.ts,
 * SUPPORTED_ALGORITHMS): EC2 P-256, OKP Ed25519, RSA.
 */
import { cose, decodeCredentialPublicKey } from "@simplewebauthn/server/helpers";
import { calculateJwkThumbprint, exportJWK, importSPKI, type JWK } from "jose";
import { toBase64Url } from "../lib/crypto";

const EC_CURVES: Record<number, string> = { [cose.COSECRV.P256]: "P-256", [cose.COSECRV.P384]: "P-384", [cose.COSECRV.P521]: "P-521" };

/** The COSE_Key (RFC 9052) an authenticator registered, as a public JWK (RFC 7517); throws on a key type it does not know. */
export function jwkOfCoseKey(coseKey: Uint8Array<ArrayBuffer>): JWK {
  const key = decodeCredentialPublicKey(coseKey);
  const part = (label: number) => {
    const value = key.get(label as never) as unknown;
    if (!(value instanceof Uint8Array)) throw new Error(`the COSE key lacks parameter ${label}`);
    return toBase64Url(value);
  };
  const kty = key.get(cose.COSEKEYS.kty);
  const crv = Number(key.get(cose.COSEKEYS.crv as never));
  if (kty === cose.COSEKTY.EC2 && EC_CURVES[crv]) {
    return { kty: "EC", crv: EC_CURVES[crv], x: part(cose.COSEKEYS.x), y: part(cose.COSEKEYS.y) };
  }
  if (kty === cose.COSEKTY.OKP && crv === cose.COSECRV.ED25519) return { kty: "OKP", crv: "Ed25519", x: part(cose.COSEKEYS.x) };
  if (kty === cose.COSEKTY.RSA) return { kty: "RSA", n: part(cose.COSEKEYS.n), e: part(cose.COSEKEYS.e) };
  throw new Error("a COSE key type the service does not register");
}

/** RFC 7638 SHA-256 thumbprint (base64url, 43 characters) of a public JWK. */
export function keyThumbprint(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(jwk, "sha256");
}

/** The public members of a JWK (what `cnf` and thumbprints carry), nothing else a library added. */
function publicMembers(jwk: JWK): JWK {
  const { kty, crv, x, y, n, e } = jwk;
  return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, value]) => value !== undefined)) as JWK;
}

/**
 * An SPKI PEM (`-----BEGIN PUBLIC KEY-----`) as a public JWK, for the algorithms a device registers
 * (ES256, EdDSA, RS256); null when it is none of them or not a public key at all.
 */
export async function jwkOfSpkiPem(pem: string): Promise<JWK | null> {
  for (const alg of ["ES256", "EdDSA", "RS256"]) {
    try {
      return publicMembers(await exportJWK(await importSPKI(pem, alg, { extractable: true })));
    } catch {
      // the next algorithm
    }
  }
  return null;
}
