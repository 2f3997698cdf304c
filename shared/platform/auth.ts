import type { MiddlewareHandler } from "hono";
import { sha256Hex, timingSafeEqual } from "../lib/crypto";
import { verifyUserJwt } from "../lib/signing";
import { type Environment, type KeyKind, parseApiKey } from "./api-keys";
import type { AppEnv } from "./app";
import { rpc } from "./db/client";
import { ApiError } from "./errors";

export const API_KEY_HEADER = "x-service-api-key";

/** A merchant calling through one of its keys, in one environment. */
export interface MerchantKeyPrincipal {
  kind: "merchant_key";
  merchantId: string;
  environment: Environment;
  keyKind: KeyKind;
  keyId: string;
}

/** A person calling from a first-party app with the session JWT minted at enrollment. */
export interface UserPrincipal {
  kind: "user";
  /** The merchant through which the session was minted; scopes the person's requests. */
  merchantId: string;
  environment: Environment;
  identityId: string;
  sessionTokenHash: string;
}

/** The service's own servers (SERVICE_ROLE_KEY): not scoped to a merchant. */
export interface ServicePrincipal {
  kind: "service";
}

/** Who is calling. Merchant and user principals are scoped to one merchant and one environment. */
export type Principal = MerchantKeyPrincipal | UserPrincipal;

/**
 * Which keys an endpoint accepts (spec section 5):
 * - `secret`: server endpoints; a publishable key is `401 AUTH_REQUIRED`.
 * - `publishable`: browser endpoints; publishable or secret keys.
 * - `anonymous`: a key is optional; without one the principal is null.
 */
export type KeyPolicy = "secret" | "publishable" | "anonymous";

interface KeyRow {
  key_id: string;
  merchant_id: string;
  key_hash: string;
}

/** The presented key: `x-service-api-key`, else the configured legacy header (the first one wins). */
export function presentedKey(headers: Headers, legacyHeader: string): string | null {
  return headers.get(API_KEY_HEADER) ?? headers.get(legacyHeader);
}

/**
 * Authenticates the merchant key and sets `principal`. Every later read and write is scoped by
 * the principal's merchant and environment.
 *
 * @example app.post("/", apiKeyAuth("secret"), handler)
 */
export function apiKeyAuth(policy: KeyPolicy): MiddlewareHandler<AppEnv> {
  return async function authenticateApiKey(c, next) {
    const key = presentedKey(c.req.raw.headers, c.var.config.LEGACY_API_KEY_HEADER);
    if (!key) {
      if (policy === "anonymous") return next();
      throw new ApiError("API_KEY_REQUIRED");
    }
    const parsed = parseApiKey(key);
    if (!parsed) throw new ApiError("INVALID_API_KEY");
    if (policy === "secret" && parsed.kind === "publishable") throw new ApiError("AUTH_REQUIRED");
    const hash = await sha256Hex(key);
    const row = await rpc<KeyRow | null>(c.var.db(), "api_key_authenticate", {
      key_hash: hash,
      kind: parsed.kind,
      environment: parsed.environment,
    });
    if (!row || !timingSafeEqual(row.key_hash, hash)) throw new ApiError("INVALID_API_KEY");
    c.set("principal", {
      kind: "merchant_key",
      merchantId: row.merchant_id,
      environment: parsed.environment,
      keyKind: parsed.kind,
      keyId: row.key_id,
    });
    return next();
  };
}

/**
 * Server endpoints that also accept a first-party user JWT (spec 5.3): `Authorization: Bearer
 * <session JWT>` when no API key is presented; otherwise the secret-key policy applies.
 * The JWT's `sub` is the identity, `mid` the merchant and `env` the environment it was minted for.
 *
 * @example app.post("/", secretKeyOrUserAuth(), handler)
 */
export function secretKeyOrUserAuth(): MiddlewareHandler<AppEnv> {
  const keyAuth = apiKeyAuth("secret");
  return async function authenticateKeyOrUser(c, next) {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (!bearer || presentedKey(c.req.raw.headers, c.var.config.LEGACY_API_KEY_HEADER)) return keyAuth(c, next);
    const claims = await verifyUserJwt(c.var.config, bearer, c.var.now);
    const environment = claims?.env;
    if (!claims?.sub || typeof claims.mid !== "string" || (environment !== "test" && environment !== "live")) {
      throw new ApiError("INVALID_USER_TOKEN");
    }
    c.set("principal", {
      kind: "user",
      merchantId: claims.mid,
      environment,
      identityId: claims.sub,
      sessionTokenHash: await sha256Hex(bearer),
    });
    return next();
  };
}

/**
 * Accepts the service role (`Authorization: Bearer <SERVICE_ROLE_KEY>`, compared in constant
 * time) before falling back to `fallback`. The service role sets `servicePrincipal`, not `principal`.
 *
 * @example app.post("/", serviceRoleOr(secretKeyOrUserAuth()), handler)
 */
export function serviceRoleOr(fallback: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async function authenticateServiceRole(c, next) {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const serviceKey = c.var.config.SERVICE_ROLE_KEY;
    if (bearer && serviceKey && bearer.startsWith("svc_") && timingSafeEqual(bearer, serviceKey)) {
      c.set("servicePrincipal", { kind: "service" });
      return next();
    }
    return fallback(c, next);
  };
}
