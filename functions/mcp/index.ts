/**
 * The MCP server (issue 13): AI agents call the mandate functions, receipt verification and (when
 * they exist) agent verification as tools, over Streamable HTTP, with an OAuth 2.1 bearer.
 *
 * - Authorization server (`@cloudflare/workers-oauth-provider`, grants and hashed tokens in the
 *   `OAUTH_KV` namespace): issuer = the service's base URL, so its RFC 8414 metadata is at
 *   `/.well-known/oauth-authorization-server`; token, revocation and registration (RFC 7591) under
 *   `/functions/v1/mcp/oauth/`; the authorization endpoint is ours: an owner signs in with a
 *   first-party session token and approves on a consent screen.
 * - Protected resource: `/functions/v1/mcp`, its RFC 9728 metadata at
 *   `/.well-known/oauth-protected-resource/functions/v1/mcp`; a request without a valid token for
 *   exactly this resource is `401` with `WWW-Authenticate: Bearer resource_metadata="…"`.
 * - Tools: shared/agents/tools.ts, served per request by the SDK's `createMcpHandler`.
 */
import {
  AuthorizationError,
  CimdFetchError,
  OAuthAuthorizationServer,
  type OAuthResourceContext,
  OAuthResourceServer,
} from "@cloudflare/workers-oauth-provider";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import type { Context, ExecutionContext } from "hono";
import { getCookie } from "hono/cookie";
import { finishPresenceSignIn, newBrowserSecret, type SignInBinding, startPresenceSignIn } from "../../shared/agents/sign-in";
import { type AgentTool, agentScopes, agentTools, type ToolContext, toolInput, toolJsonSchema } from "../../shared/agents/tools";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { type RateLimitRule, spendBudget, tenantBudget } from "../../shared/edge/rate-limit";
import { bearerOf, mintUserJwt, userPrincipal } from "../../shared/kernel/authenticate";
import { type Bindings, type Config, readConfig, serviceBaseUrl } from "../../shared/kernel/config";
import { rpc } from "../../shared/kernel/db/rpc";
import { type EgressPolicy, guardGlobalFetch } from "../../shared/kernel/egress";
import { ApiError } from "../../shared/kernel/errors";
import { signingKeysOf } from "../../shared/kernel/keys";
import type { AgentPrincipal, UserPrincipal } from "../../shared/kernel/principal";
import { writtenNumbers } from "../../shared/lib/json";
import { canonicalUuid } from "../../shared/lib/uuid";
import { merchantTheme } from "../../shared/themes/merchant-theme";
import { themeAssetsBaseUrl } from "../../shared/themes/theme";
import { consentPage, errorPage, presencePage, signInPage } from "./pages";

const MCP_PATH = "/functions/v1/mcp";
const OAUTH_PATH = `${MCP_PATH}/oauth`;
/**
 * Each agent (OAuth client) acting for one merchant and environment: 300 MCP requests a minute,
 * whatever they call (docs/mcp.md, "Rate limit"); another agent of the merchant has its own.
 */
const AGENT_LIMIT: RateLimitRule = { name: "mcp-agent", limit: 300, windowSeconds: 60 };
/** Access tokens live an hour; refresh tokens (rotated on every use) 30 days. */
const ACCESS_TOKEN_TTL_SECONDS = 3600;

/** The bindings plus the KV namespace of the provider (server.ts binds it; wrangler.toml when deployed). */
type OAuthEnv = Bindings & { OAUTH_KV: unknown };

/** What an approved grant carries to every call (encrypted under the token by the provider). */
interface AgentGrant {
  identityId: string;
  merchantId: string;
  environment: "test" | "live";
}

const authorizationServers = new Map<string, OAuthAuthorizationServer<OAuthEnv>>();

