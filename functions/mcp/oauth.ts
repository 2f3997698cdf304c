/**
 * The OAuth 2.1 side of the MCP server (`@cloudflare/workers-oauth-provider`, grants and hashed
 * tokens in the `OAUTH_KV` namespace):
 * - the authorization server: issuer = the service's base URL, so its RFC 8414 metadata is at
 *   `/.well-known/oauth-authorization-server`; token, revocation and registration (RFC 7591) under
 *   `/functions/v1/mcp/oauth/`; the authorization endpoint is ours (authorize.ts);
 * - the protected resource `/functions/v1/mcp`, its RFC 9728 metadata at
 *   `/.well-known/oauth-protected-resource/functions/v1/mcp`; a request without a valid token for
 *   exactly this resource is `401` with `WWW-Authenticate: Bearer resource_metadata="…"` and an
 *   `{error, code}` body;
 * - refresh-token reuse: a refresh token presented a second time revokes its grant (OAuth 2.1 4.3.1);
 * - the agent a token names (agentOfToken), for the MCP endpoint and agent-verification-request.
 * What the provider may fetch when a client names a URL is egress.ts's.
 */
import { OAuthAuthorizationServer, type OAuthResourceContext, OAuthResourceServer } from "@cloudflare/workers-oauth-provider";
import type { Context, ExecutionContext } from "hono";
import type { AppEnv } from "../../shared/edge/app";
import { type Bindings, serviceBaseUrl } from "../../shared/kernel/config";
import { rpc } from "../../shared/kernel/db/rpc";
import type { AgentPrincipal, Environment } from "../../shared/kernel/principal";
import { sha256Hex } from "../../shared/lib/crypto";
import { agentScopes } from "./tools";

export const MCP_PATH = "/functions/v1/mcp";
const OAUTH_PATH = `${MCP_PATH}/oauth`;
/** Access tokens live an hour; refresh tokens (rotated on every use) 30 days. */
const ACCESS_TOKEN_TTL_SECONDS = 3600;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** The bindings plus the KV namespace of the provider (scripts/local/server.ts binds it; wrangler.toml when deployed). */
export type OAuthEnv = Bindings & { OAUTH_KV: unknown };

/** What an approved grant carries to every call (encrypted under the token by the provider). */
export interface AgentGrant {
  identityId: string;
  merchantId: string;
  environment: Environment;
}

/** What the OAuth side reads of a request's context (any function's: agent-verification-request's too). */
export type OAuthContext = Pick<Context<AppEnv>, "var" | "env" | "req">;

/** The service's base URL as this request sees it: the issuer, and the resource's prefix. */
export const baseOf = (c: OAuthContext) => serviceBaseUrl(c.var.config, c.req.url);

const authorizationServers = new Map<string, OAuthAuthorizationServer<OAuthEnv>>();

/** The authorization server for the service at `base` (one per base URL and isolate). */
export function authorizationServer(base: string): OAuthAuthorizationServer<OAuthEnv> {
  let server = authorizationServers.get(base);
  if (!server) {
    server = new OAuthAuthorizationServer<OAuthEnv>({
      issuer: base,
      resources: [mcpResource(base)],
      authorizeEndpoint: `${base}${OAUTH_PATH}/authorize`,
      tokenEndpoint: `${base}${OAUTH_PATH}/token`,
      clientRegistrationEndpoint: `${base}${OAUTH_PATH}/register`,
      scopesSupported: [...agentScopes],
      accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTTL: REFRESH_TOKEN_TTL_SECONDS,
      // A client_id that is an https URL names its metadata document (the MCP authorization revision).
      clientIdMetadataDocumentEnabled: true,
    });
    authorizationServers.set(base, server);
  }
  return server;
}

/** The OAuth API of the authorization server (parse, consent, complete, look a client up). */
export type OAuthApi = ReturnType<OAuthAuthorizationServer<OAuthEnv>["getOAuthApi"]>;

