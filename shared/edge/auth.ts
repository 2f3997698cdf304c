/**
 * Who is calling, as a Hono middleware per policy (shared/platform/authenticate.ts does the work).
 * A merchant key is checked in two halves: what needs no database at the edge, and whether it is a
 * live key of which merchant in the database. That second half is one RPC that also claims the
 * replay guard's nonce (`request_authenticate`), or, on mandate-check and mandate-consume, part
 * of the decision's own RPC, so a decision costs one round trip. Revoking a key takes effect on
 * the next request: nothing about a key is cached.
 */
import type { MiddlewareHandler } from "hono";
import {
  authenticate,
  authenticateGuarded,
  bearerOf,
  type Credential,
  type KeyPolicy,
  presentedCredential,
  presentedKey,
  replayParam,
  userPrincipal,
} from "../kernel/authenticate";
import type { Queryable } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import { ApiError } from "../kernel/errors";
import { signingKeysOf } from "../kernel/keys";
import type { MerchantKeyPrincipal, Principal, Tenant, UserPrincipal } from "../kernel/principal";
import { type ReplayClaim, replayClaim } from "../kernel/replay-guard";
import type { BreakerScope, BreakerState } from "../kernel/rpc";
import { timingSafeEqual } from "../lib/crypto";
import type { AppEnv } from "./app";
import { idempotencyKeyOf } from "./idempotency";
import { docOf, type RouteDoc, withDoc } from "./openapi";

interface AuthOptions {
  /**
   * Applies the replay guard of spec 4.1 (x-service-timestamp and x-service-nonce): `true` claims the
   * nonce in the same round trip; `"idempotent"` does too, except for a request carrying an
   * Idempotency-Key, whose nonce is left (as `unclaimedNonce`) to `idempotency()`, which must follow:
   * it claims the nonce only once the request is known to be no replay of a finished one (spec 4.4 rule 7).
   */
  replay?: boolean | "idempotent";
  /**
   * The function whose circuit breaker (circuitBreaker) the request meets next: its state for the
   * caller's merchant and environment comes back with the authentication's round trip, so the
   * breaker spends none of its own (D-506).
   */
  breaker?: string;
}

/** The breaker of AuthOptions.breaker in this deployment. */
function breakerScope(config: AppEnv["Variables"]["config"], breaker: string | undefined): BreakerScope | undefined {
  return breaker === undefined ? undefined : { deployment: config.DEPLOYMENT_ID, function_name: breaker };
}

/** Keeps a breaker's state that came with authentication for circuitBreaker to read. */
function keepBreaker(
  c: { set(key: "breakerState", value: AppEnv["Variables"]["breakerState"]): void },
  scope?: BreakerScope,
  state?: BreakerState,
) {
  if (scope && state) c.set("breakerState", { function_name: scope.function_name, ...state });
}

/** The replay claim this request leaves to the response store (see AuthOptions.replay), or null. */
function nonceForResponseStore(replay: AuthOptions["replay"], claim: ReplayClaim | null, headers: Headers): ReplayClaim | null {
  return replay === "idempotent" && idempotencyKeyOf(headers) !== undefined ? claim : null;
}

/** The replay claim of the request, or the error it earns; errors wait until the caller is authenticated. */
function replayOf(headers: Headers, now: Date): { claim: ReplayClaim | null; error: unknown } {
  try {
    return { claim: replayClaim(headers, now), error: null };
  } catch (error) {
    return { claim: null, error };
  }
}

/** The replay guard's headers and answers (spec 4.1), for the OpenAPI documents. */
const REPLAY_DOC = {
  answers: ["TIMESTAMP_REQUIRED", "TIMESTAMP_OUT_OF_WINDOW", "NONCE_REQUIRED", "NONCE_REUSED"],
  headers: [
    { name: "x-service-timestamp", description: "The request's time, epoch seconds, within 300 s of the server clock." },
    { name: "x-service-nonce", description: "A value used once per key (the replay guard)." },
  ],
} as const satisfies RouteDoc;

/** What a key policy declares to the OpenAPI documents: its credential and the codes it answers. */
function keyPolicyDoc(policy: KeyPolicy, replay: AuthOptions["replay"] = false): RouteDoc {
  const answers: RouteDoc["answers"] =
    policy === "anonymous"
      ? ["INVALID_API_KEY"]
      : ["API_KEY_REQUIRED", "INVALID_API_KEY", ...(policy === "secret" ? (["AUTH_REQUIRED"] as const) : [])];
  return {
    security: policy === "anonymous" ? undefined : [policy === "secret" ? "secretKey" : "publishableKey"],
    answers: replay ? [...answers, ...REPLAY_DOC.answers] : answers,
    headers: replay ? REPLAY_DOC.headers : undefined,
  };
}