/** The authorization server for the service at `base` (one per base URL and isolate). */
function authorizationServer(base: string): OAuthAuthorizationServer<OAuthEnv> {
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

/** The protected resource at `base`; `serve` answers a request whose token was accepted. */
function resourceServer(base: string, serve: (request: Request, ctx: OAuthResourceContext<AgentGrant>) => Promise<Response>) {
  return new OAuthResourceServer<OAuthEnv, AgentGrant>({
    resourceMetadata: { resource: `${base}${MCP_PATH}`, authorization_servers: [base] },
    requiredScopes: ["mandates:read"],
    validateToken: (env) => (resource, token) => authorizationServer(base).validateToken(resource, token, env),
    handler: { fetch: (request, _env, ctx) => serve(request, ctx as OAuthResourceContext<AgentGrant>) },
  });
}

const app = createFunctionApp("mcp");

const baseOf = (c: Context<AppEnv>) => serviceBaseUrl(c.var.config, c.req.url);

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

const oauthEnv = (c: Context<AppEnv>): OAuthEnv => ({
  ...(c.env as OAuthEnv),
  OAUTH_KV: withinKeyLimit((c.env as OAuthEnv).OAUTH_KV as object),
});

// ---------------------------------------------------------------------------------------------
// The authorization endpoint: sign-in, consent, decision
// ---------------------------------------------------------------------------------------------

const NOT_A_FORM = "The request is not a form (application/x-www-form-urlencoded or multipart/form-data).";

app.on(["GET", "POST"], "/oauth/authorize", async (c) => {
  const oauth = authorizationServer(baseOf(c)).getOAuthApi(oauthEnv(c));
  const html = (p: { html: string; headers: Headers }, status = 200) => new Response(p.html, { status, headers: p.headers });
  try {
    // The sign-in and consent forms post back here; a body that is no form is a broken request, not a fault.
    const form = c.req.method === "POST" ? await c.req.formData().catch(() => null) : null;
    if (c.req.method === "POST" && !form) return html(errorPage(c.var.locale, NOT_A_FORM), 400);
    // The authorization request travels in the URL's query, also when the forms post back to it:
    // judged (client, redirect URI, resource, PKCE) before anyone is asked to sign in.
    const request = await oauth.parseAuthRequest(new Request(c.req.url));
    if (form?.get("sign_in") === "presence") return await startPresence(c, form);
    const presence = form?.get("presence_session");
    const signedIn = typeof presence === "string" ? await presenceSignIn(c, presence) : null;
    if (signedIn instanceof Response) return signedIn;
    const token = signedIn ?? (form ? String(form.get("session_token") ?? "") : bearerOf(c.req.header("authorization")));
    if (!token) return html(signInPage(c.var.locale));
    const owner = await userPrincipal(await signingKeysOf(c.var.config), token, c.var.now).catch(() => null);
    if (!owner) return html(signInPage(c.var.locale, "agent.signin.invalid"), 401);
    const { merchants } = await rpc(c.var.db(), "merchant_owned", { identity_id: owner.identityId, environment: owner.environment });
    if (merchants.length === 0) return html(signInPage(c.var.locale, "agent.signin.not_owner"), 403);

    const handle = form?.get("handle");
    if (typeof handle === "string") return await decide(c, oauth, form!, handle, owner, merchants);

    const details = await oauth.describeConsent(request);
    const consent = await oauth.beginConsent(request);
    const assetsBaseUrl = themeAssetsBaseUrl(c.var.config.THEME_ASSETS_BASE_URL, baseOf(c));
    const first = { merchantId: merchants[0].merchant_id, environment: owner.environment };
    const { theme } = await merchantTheme(depsOf(c.var), first, { merchant_id: first.merchantId, surface: "mandate" }, assetsBaseUrl);
    const page = consentPage(c.var.locale, {
      agentName: details.clientName,
      agentDomain: details.clientDomain ?? null,
      redirectHost: details.redirectHost,
      redirectOrigin: new URL(details.redirectUri).origin,
      redirectIsLoopback: details.redirectIsLoopback,
      merchants,
      scopes: request.scope.filter((scope) => (agentScopes as readonly string[]).includes(scope)),
      handle: consent.handle,
      sessionToken: token,
      theme: theme as Record<string, string | number | null>,
    });
    consent.headers.forEach((value, name) => {
      if (name.toLowerCase() === "set-cookie") page.headers.append(name, value);
    });
    return html(page);
  } catch (error) {
    if (error instanceof AuthorizationError && error.redirectTo) return c.redirect(error.redirectTo, 302);
    if (error instanceof AuthorizationError) return html(errorPage(c.var.locale, error.description ?? error.code), 400);
    if (error instanceof CimdFetchError) return html(errorPage(c.var.locale, error.message), 400);
    throw error;
  }
});

/** The browser's sign-in cookie: host-only, never sent cross-site, as long as a hosted session may last. */
const SIGN_IN_COOKIE = "__Host-agent-sign-in";
const SIGN_IN_COOKIE_MAX_AGE_SECONDS = 900;
/** A presence sign-in hands the consent step a first-party session of the owner, as long as the consent handle lasts. */
const PRESENCE_SESSION_TTL_SECONDS = 600;

/** What a sign-in by presence is bound to: this request (the URL's query, which every form posts back to) and this browser. */
function signInBinding(c: Context<AppEnv>, browserSecret: string): SignInBinding {
  return { request: new URL(c.req.url).search, browserSecret };
}

const pageResponse = (p: { html: string; headers: Headers }, status = 200) => new Response(p.html, { status, headers: p.headers });

/**
 * Sign-in by proving presence, first step: opens a hosted login session of the business named (its
 * owners only), bound to this request and to a fresh secret in this browser's cookie.
 */
async function startPresence(c: Context<AppEnv>, form: FormData): Promise<Response> {
  const merchantId = canonicalUuid(String(form.get("merchant_id") ?? "").trim());
  const environment = form.get("environment") === "test" ? "test" : "live";
  if (!merchantId) return pageResponse(signInPage(c.var.locale, "agent.signin.presence.no_owner"), 404);
  const browserSecret = newBrowserSecret();
  const deps = depsOf(c.var);
  const started = await startPresenceSignIn(deps, { merchantId, environment }, signInBinding(c, browserSecret), baseOf(c));
  if (!started) return pageResponse(signInPage(c.var.locale, "agent.signin.presence.no_owner"), 404);
  const page = presencePage(c.var.locale, { screenUrl: started.url, sessionId: started.sessionId });
  page.headers.append(
    "set-cookie",
    `${SIGN_IN_COOKIE}=${browserSecret}; Max-Age=${SIGN_IN_COOKIE_MAX_AGE_SECONDS}; Path=/; Secure; HttpOnly; SameSite=Strict`,
  );
  return pageResponse(page);
}

/**
 * Sign-in by proving presence, second step: the owner the hosted session identified, as a short
 * first-party session token (the consent form carries it, as it carries an app's), or the page to
 * show instead (not done yet, refused, used, another request or browser).
 */
async function presenceSignIn(c: Context<AppEnv>, sessionId: string): Promise<string | Response> {
  const browserSecret = getCookie(c, SIGN_IN_COOKIE) ?? "";
  const result = await finishPresenceSignIn(depsOf(c.var), sessionId, signInBinding(c, browserSecret));
  if (result.signed_in) {
    const tenant = { merchantId: result.merchant_id, environment: result.environment };
    return mintUserJwt(await signingKeysOf(c.var.config), result.identity_id, tenant, c.var.now, PRESENCE_SESSION_TTL_SECONDS);
  }
  if (result.reason === "pending") {
    return pageResponse(presencePage(c.var.locale, { screenUrl: null, sessionId }, "agent.signin.presence.pending"), 409);
  }
  if (result.reason === "not_owner") return pageResponse(signInPage(c.var.locale, "agent.signin.not_owner"), 403);
  return pageResponse(signInPage(c.var.locale, "agent.signin.presence.failed"), 401);
}

/** Approve or deny: the grant names the owner and the business chosen, and only scopes the owner ticked. */
async function decide(
  c: Context<AppEnv>,
  oauth: ReturnType<OAuthAuthorizationServer<OAuthEnv>["getOAuthApi"]>,
  form: FormData,
  handle: string,
  owner: UserPrincipal,
  merchants: { merchant_id: string }[],
): Promise<Response> {
  if (form.get("decision") !== "approve") {
    const denied = await oauth.denyConsent(c.req.raw, handle);
    return new Response(null, { status: 302, headers: denied.headers });
  }
  const merchantId = String(form.get("merchant_id") ?? "");
  if (!merchants.some((m) => m.merchant_id === merchantId)) throw new ApiError("INVALID_INPUT", { fields: ["merchant_id"] });
  const approved = await oauth.approveConsent(c.req.raw, handle, { scope: form.getAll("scope").map(String) });
  const grant: AgentGrant = { identityId: owner.identityId, merchantId, environment: owner.environment };
  const { redirectTo } = await oauth.completeAuthorization({
    request: approved.request,
    userId: owner.identityId,
    metadata: { merchant_id: merchantId, environment: owner.environment },
    scope: approved.request.scope,
    props: grant,
  });
  approved.headers.set("location", redirectTo);
  return new Response(null, { status: 302, headers: approved.headers });
}

// Token (with refresh and revocation) and registration belong to the provider.
app.all("/oauth/*", (c) => authorizationServer(baseOf(c)).fetch(c.req.raw, oauthEnv(c), c.executionCtx));

// ---------------------------------------------------------------------------------------------
// The MCP endpoint
// ---------------------------------------------------------------------------------------------

app.all("/", (c) => {
  const base = baseOf(c);
  return resourceServer(base, (request, ctx) => serveAgent(c, base, request, ctx)).fetch(c.req.raw, oauthEnv(c), c.executionCtx);
});

/** `401 invalid_token` pointing at the resource's metadata, as the provider answers a bad token. */
function invalidToken(base: string, description: string): Response {
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

async function serveAgent(c: Context<AppEnv>, base: string, request: Request, ctx: OAuthResourceContext<AgentGrant>): Promise<Response> {
  const grant = ctx.props;
  // The provider checks expiry on the wall clock; the service's own clock (x-test-now under TEST_CLOCK) decides too.
  if (ctx.auth.expiresAt !== undefined && ctx.auth.expiresAt * 1000 <= c.var.now.getTime()) {
    return invalidToken(base, "The access token expired");
  }
  const { merchants } = await rpc(c.var.db(), "merchant_owned", { identity_id: grant.identityId, environment: grant.environment });
  if (!merchants.some((m) => m.merchant_id === grant.merchantId)) {
    return invalidToken(base, "The person who authorised this agent no longer owns the business");
  }
  const agent: AgentPrincipal = {
    kind: "agent",
    merchantId: grant.merchantId,
    environment: grant.environment,
    clientId: ctx.auth.clientId ?? "",
    ownerIdentityId: grant.identityId,
    scopes: ctx.auth.scope,
  };
  await spendBudget(c.var.config, AGENT_LIMIT, `agent:${agent.clientId}:${tenantBudget(agent)}`);
  const context: ToolContext = {
    deps: depsOf(c.var),
    agent,
    jwks: (await signingKeysOf(c.var.config)).jwks,
    serviceBaseUrl: base,
    agentName: async () => (await authorizationServer(base).getOAuthApi(oauthEnv(c)).lookupClient(agent.clientId))?.clientName ?? null,
  };
  const written = writtenArguments(await request.clone().text());
  const handler = createMcpHandler(() => mcpServer(context, written));
  const response = await handler.fetch(request, {
    authInfo: { token: ctx.auth.token, clientId: agent.clientId, scopes: [...agent.scopes], expiresAt: ctx.auth.expiresAt },
  });
  // The body may still be in the making (a stream): read it whole while the request's database
  // client is open; the app closes it once this handler returns. (A `subscriptions/listen` ends once
  // acknowledged: the server honours no list-changed filter, see mcpServer.)
  return new Response(await response.arrayBuffer(), response);
}

/** The number literals as written in each call's arguments, by JSON-RPC id. */
type WrittenArguments = (id: unknown) => ((path: readonly string[]) => string | undefined) | undefined;

/**
 * Where each `tools/call` of the request's JSON-RPC text (one message, or a batch) keeps its
 * arguments, so a tool judges money as written there (`1e3` is a float, as on the function).
 */
function writtenArguments(text: string): WrittenArguments {
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    return () => undefined;
  }
  const messages = Array.isArray(envelope) ? envelope : [envelope];
  const prefixes = new Map<unknown, string[]>();
  messages.forEach((message, index) => {
    if (message?.method !== "tools/call" || message.id === undefined) return;
    prefixes.set(message.id, [...(Array.isArray(envelope) ? [String(index)] : []), "params", "arguments"]);
  });
  return (id) => {
    const prefix = prefixes.get(id);
    return prefix ? writtenNumbers(text, prefix) : undefined;
  };
}

/** One McpServer per request with every tool, bound to the calling agent. */
function mcpServer(context: ToolContext, written: WrittenArguments): McpServer {
  // The tool list is fixed: no list_changed to announce, so a subscriptions/listen is acknowledged
  // with nothing honoured and ends, where a stream kept open (listChanged: true) never let the
  // handler, which reads every answer whole, return.
  const server = new McpServer(
    { name: "human-authorisation-service", version: "1.0.0-beta" },
    { capabilities: { tools: { listChanged: false } } },
  );
  for (const definition of agentTools) {
    server.registerTool(definition.name, { description: definition.description, inputSchema: argumentsSchema(definition) }, (args, ctx) =>
      callTool(context, definition, args, written(ctx.mcpReq.id)),
    );
  }
  return server;
}

/** A tool's answer: the function's 200 body, or its `{error, code}` body flagged as an error. */
async function callTool(
  context: ToolContext,
  definition: AgentTool,
  args: unknown,
  writtenAt: ((path: readonly string[]) => string | undefined) | undefined,
) {
  try {
    if (!context.agent.scopes.includes(definition.scope)) throw new ApiError("INSUFFICIENT_SCOPE", { scope: definition.scope });
    const result = (await definition.run(context, toolInput(definition, args, writtenAt))) as Record<string, unknown>;
    return { content: [{ type: "text" as const, text: JSON.stringify(result) }], structuredContent: result };
  } catch (error) {
    const failure = error instanceof ApiError ? error : internalError(definition, error);
    const body = { ...failure.body(), status: failure.status };
    return { isError: true, content: [{ type: "text" as const, text: JSON.stringify(body) }], structuredContent: body };
  }
}

function internalError(definition: AgentTool, error: unknown): ApiError {
  console.error(JSON.stringify({ function: "mcp", tool: definition.name, error: String((error as Error)?.stack ?? error) }));
  return new ApiError("INTERNAL_ERROR");
}

/**
 * The tool's input schema as the SDK takes it (Standard Schema with its JSON Schema): validation
 * passes everything through, so the function's own schema judges the arguments, with its codes.
 */
function argumentsSchema(definition: AgentTool) {
  const jsonSchema = toolJsonSchema(definition);
  return {
    "~standard": {
      version: 1 as const,
      vendor: "valibot",
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => jsonSchema, output: () => jsonSchema },
    },
  };
}

