/**
 * Authentication without HTTP: a presented key checked at the edge, then, in one round trip,
 * against the database together with the replay guard's nonce. Used by the middleware in auth.ts
 * and by operations that authenticate inside their own RPC (mandate-check, mandate-consume).
 */
import { sha256Hex } from "../lib/crypto";
import { type KeySet, signUserJwt, verifyUserJwt } from "../lib/signing";
import { parseApiKey } from "./api-keys";
import type { Queryable } from "./db/client";
import { rpc } from "./db/rpc";
import { ApiError } from "./errors";
import type { Environment, KeyKind, MerchantKeyPrincipal, Tenant, UserPrincipal } from "./principal";
import type { ReplayClaim } from "./replay-guard";
import type { BreakerScope, BreakerState } from "./rpc";

export const API_KEY_HEADER = "x-service-api-key";

/**
 * Which keys an endpoint accepts (spec section 5):
 * - `secret`: server endpoints; a publishable key is `401 AUTH_REQUIRED`.
 * - `publishable`: browser endpoints; publishable or secret keys.
 * - `anonymous`: a key is optional; without one the principal is null.
 */
export type KeyPolicy = "secret" | "publishable" | "anonymous";

/** A presented key that passed the checks needing no database; only its hash leaves the edge. */
export interface Credential {
  keyHash: string;
  kind: KeyKind;
  environment: Environment;
}

/** The presented key: `x-service-api-key`, else the configured legacy header (the first one wins). */
export function presentedKey(headers: Headers, legacyHeader: string): string | null {
  return headers.get(API_KEY_HEADER) ?? headers.get(legacyHeader);
}

/**
 * The presented key checked without the database: `401 API_KEY_REQUIRED` when there is none
 * (null for an anonymous endpoint), `401 INVALID_API_KEY` when it is malformed, `401
 * AUTH_REQUIRED` for a publishable key on a secret endpoint.
 */
export async function presentedCredential(headers: Headers, legacyHeader: string, policy: KeyPolicy): Promise<Credential | null> {
  const key = presentedKey(headers, legacyHeader);
  if (!key) {
    if (policy === "anonymous") return null;
    throw new ApiError("API_KEY_REQUIRED");
  }
  const parsed = parseApiKey(key);
  if (!parsed) throw new ApiError("INVALID_API_KEY");
  if (policy === "secret" && parsed.kind === "publishable") throw new ApiError("AUTH_REQUIRED");
  return { keyHash: await sha256Hex(key), kind: parsed.kind, environment: parsed.environment };
}

/** The credential as the RPCs take it. */
export function credentialParam(credential: Credential) {
  return { key_hash: credential.keyHash, kind: credential.kind, environment: credential.environment };
}

/** The replay claim as the RPCs take it. */
export function replayParam(replay: ReplayClaim | null, now: Date) {
  return { now: now.toISOString(), ...(replay ? { nonce: replay.nonce, window_seconds: replay.windowSeconds } : {}) };
}

/** Key hash → the tenant it authenticated as, learnt in this isolate (a key never changes merchant). */
const tenantsOfKeys = new Map<string, Tenant>();
const TENANTS_OF_KEYS_MAX = 10_000;

/**
 * Records that the key with SHA-256 `keyHash` authenticated as `tenant`: every authentication
 * does, and so do the operations that authenticate inside their own round trip (mandate-check).
 */
export function learnKeyTenant(keyHash: string, tenant: Tenant): void {
  if (tenantsOfKeys.has(keyHash)) return;
  if (tenantsOfKeys.size >= TENANTS_OF_KEYS_MAX) tenantsOfKeys.delete(tenantsOfKeys.keys().next().value as string);
  tenantsOfKeys.set(keyHash, { merchantId: tenant.merchantId, environment: tenant.environment });
}

/** The tenant a key authenticated as in this isolate before, if it did (no query). */
export function knownTenantOfKey(keyHash: string): Tenant | undefined {
  return tenantsOfKeys.get(keyHash);
}

/**
 * In one round trip: the credential is a live key (`401 INVALID_API_KEY` otherwise) and, when a
 * replay claim is given, its nonce is new for that merchant (`409 NONCE_REUSED` otherwise).
 */
export async function authenticate(
  sql: Queryable,
  credential: Credential,
  replay: ReplayClaim | null,
  now: Date,
): Promise<MerchantKeyPrincipal> {
  return (await authenticateGuarded(sql, credential, replay, now)).principal;
}

/**
 * `authenticate`, and with `breaker` the state of that circuit breaker for the merchant and
 * environment the key authenticated as, in the same round trip (docs/decisions.md, D-506).
 */
export async function authenticateGuarded(
  sql: Queryable,
  credential: Credential,
  replay: ReplayClaim | null,
  now: Date,
  breaker?: BreakerScope,
): Promise<{ principal: MerchantKeyPrincipal; breaker?: BreakerState }> {
  const key = await rpc(sql, "request_authenticate", {
    credential: credentialParam(credential),
    ...replayParam(replay, now),
    ...(breaker && { breaker }),
  });
  learnKeyTenant(credential.keyHash, { merchantId: key.merchant_id, environment: credential.environment });
  const principal: MerchantKeyPrincipal = {
    kind: "merchant_key",
    merchantId: key.merchant_id,
    environment: credential.environment,
    keyKind: credential.kind,
    keyId: key.key_id as string,
  };
  return { principal, ...(key.breaker && { breaker: key.breaker }) };
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerOf(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
}

/**
 * The first-party session JWT of an identity (EdDSA, `sub` = the identity, `mid` = the merchant it
 * was minted through, `env`), as secretKeyOrUserAuth accepts it.
 */
export function mintUserJwt(keys: KeySet, identityId: string, tenant: Tenant, now: Date, ttlSeconds: number) {
  return signUserJwt(keys, identityId, { mid: tenant.merchantId, env: tenant.environment }, now, ttlSeconds);
}

/**
 * The person behind a first-party session JWT (`sub` the identity, `mid` the merchant it was minted
 * through, `env`), or `401 INVALID_USER_TOKEN`.
 */
export async function userPrincipal(keys: KeySet, token: string, now: Date): Promise<UserPrincipal> {
  const claims = await verifyUserJwt(keys, token, now);
  const environment = claims?.env;
  if (!claims?.sub || typeof claims.mid !== "string" || (environment !== "test" && environment !== "live")) {
    throw new ApiError("INVALID_USER_TOKEN");
  }
  return { kind: "user", merchantId: claims.mid, environment, identityId: claims.sub, sessionTokenHash: await sha256Hex(token) };
}
