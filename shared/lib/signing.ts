import { CompactSign, createLocalJWKSet, importJWK, type JWK, type JWTPayload, jwtVerify, SignJWT } from "jose";

/** The service's Ed25519 keys: the first signs, all verify, so a key can be rotated without invalidating earlier receipts. */
export interface KeySet {
  active: { kid: string; privateKey: CryptoKey };
  /** The public halves, as published at /jwks. */
  jwks: { keys: JWK[] };
}

/**
 * Imports the signing keys from their JSON form (an array of private Ed25519 JWKs, as the
 * SIGNING_KEYS_JWK secret holds them).
 *
 * @example const keys = await importSigningKeys(process.env.SIGNING_KEYS_JWK);
 */
export async function importSigningKeys(json: string): Promise<KeySet> {
  const jwks = JSON.parse(json) as JWK[];
  if (!Array.isArray(jwks) || jwks.length === 0) throw new Error("SIGNING_KEYS_JWK must be a non-empty JSON array");
  const first = jwks[0];
  const privateKey = (await importJWK({ ...first, alg: "EdDSA" }, "EdDSA")) as CryptoKey;
  const publicKeys = jwks.map(({ d: _private, ...publicPart }) => ({ ...publicPart, alg: "EdDSA", use: "sig" }));
  return { active: { kid: String(first.kid), privateKey }, jwks: { keys: publicKeys } };
}

/** A compact JWS (EdDSA) over a JSON payload. */
export async function signJson(keys: KeySet, payload: unknown, type: string): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: "EdDSA", kid: keys.active.kid, typ: type })
    .sign(keys.active.privateKey);
}

const USER_JWT_ISSUER = "human-authorisation-service";
const USER_JWT_AUDIENCE = "first-party";

/** A first-party user JWT (EdDSA) for `subject`, valid for `ttlSeconds` from `now`. */
export async function signUserJwt(keys: KeySet, subject: string, claims: JWTPayload, now: Date, ttlSeconds: number): Promise<string> {
  const issuedAt = Math.floor(now.getTime() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "EdDSA", kid: keys.active.kid, typ: "JWT" })
    .setSubject(subject)
    .setIssuer(USER_JWT_ISSUER)
    .setAudience(USER_JWT_AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .setJti(crypto.randomUUID())
    .sign(keys.active.privateKey);
}

/** Verifies a first-party user JWT at `now`; null when invalid, expired or signed by another key. */
export async function verifyUserJwt(keys: KeySet, token: string, now: Date): Promise<JWTPayload | null> {
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys.jwks), {
      issuer: USER_JWT_ISSUER,
      audience: USER_JWT_AUDIENCE,
      algorithms: ["EdDSA"],
      currentDate: now,
    });
    return payload;
  } catch {
    return null;
  }
}