/**
 * The provider fetches what clients name (metadata documents, their `jwks_uri`): only from the
 * public Internet, besides the backends the deployment configured (shared/kernel/egress.ts).
 */
let egressPolicy: EgressPolicy = { configuredOrigins: new Set(), allowLoopback: false };
guardGlobalFetch(() => egressPolicy);

function egressPolicyOf(config: Config): EgressPolicy {
  const configured = [config.LOCAL_RATE_LIMIT_URL, config.UPSTASH_REDIS_REST_URL].filter((url) => url !== undefined);
  return {
    configuredOrigins: new Set(configured.map((url) => new URL(url).origin)),
    allowLoopback: config.OAUTH_CIMD_ALLOW_LOOPBACK === "1",
  };
}

export default {
  /** The `/.well-known/` documents live at the origin's root (RFC 8414, RFC 9728); the rest is the app. */
  fetch(request: Request, env: OAuthEnv, ctx: ExecutionContext) {
    egressPolicy = egressPolicyOf(readConfig(env));
    const { pathname } = new URL(request.url);
    if (pathname.startsWith("/.well-known/")) {
      const base = serviceBaseUrl(readConfig(env), request.url);
      if (pathname.startsWith("/.well-known/oauth-protected-resource")) {
        return resourceServer(base, async () => new Response(null, { status: 404 })).fetch(request, env, ctx);
      }
      return authorizationServer(base).fetch(request, env, ctx);
    }
    return app.fetch(request, env, ctx);
  },
};