/** The protected resource's URL (the tokens' audience) at `base`. */
export const mcpResource = (base: string) => `${base}${MCP_PATH}`;
/** Where its RFC 9728 metadata is, which every challenge names. */
export const resourceMetadataUrl = (base: string) => `${base}/.well-known/oauth-protected-resource${MCP_PATH}`;

/**
 * The protected resource at `base`; `serve` answers a request whose token was accepted. Its
 * metadata and its `401` challenge name both scopes (`scope="mandates:read mandates:write"`), so a
 * standard client asks for both and the owner decides at consent; each request's own scopes are
 * checked by server.ts (`403 insufficient_scope`). The provider's `401` has no body: the answer
 * gets `{error, code}`, as every refusal of the service has.
 */
export function resourceServer(base: string, serve: (request: Request, ctx: OAuthResourceContext<AgentGrant>) => Promise<Response>) {
  const server = new OAuthResourceServer<OAuthEnv, AgentGrant>({
    resourceMetadata: { resource: mcpResource(base), authorization_servers: [base] },
    requiredScopes: [...agentScopes],
    validateToken: (env) => (resource, token) => authorizationServer(base).validateToken(resource, token, env),
    handler: { fetch: (request, _env, ctx) => serve(request, ctx as OAuthResourceContext<AgentGrant>) },
  });
  return {
    async fetch(request: Request, env: OAuthEnv, ctx: ExecutionContext): Promise<Response> {
      const response = await server.fetch(request, env, ctx);
      if (response.status !== 401 || response.body !== null) return response;
      const presented = request.headers.has("authorization");
      const body = presented
        ? { error: "The access token is unknown, expired or revoked, or not for this resource.", code: "invalid_token" }
        : {
            error: "This resource needs an OAuth 2.1 access token in Authorization: Bearer (see WWW-Authenticate).",
            code: "token_required",
          };
      const headers = new Headers(response.headers);
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify(body), { status: 401, headers });
    },
  };
}

/** `401 invalid_token` pointing at the resource's metadata, as the provider answers a bad token, with an `{error, code}` body. */
export function invalidToken(base: string, description: string): Response {
  const metadata = resourceMetadataUrl(base);
  return Response.json(
    { error: description, code: "invalid_token" },
    {
      status: 401,
      headers: {
        "cache-control": "no-store",
        "www-authenticate": `Bearer error="invalid_token", error_description="${description}", scope="${agentScopes.join(" ")}", resource_metadata="${metadata}"`,
      },
    },
  );
}

/** What a validated access token says (the resource server's context, or validateToken's answer). */
interface ValidatedToken {
  props: AgentGrant;
  clientId?: string;
  scope: readonly string[];
  expiresAt?: number;
}

/**
 * The agent a validated token names, or why it no longer acts: expired on the service's clock
 * (the provider checks the wall clock; `x-test-now` under TEST_CLOCK decides too), or its owner no
 * longer owns the business.
 */
export async function agentOfToken(c: OAuthContext, token: ValidatedToken): Promise<AgentPrincipal | { refused: string }> {
  if (token.expiresAt !== undefined && token.expiresAt * 1000 <= c.var.now.getTime()) return { refused: "The access token expired" };
  const grant = token.props;
  const { merchants } = await rpc(c.var.db(), "merchant_owned", { identity_id: grant.identityId, environment: grant.environment });
  if (!merchants.some((m) => m.merchant_id === grant.merchantId)) {
    return { refused: "The person who authorised this agent no longer owns the business" };
  }
  return {
    kind: "agent",
    merchantId: grant.merchantId,
    environment: grant.environment,
    clientId: token.clientId ?? "",
    ownerIdentityId: grant.identityId,
    scopes: token.scope,
  };
}

/**
 * An access token of the MCP resource presented elsewhere in the service (agent-verification-request,
 * spec 5 rule 4): the agent it names, or null when it is no valid token of that resource.
 */
