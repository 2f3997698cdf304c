/**
 * POST /functions/v1/agent-verification-request (spec 4.14, 5 rule 4): an owner of the merchant,
 * with their first-party session, or an agent an owner authorised, with its OAuth 2.1 bearer, mints
 * a verification card; its `url` opens the hosted capture screen once
 * (shared/agents/verifications.ts). A merchant key is `401 USER_TOKEN_REQUIRED`. The agent is held
 * to the rules of the MCP tool of the same name: its token must be live, its owner must still own
 * the business, it must carry the tool's scopes, and it mints for its own merchant only.
 */
import type { MiddlewareHandler } from "hono";
import { type CardRequester, cardAnswerSchema, requestSchema, requestVerification } from "../../shared/agents/verifications";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { userTokenAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented, withDoc } from "../../shared/edge/openapi";
import { type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { bearerOf, presentedKey } from "../../shared/kernel/authenticate";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { ApiError } from "../../shared/kernel/errors";
import { agentTools } from "../mcp/tools";

/**
 * The MCP server's OAuth side (the provider), loaded only when an agent's token is presented: the
 * provider imports `cloudflare:workers`, which the build's OpenAPI step, importing this module
 * in Node, cannot load.
 */
const mcpOAuth = () => import("../mcp/oauth");

/** Each card is a hosted session and a screen someone may open: per merchant and environment (docs/decisions.md, D-267). */
const CARD_LIMIT: RateLimitRule = { name: "agent-verification-request", limit: 60, windowSeconds: 60 };

/** The scopes the MCP tool needs, which the agent's bearer needs here too. */
const TOOL_SCOPES = agentTools.find((tool) => tool.name === "agent-verification-request")!.scopes;

/** Who asks: the owner (also set as `principal`, as userTokenAuth does) or the agent. */
type RequesterAuthenticated = { Variables: { requester: CardRequester } };

/**
 * An owner's first-party session JWT (userTokenAuth), or an agent's OAuth access token of the MCP
 * resource (`userId:grantId:secret`: a JWT never holds a colon). An agent's token that is unknown,
 * expired or revoked, or whose owner no longer owns the business, is `401 INVALID_USER_TOKEN`
 * (with the reason); one without the tool's scopes `403 INSUFFICIENT_SCOPE` naming them.
 */
function ownerOrAgentAuth(): MiddlewareHandler<AppEnv & RequesterAuthenticated> {
  const ownerAuth = userTokenAuth();
  return withDoc(
    async function authenticateOwnerOrAgent(c, next) {
      const bearer = bearerOf(c.req.header("authorization"));
      const isOAuthToken = bearer?.includes(":") && !presentedKey(c.req.raw.headers, c.var.config.LEGACY_API_KEY_HEADER);
      if (!bearer || !isOAuthToken) {
        return ownerAuth(c as never, async () => {
          c.set("requester", c.var.principal as CardRequester);
          await next();
        });
      }
      const agent = await (await mcpOAuth()).agentOfBearer(c, bearer);
      if (agent === null)
        throw new ApiError("INVALID_USER_TOKEN", {}, "The bearer is neither a valid session JWT nor a live OAuth access token.");
      if ("refused" in agent) throw new ApiError("INVALID_USER_TOKEN", {}, `${agent.refused}.`);
      if (!TOOL_SCOPES.every((scope) => agent.scopes.includes(scope))) {
        throw new ApiError("INSUFFICIENT_SCOPE", { scope: TOOL_SCOPES.join(" ") });
      }
      c.set("requester", agent);
      return next();
    },
    { security: ["userToken"], answers: ["USER_TOKEN_REQUIRED", "INVALID_USER_TOKEN", "INSUFFICIENT_SCOPE"] },
  );
}

const app = createFunctionApp("agent-verification-request");

app.post(
  "/",
  documented({
    summary: "Mint a verification card",
    description:
      "Authorization: Bearer with an owner's first-party session JWT, or an MCP client's OAuth 2.1 access token (the MCP tool's rules: scope mandates:read, its own merchant).",
    success: { status: 200, description: "The card", schema: cardAnswerSchema },
    answers: ["NOT_MERCHANT_OWNER", "ACCESS_REVOKED"],
  }),
  noStore,
  ownerOrAgentAuth(),
  rateLimit<AppEnv & RequesterAuthenticated>((c) => ({ rule: CARD_LIMIT, identifier: tenantBudget(c.var.requester) })),
  input("json", requestSchema),
  async (c) => {
    const requester = c.var.requester;
    const base = serviceBaseUrl(c.var.config, c.req.url);
    const agentName = requester.kind === "agent" ? await (await mcpOAuth()).agentName(c, requester.clientId) : null;
    return c.json(await requestVerification(depsOf(c.var), requester, c.var.input, { serviceBaseUrl: base, agentName }));
  },
);

export default app;
