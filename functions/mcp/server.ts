/**
 * The MCP endpoint behind the protected resource (oauth.ts): the agent a token names, its rate
 * budget, and one SDK server (`createMcpHandler`) per request with every tool (tools.ts).
 */
import type { OAuthResourceContext } from "@cloudflare/workers-oauth-provider";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import type { Context } from "hono";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { type RateLimitRule, spendBudget, tenantBudget } from "../../shared/edge/rate-limit";
import { rpc } from "../../shared/kernel/db/rpc";
import { ApiError } from "../../shared/kernel/errors";
import { signingKeysOf } from "../../shared/kernel/keys";
import type { AgentPrincipal } from "../../shared/kernel/principal";
import { writtenNumbers } from "../../shared/lib/json";
import { type AgentGrant, authorizationServer, invalidToken, oauthEnv } from "./oauth";
import { type AgentTool, agentTools, type ToolContext, toolInput, toolJsonSchema } from "./tools";

/**
 * Each agent (OAuth client) acting for one merchant and environment: 300 MCP requests a minute,
 * whatever they call (docs/mcp.md, "Rate limit"); another agent of the merchant has its own.
 */
const AGENT_LIMIT: RateLimitRule = { name: "mcp-agent", limit: 300, windowSeconds: 60 };

/** Answers one MCP request whose token the resource server accepted, as the agent the grant names. */
export async function serveAgent(
  c: Context<AppEnv>,
  base: string,
  request: Request,
  ctx: OAuthResourceContext<AgentGrant>,
): Promise<Response> {
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
