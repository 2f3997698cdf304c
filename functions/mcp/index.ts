/**
 * The MCP server (issue 13, docs/mcp.md): AI agents call the mandate functions, receipt
 * verification and agent verification as tools, over Streamable HTTP, with an OAuth 2.1 bearer.
 * This file routes; each concern has its file:
 * - oauth.ts: the authorization server and the protected resource (the provider); egress.ts what it may fetch;
 * - authorize.ts, pages.ts: the authorization endpoint (an owner's sign-in and consent);
 * - server.ts, tools.ts: the MCP endpoint and its tools.
 */
import type { ExecutionContext } from "hono";
import { createFunctionApp } from "../../shared/edge/app";
import { noStore } from "../../shared/edge/no-store";
import { readConfig, serviceBaseUrl } from "../../shared/kernel/config";
import { authorize } from "./authorize";
import { applyEgressPolicy } from "./egress";
import { baseOf, type OAuthEnv, oauthEnv, resourceServer, serveAuthorizationServer } from "./oauth";
import { serveAgent } from "./server";

const app = createFunctionApp("mcp");

// Its pages carry a session token and a consent handle, and its redirects an authorization code: never cached.
app.on(["GET", "POST"], "/oauth/authorize", noStore, authorize);

// Token (with refresh and revocation) and registration belong to the provider.
app.all("/oauth/*", (c) => serveAuthorizationServer(baseOf(c), c.req.raw, oauthEnv(c), c.executionCtx));

app.all("/", (c) => {
  const base = baseOf(c);
  return resourceServer(base, (request, ctx) => serveAgent(c, base, request, ctx)).fetch(c.req.raw, oauthEnv(c), c.executionCtx);
});

export default {
  /** The `/.well-known/` documents live at the origin's root (RFC 8414, RFC 9728); the rest is the app. */
  fetch(request: Request, env: OAuthEnv, ctx: ExecutionContext) {
    applyEgressPolicy(readConfig(env));
    const { pathname } = new URL(request.url);
    if (pathname.startsWith("/.well-known/")) {
      const base = serviceBaseUrl(readConfig(env), request.url);
      if (pathname.startsWith("/.well-known/oauth-protected-resource")) {
        return resourceServer(base, async () => new Response(null, { status: 404 })).fetch(request, env, ctx);
      }
      return serveAuthorizationServer(base, request, env, ctx);
    }
    return app.fetch(request, env, ctx);
  },
};
