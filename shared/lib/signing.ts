import { CompactSign, compactVerify, createLocalJWKSet, importJWK, type JWK, type JWTPayload, jwtVerify, SignJWT } from "jose";
import { type Config, requireSecret } from "../platform/config";

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

interface KeySet {
  active: SigningKey;
  jwks: { keys: JWK[] };
}

const keySets = new WeakMap<Config, Promise<KeySet>>();

/**
 * The service's Ed25519 signing keys from SIGNING_KEYS_JWK (a JSON array of private JWKs; the
 * first signs, all verify, so a key can be rotated without invalidating earlier receipts).
 */
export function signingKeys(config: Config): Promise<KeySet> {
  let keySet = keySets.get(config);
  if (!keySet) {
    keySet = (async () => {
      const jwks = JSON.parse(requireSecret(config, "SIGNING_KEYS_JWK")) as JWK[];
      if (!Array.isArray(jwks) || jwks.length === 0) throw new Error("SIGNING_KEYS_JWK must be a non-empty JSON array");
      const first = jwks[0];
      const privateKey = (await importJWK({ ...first, alg: "EdDSA" }, "EdDSA")) as CryptoKey;
      const publicKeys = jwks.map(({ d: _private, ...publicPart }) => ({ ...publicPart, alg: "EdDSA", use: "sig" }));
      return { active: { kid: String(first.kid), privateKey }, jwks: { keys: publicKeys } };
    })();
    keySets.set(config, keySet);
  }
  return keySet;
}

/** A compact JWS (EdDSA) over a JSON payload. */
export async function signJson(config: Config, payload: unknown, type: string): Promise<string> {
  const { active } = await signingKeys(config);
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: "EdDSA", kid: active.kid, typ: type })
    .sign(active.privateKey);
}

/** Verifies a compact JWS against the service's public keys; null when it does not verify. */
export async function verifyJson<T>(config: Config, jws: string): Promise<T | null> {
  const { jwks } = await signingKeys(config);
  try {
    const { payload } = await compactVerify(jws, createLocalJWKSet(jwks));
    return JSON.parse(new TextDecoder().decode(payload)) as T;
  } catch {
    return null;
  }
}

/** A first-party user JWT (EdDSA) for `subject`, valid for `ttlSeconds` from `now`. */
export async function signUserJwt(config: Config, subject: string, claims: JWTPayload, now: Date, ttlSeconds: number): Promise<string> {
  const { active } = await signingKeys(config);
  const issuedAt = Math.floor(now.getTime() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "EdDSA", kid: active.kid, typ: "JWT" })
    .setSubject(subject)
    .setIssuer(USER_JWT_ISSUER)
    .setAudience(USER_JWT_AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .setJti(crypto.randomUUID())
    .sign(active.privateKey);
}

export const USER_JWT_ISSUER = "human-authorisation-service";
export const USER_JWT_AUDIENCE = "first-party";

/** Verifies a first-party user JWT at `now`; null when invalid, expired or signed by another key. */
export async function verifyUserJwt(config: Config, token: string, now: Date): Promise<JWTPayload | null> {
  const { jwks } = await signingKeys(config);
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
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
