/**
 * Who is calling the resource API (resource API 5): `Authorization: Bearer <secret key>`, `sk_live_`
 * in production and `sk_test_` in sandbox; a publishable key is refused from its prefix alone. In
 * order: the key's form (no database), its token bucket, the version asked for, the key in the
 * database with the merchant's pinned version (one round trip), the workspace's token bucket.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../shared/edge/app";
import type { CredentialPresented, KeyAuthenticated } from "../../shared/edge/auth";
import { withDoc } from "../../shared/edge/openapi";
import { rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { parseApiKey } from "../../shared/kernel/api-keys";
import { bearerOf, credentialParam, learnKeyTenant } from "../../shared/kernel/authenticate";
import { rpc } from "../../shared/kernel/db/rpc";
import { ApiError } from "../../shared/kernel/errors";
import { sha256Hex } from "../../shared/lib/crypto";
import { type KeyScope, requireScope } from "../../shared/management/caller";
import { type LimitGroup, RATE_LIMIT_HEADER_PREFIX, ruleOf } from "./limits";
import { answerWithPinned, requestedVersion, supportedVersions } from "./version";

/** The scopes of the key that authenticated the request (docs/management.md, "Scopes"). */
export type KeyScoped = { Variables: { keyScopes: readonly string[] } };

type Env = AppEnv & CredentialPresented & KeyAuthenticated & KeyScoped;

/** The bearer key checked without the database; sets `credential`. */
const presentBearerKey: MiddlewareHandler<Env> = async function presentBearerKey(c, next) {
  const key = bearerOf(c.req.header("authorization"));
  if (!key) throw new ApiError("API_KEY_REQUIRED", {}, "Authorization: Bearer <secret key> is required.");
  const parsed = parseApiKey(key);
  if (!parsed) throw new ApiError("INVALID_API_KEY");
  if (parsed.kind === "publishable") throw new ApiError("AUTH_REQUIRED");
  c.set("credential", { keyHash: await sha256Hex(key), kind: parsed.kind, environment: parsed.environment });
  c.set("replay", null);
  return next();
};

/** The key in the database (`401 invalid_api_key` when unknown or revoked) and the version that answers. */
const authenticateKey: MiddlewareHandler<Env> = async function authenticateKey(c, next) {
  const requested = requestedVersion(c);
  const credential = c.var.credential;
  const key = await rpc(c.var.db(), "bearer_key_authenticate", {
    // any scope: this surface checks the route's scope itself (keyPolicy), to answer 403 insufficient_scope
    credential: { ...credentialParam(credential), any_scope: true },
    now: c.var.now.toISOString(),
  });
  learnKeyTenant(credential.keyHash, { merchantId: key.merchant_id, environment: credential.environment });
  c.set("principal", {
    kind: "merchant_key",
    merchantId: key.merchant_id,
    environment: credential.environment,
    keyKind: credential.kind,
    keyId: key.key_id,
  });
  c.set("keyScopes", key.scopes);
  answerWithPinned(c, requested, key.api_version);
  return next();
};

const announce = { headerPrefix: RATE_LIMIT_HEADER_PREFIX };

/**
 * The secret-key policy of every keyed route, counting the request against `group`'s bucket.
 *
 * @example mandates.get("/", secretKey("reads"), input("query", mandatePageSchema), handler)
 */
export function secretKey(group: LimitGroup): MiddlewareHandler<Env> {
  return keyPolicy(group, "api");
}

/**
 * The policy of a keyed route: a secret key, counted against `group`'s bucket, holding `scope`
 * (`403 insufficient_scope` otherwise). The acts of the resource API need `api`; the account's
 * management needs `management.read` or `management.write` (D-446).
 */
export function keyPolicy(group: LimitGroup, scope: KeyScope | readonly KeyScope[]): MiddlewareHandler<Env> {
  const anyOf = typeof scope === "string" ? [scope] : scope;
  const steps: MiddlewareHandler<Env>[] = [
    presentBearerKey,
    rateLimit<Env>((c) => ({ rule: ruleOf(group, c.var.credential.environment), identifier: `key:${c.var.credential.keyHash}` }), announce),
    authenticateKey,
    rateLimit<Env>(
      (c) => ({ rule: ruleOf("workspace", c.var.principal.environment), identifier: tenantBudget(c.var.principal) }),
      announce,
    ),
    async function holdsScope(c, next) {
      // any one of them: the reads a support key may see take api or management.read (D-454)
      if (!anyOf.some((one) => c.var.keyScopes.includes(one))) requireScope(c.var.keyScopes, anyOf[0]);
      return next();
    },
  ];
  return withDoc(
    async function authenticateSecretKey(c, next) {
      for (const step of steps) await step(c, async () => {});
      return next();
    } as MiddlewareHandler<Env>,
    {
      security: ["secretKey"],
      answers: ["API_KEY_REQUIRED", "INVALID_API_KEY", "AUTH_REQUIRED", "UNSUPPORTED_VERSION", "RATE_LIMITED", "INSUFFICIENT_SCOPE"],
      headers: [
        {
          name: "Service-Version",
          description: `A dated version (${supportedVersions.join(", ")}); without it the account's pinned version answers.`,
        },
      ],
    },
  );
}

/** The scopes a support read accepts: a key that acts, or a dashboard key that reads the account (D-454). */
export const supportReads = ["api", "management.read"] as const;
