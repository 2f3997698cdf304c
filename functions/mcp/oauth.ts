/**
 * The OAuth 2.1 side of the MCP server (`@cloudflare/workers-oauth-provider`, grants and hashed
 * tokens in the `OAUTH_KV` namespace):
 * - the authorization server: issuer = the service's base URL, so its RFC 8414 metadata is at
 *   `/.well-known/oauth-authorization-server`; token, revocation and registration (RFC 7591) under
 *   `/functions/v1/mcp/oauth/`; the authorization endpoint is ours (authorize.ts);
 * - the protected resource `/functions/v1/mcp`, its RFC 9728 metadata at
 *   `/.well-known/oauth-protected-resource/functions/v1/mcp`; a request without a valid token for
 *   exactly this resource is `401` with `WWW-Authenticate: Bearer resource_metadata="…"`;
 * - what the provider may fetch when a client names a URL (its metadata document, `jwks_uri`).
 */
import { OAuthAuthorizationServer, type OAuthResourceContext, OAuthResourceServer } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import type { AppEnv } from "../../shared/edge/app";
import { type Bindings, type Config, serviceBaseUrl } from "../../shared/kernel/config";
import { type EgressPolicy, guardGlobalFetch } from "../../shared/kernel/egress";
import type { Environment } from "../../shared/kernel/principal";
import { agentScopes } from "./tools";

export const MCP_PATH = "/functions/v1/mcp";
const OAUTH_PATH = `${MCP_PATH}/oauth`;
/** Access tokens live an hour; refresh tokens (rotated on every use) 30 days. */
const ACCESS_TOKEN_TTL_SECONDS = 3600;

/** The bindings plus the KV namespace of the provider (scripts/local/server.ts binds it; wrangler.toml when deployed). */
export type OAuthEnv = Bindings & { OAUTH_KV: unknown };

/** What an approved grant carries to every call (encrypted under the token by the provider). */
export interface AgentGrant {
  identityId: string;
  merchantId: string;
  environment: Environment;
}

/** The service's base URL as this request sees it: the issuer, and the resource's prefix. */
export const baseOf = (c: Context<AppEnv>) => serviceBaseUrl(c.var.config, c.req.url);

const authorizationServers = new Map<string, OAuthAuthorizationServer<OAuthEnv>>();

/** The authorization server for the service at `base` (one per base URL and isolate). */
export function authorizationServer(base: string): OAuthAuthorizationServer<OAuthEnv> {
  let server = authorizationServers.get(base);
  if (!server) {
    server = new OAuthAuthorizationServer<OAuthEnv>({
      issuer: base,
      resources: [`${base}${MCP_PATH}`],
      authorizeEndpoint: `${base}${OAUTH_PATH}/authorize`,
      tokenEndpoint: `${base}${OAUTH_PATH}/token`,
      clientRegistrationEndpoint: `${base}${OAUTH_PATH}/register`,
      scopesSupported: [...agentScopes],
      accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
      // A client_id that is an https URL names its metadata document (the MCP authorization revision).
      clientIdMetadataDocumentEnabled: true,
    });
    authorizationServers.set(base, server);
  }
  return server;
}

/** The OAuth API of the authorization server (parse, consent, complete, look a client up). */
export type OAuthApi = ReturnType<OAuthAuthorizationServer<OAuthEnv>["getOAuthApi"]>;

/** The protected resource at `base`; `serve` answers a request whose token was accepted. */
export function resourceServer(base: string, serve: (request: Request, ctx: OAuthResourceContext<AgentGrant>) => Promise<Response>) {
  return new OAuthResourceServer<OAuthEnv, AgentGrant>({
    resourceMetadata: { resource: `${base}${MCP_PATH}`, authorization_servers: [base] },
    requiredScopes: ["mandates:read"],
    validateToken: (env) => (resource, token) => authorizationServer(base).validateToken(resource, token, env),
    handler: { fetch: (request, _env, ctx) => serve(request, ctx as OAuthResourceContext<AgentGrant>) },
  });
}

/** `401 invalid_token` pointing at the resource's metadata, as the provider answers a bad token. */
export function invalidToken(base: string, description: string): Response {
  const metadata = `${base}/.well-known/oauth-protected-resource${MCP_PATH}`;
  return Response.json(
    { error: "invalid_token", error_description: description },
    {
      status: 401,
      headers: {
        "www-authenticate": `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadata}"`,
      },
    },
  );
}

/** Workers KV refuses a key longer than this (UTF-8 bytes) with an error. */
const KV_KEY_MAX_BYTES = 512;
const boundedStores = new WeakMap<object, object>();

/**
 * The provider's KV namespace, where a key too long for KV names nothing: the provider builds
 * keys from a request's own client_id and tokens, and KV's error on a longer one came back as a
 * 500 (token endpoint), or an empty 503 (a bearer on the MCP endpoint). Reads of such a key find
 * nothing, so the provider answers as it does for any unknown client or token.
 */
function withinKeyLimit(kv: object): object {
  let bounded = boundedStores.get(kv);
  if (!bounded) {
    const tooLong = (key: unknown) => typeof key === "string" && new TextEncoder().encode(key).length > KV_KEY_MAX_BYTES;
    bounded = new Proxy(kv, {
      get(target, property) {
        const member = Reflect.get(target, property, target);
        if (typeof member !== "function") return member;
        if (property === "get")
          return (key: unknown, ...rest: unknown[]) => (tooLong(key) ? Promise.resolve(null) : member.call(target, key, ...rest));
        if (property === "getWithMetadata") {
          return (key: unknown, ...rest: unknown[]) =>
            tooLong(key) ? Promise.resolve({ value: null, metadata: null }) : member.call(target, key, ...rest);
        }
        return member.bind(target);
      },
    });
    boundedStores.set(kv, bounded);
  }
  return bounded;
}

/** The bindings as the provider takes them: its KV namespace bounded to keys KV accepts. */
export const oauthEnv = (c: Context<AppEnv>): OAuthEnv => ({
  ...(c.env as OAuthEnv),
  OAUTH_KV: withinKeyLimit((c.env as OAuthEnv).OAUTH_KV as object),
});

/**
 * The provider fetches what clients name (metadata documents, their `jwks_uri`): only from the
 * public Internet, besides the backends the deployment configured (shared/kernel/egress.ts).
 */
let egressPolicy: EgressPolicy = { configuredOrigins: new Set(), allowLoopback: false };
guardGlobalFetch(() => egressPolicy);

/** Sets the egress policy from this request's configuration, before anything may fetch. */
export function applyEgressPolicy(config: Config): void {
  const configured = [config.LOCAL_RATE_LIMIT_URL, config.UPSTASH_REDIS_REST_URL].filter((url) => url !== undefined);
  egressPolicy = {
    configuredOrigins: new Set(configured.map((url) => new URL(url).origin)),
    allowLoopback: config.OAUTH_CIMD_ALLOW_LOOPBACK === "1",
  };
}