/**
 * Authenticates the merchant key and sets `principal`; every later read and write is scoped by the
 * principal's merchant and environment. With `replay`, the nonce is claimed in the same call (or
 * left to `idempotency()`, see AuthOptions.replay).
 * Errors keep their order: the key's, then the replay headers', then the nonce's.
 *
 * @example app.post("/", apiKeyAuth("secret", { replay: true }), handler)
 */
export function apiKeyAuth(policy: "secret" | "publishable", options?: AuthOptions): MiddlewareHandler<AppEnv & KeyAuthenticated>;
export function apiKeyAuth(policy: "anonymous"): MiddlewareHandler<AppEnv>;
// biome-ignore lint/suspicious/noExplicitAny: the overloads above type each policy's principal
export function apiKeyAuth(policy: KeyPolicy, { replay = false, breaker }: AuthOptions = {}): MiddlewareHandler<any> {
  return withDoc(
    async function authenticateApiKey(c, next) {
      const credential = await presentedCredential(c.req.raw.headers, c.var.config.LEGACY_API_KEY_HEADER, policy);
      if (!credential) return next();
      const guard = replay ? replayOf(c.req.raw.headers, c.var.now) : { claim: null, error: null };
      const unclaimed = nonceForResponseStore(replay, guard.claim, c.req.raw.headers);
      const scope = breakerScope(c.var.config, breaker);
      const authenticated = await authenticateGuarded(c.var.db(), credential, unclaimed ? null : guard.claim, c.var.now, scope);
      c.set("principal", authenticated.principal);
      keepBreaker(c, scope, authenticated.breaker);
      if (guard.error) throw guard.error;
      c.set("unclaimedNonce", unclaimed);
      return next();
    },
    keyPolicyDoc(policy, replay),
  );
}

/**
 * For the endpoints whose domain operation authenticates inside its own RPC (mandate-check and
 * mandate-consume): checks what needs no database and sets `credential` and `replay`; the
 * operation then authenticates, claims the nonce and decides in one round trip. When the request
 * fails before that call (a replay header or the body is malformed), the key is authenticated
 * first, so a bad key is still answered as such before anything else.
 */
export function apiKeyAuthInOperation(policy: "secret"): MiddlewareHandler<AppEnv & CredentialPresented> {
  return withDoc(
    async function presentApiKey(c, next) {
      const credential = (await presentedCredential(c.req.raw.headers, c.var.config.LEGACY_API_KEY_HEADER, policy))!;
      const guard = replayOf(c.req.raw.headers, c.var.now);
      if (guard.error) {
        await authenticate(c.var.db(), credential, null, c.var.now);
        throw guard.error;
      }
      c.set("credential", credential);
      c.set("replay", guard.claim);
      await next();
      // Hono has already turned a later failure into its response (c.error); the key comes first.
      if (c.error instanceof ApiError && !AUTHENTICATION_CODES.has(c.error.code)) {
        await authenticate(c.var.db(), credential, guard.claim, c.var.now);
      }
    },
    keyPolicyDoc(policy, true),
  );
}

/** Errors that the authenticating call itself answers with; the others come after it. */
const AUTHENTICATION_CODES = new Set(["INVALID_API_KEY", "NONCE_REUSED", "DATABASE_UNAVAILABLE"]);

/**
 * Server endpoints that also accept a first-party user JWT (spec 5.3): `Authorization: Bearer
 * <session JWT>` when no API key is presented; otherwise the secret-key policy applies. The JWT's
 * `sub` is the identity, `mid` the merchant and `env` the environment it was minted for. With
 * `replay`, the nonce is claimed for that merchant in one round trip (or left to `idempotency()`,
 * see AuthOptions.replay).
 *
 * @example app.post("/", secretKeyOrUserAuth({ replay: "idempotent" }), idempotency("process-biovital-transaction"), handler)
 */