export async function agentOfBearer(c: OAuthContext, bearer: string): Promise<AgentPrincipal | { refused: string } | null> {
  const base = baseOf(c);
  const validated = await authorizationServer(base)
    .validateToken(mcpResource(base), bearer, oauthEnv(c))
    .catch(() => null);
  if (!validated || (validated.expiresAt !== undefined && validated.expiresAt * 1000 <= Date.now())) return null;
  return agentOfToken(c, { ...validated, props: validated.props as AgentGrant });
}

/** The client name an agent registered with (or its metadata document names), or null. */
export async function agentName(c: OAuthContext, clientId: string): Promise<string | null> {
  return (await authorizationServer(baseOf(c)).getOAuthApi(oauthEnv(c)).lookupClient(clientId))?.clientName ?? null;
}

/** Where the token endpoint keeps the id (SHA-256) of each refresh token it has exchanged, until the token would have expired. */
const EXCHANGED_REFRESH_PREFIX = "refresh-exchanged:";

/**
 * The authorization server's endpoints (token, revocation, registration), with refresh-token reuse
 * detection around the provider's refresh grant (OAuth 2.1 4.3.1). The provider keeps the previous
 * refresh token usable until its successor is used, and exchanging it again invalidates the
 * successor while the grant lives on for whoever replayed it. Here each refresh token is exchanged
 * once: presenting one already exchanged (the grant's previous token, or one recorded here)
 * revokes the grant, its access and refresh tokens with it, and answers `invalid_grant`.
 */
export async function serveAuthorizationServer(base: string, request: Request, env: OAuthEnv, ctx: ExecutionContext): Promise<Response> {
  const server = authorizationServer(base);
  const refreshToken = request.method === "POST" ? await presentedRefreshToken(request) : null;
  if (!refreshToken) return server.fetch(request, env, ctx);
  const [userId, grantId] = refreshToken.split(":");
  const kv = env.OAUTH_KV as KvStore;
  const tokenId = await sha256Hex(refreshToken);
  const grant = (await kv.get(`grant:${userId}:${grantId}`, { type: "json" })) as { previousRefreshTokenId?: string } | null;
  const exchanged =
    grant !== null && (grant.previousRefreshTokenId === tokenId || (await kv.get(`${EXCHANGED_REFRESH_PREFIX}${tokenId}`)) !== null);
  if (exchanged) {
    await server.getOAuthApi(env).revokeGrant(grantId, userId);
    return Response.json(
      { error: "invalid_grant", error_description: "The refresh token was already used: the grant is revoked (refresh token reuse)" },
      { status: 400, headers: { "cache-control": "no-store", pragma: "no-cache" } },
    );
  }
  const response = await server.fetch(request, env, ctx);
  if (response.ok) await kv.put(`${EXCHANGED_REFRESH_PREFIX}${tokenId}`, "1", { expirationTtl: REFRESH_TOKEN_TTL_SECONDS });
  return response;
}

/** The refresh token of a token request of grant type refresh_token (`userId:grantId:secret`), else null. */
async function presentedRefreshToken(request: Request): Promise<string | null> {
  const url = new URL(request.url);
  if (url.pathname !== `${OAUTH_PATH}/token`) return null;
  const form = new URLSearchParams(
    await request
      .clone()
      .text()
      .catch(() => ""),
  );
  const token = form.get("refresh_token");
  if (form.get("grant_type") !== "refresh_token" || !token || token.split(":").length !== 3) return null;
  return token;
}

/** The part of the KV namespace the reuse check uses. */
interface KvStore {
  get(key: string, options?: { type: "json" }): Promise<unknown>;
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
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
export const oauthEnv = (c: OAuthContext): OAuthEnv => ({
  ...(c.env as OAuthEnv),
  OAUTH_KV: withinKeyLimit((c.env as OAuthEnv).OAUTH_KV as object),
});