export function secretKeyOrUserAuth(options: AuthOptions = {}): MiddlewareHandler<AppEnv & Authenticated> {
  const keyAuth = apiKeyAuth("secret", options);
  const keyDoc = keyPolicyDoc("secret", options.replay);
  const doc: RouteDoc = { ...keyDoc, security: ["secretKey", "userToken"], answers: [...(keyDoc.answers ?? []), "INVALID_USER_TOKEN"] };
  return withDoc(async function authenticateKeyOrUser(c, next) {
    const bearer = bearerOf(c.req.header("authorization"));
    if (!bearer || presentedKey(c.req.raw.headers, c.var.config.LEGACY_API_KEY_HEADER)) return keyAuth(c as never, next);
    const principal = await userPrincipal(await signingKeysOf(c.var.config), bearer, c.var.now);
    if (options.replay) {
      const claim = replayClaim(c.req.raw.headers, c.var.now);
      const unclaimed = nonceForResponseStore(options.replay, claim, c.req.raw.headers);
      if (unclaimed) c.set("unclaimedNonce", unclaimed);
      else {
        const scope = breakerScope(c.var.config, options.breaker);
        keepBreaker(c, scope, await claimNonce(c.var.db(), principal, claim, c.var.now, scope));
      }
    }
    c.set("principal", principal);
    return next();
  }, doc);
}

/**
 * Functions only a person (or, through the MCP tools, an agent) calls (spec 5 rule 4): a first-party
 * session JWT in `Authorization: Bearer`. A merchant key, with or without a token, and no token at
 * all are `401 USER_TOKEN_REQUIRED`; an invalid or expired token is `401 INVALID_USER_TOKEN`.
 *
 * @example app.post("/", userTokenAuth(), handler)
 */
export function userTokenAuth(): MiddlewareHandler<AppEnv & UserAuthenticated> {
  return withDoc(
    async function authenticateUser(c, next) {
      const bearer = bearerOf(c.req.header("authorization"));
      if (!bearer || presentedKey(c.req.raw.headers, c.var.config.LEGACY_API_KEY_HEADER)) throw new ApiError("USER_TOKEN_REQUIRED");
      c.set("principal", await userPrincipal(await signingKeysOf(c.var.config), bearer, c.var.now));
      return next();
    },
    { security: ["userToken"], answers: ["USER_TOKEN_REQUIRED", "INVALID_USER_TOKEN"] },
  );
}

/** Claims the replay nonce for an already authenticated tenant (`409 NONCE_REUSED` when used). */
async function claimNonce(
  sql: Queryable,
  tenant: Tenant,
  replay: ReplayClaim,
  now: Date,
  breaker?: BreakerScope,
): Promise<BreakerState | undefined> {
  const claimed = await rpc(sql, "request_authenticate", {
    tenant: { merchant_id: tenant.merchantId, environment: tenant.environment },
    ...replayParam(replay, now),
    ...(breaker && { breaker }),
  });
  return claimed.breaker;
}

/**
 * Accepts the service role (`Authorization: Bearer <SERVICE_ROLE_KEY>`, compared in constant
 * time) before falling back to `fallback`. The service role sets `servicePrincipal`, not `principal`.
 *
 * @example app.post("/", serviceRoleOr(secretKeyOrUserAuth()), handler)
 */
export function serviceRoleOr(
  fallback: MiddlewareHandler<AppEnv & Authenticated> | MiddlewareHandler<AppEnv & KeyAuthenticated>,
): MiddlewareHandler<AppEnv> {
  const fallbackDoc = docOf(fallback) ?? {};
  return withDoc(
    async function authenticateServiceRole(c, next) {
      const bearer = bearerOf(c.req.header("authorization"));
      const serviceKey = c.var.config.SERVICE_ROLE_KEY;
      if (bearer && serviceKey && bearer.startsWith("svc_") && timingSafeEqual(bearer, serviceKey)) {
        c.set("servicePrincipal", { kind: "service" });
        return next();
      }
      return fallback(c as never, next);
    },
    { ...fallbackDoc, security: [...(fallbackDoc.security ?? []), "serviceRole"] },
  );
}

/** A route whose middleware authenticated a merchant key. */
export type KeyAuthenticated = { Variables: { principal: MerchantKeyPrincipal } };
/** A route whose middleware authenticated a merchant key or a first-party user. */
export type Authenticated = { Variables: { principal: Principal } };
/** A route whose middleware authenticated a person by their first-party session. */
export type UserAuthenticated = { Variables: { principal: UserPrincipal } };
/** A route whose operation authenticates the presented key itself (apiKeyAuthInOperation). */
export type CredentialPresented = { Variables: { credential: Credential; replay: ReplayClaim | null } };
