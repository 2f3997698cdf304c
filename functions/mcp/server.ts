/**
 * The MCP endpoint behind the protected resource (oauth.ts): the agent a token names, its rate
 * budget, and one SDK server (`createMcpHandler`) per request with every tool (tools.ts).
 */
import type { OAuthResourceContext } from "@cloudflare/workers-oauth-provider";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import type { Context } from "hono";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { boundedBodyText } from "../../shared/edge/input";
import { type RateLimitRule, spendBudget, tenantBudget } from "../../shared/edge/rate-limit";
import { ApiError } from "../../shared/kernel/errors";
import { signingKeysOf } from "../../shared/kernel/keys";
import { writtenNumbers } from "../../shared/lib/json";
import { type AgentGrant, agentName, agentOfToken, invalidToken, resourceMetadataUrl } from "./oauth";
import { type AgentScope, type AgentTool, agentScopes, agentTools, type ToolContext, toolInput, toolJsonSchema } from "./tools";

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
  const agent = await agentOfToken(c, {
    props: ctx.props,
    clientId: ctx.auth.clientId,
    scope: ctx.auth.scope,
    expiresAt: ctx.auth.expiresAt,
  });
  if ("refused" in agent) return invalidToken(base, agent.refused);
  // The body limit of every function (shared/edge/input.ts), before anything reads it whole.
  const text = await boundedBodyText(request.clone());
  const messages = jsonRpcMessages(text);
  const needed = scopesNeeded(messages);
  if (!needed.every((scope) => agent.scopes.includes(scope))) return insufficientScope(base, needed);
  await spendBudget(c.var.config, AGENT_LIMIT, `agent:${agent.clientId}:${tenantBudget(agent)}`);
  const context: ToolContext = {
    deps: depsOf(c.var),
    agent,
    jwks: (await signingKeysOf(c.var.config)).jwks,
    serviceBaseUrl: base,
    agentName: () => agentName(c, agent.clientId),
  };
  const written = writtenArguments(text, messages);
  const handler = createMcpHandler(() => mcpServer(context, written));
  const response = await handler.fetch(request, {
    authInfo: { token: ctx.auth.token, clientId: agent.clientId, scopes: [...agent.scopes], expiresAt: ctx.auth.expiresAt },
  });
  // The body may still be in the making (a stream): read it whole while the request's database
  // client is open; the app closes it once this handler returns. (A `subscriptions/listen` ends once
  // acknowledged: the server honours no list-changed filter, see mcpServer.)
  return new Response(await response.arrayBuffer(), response);
}

/** The request's JSON-RPC messages (one, or a batch); none when the text is no JSON (the SDK answers that). */
function jsonRpcMessages(text: string): { envelope: unknown; messages: { method?: unknown; id?: unknown; params?: { name?: unknown } }[] } {
  try {
    const envelope: unknown = JSON.parse(text);
    const list = Array.isArray(envelope) ? envelope : [envelope];
    return { envelope, messages: list.map((message) => (typeof message === "object" && message !== null ? message : {})) };
  } catch {
    return { envelope: undefined, messages: [] };
  }
}

/**
 * The scopes a request needs, all of them (a client treats the challenge's list as complete):
 * `mandates:read` for anything at all, and each tool it calls its own on top.
 */
function scopesNeeded({ messages }: ReturnType<typeof jsonRpcMessages>): AgentScope[] {
  const needed = new Set<AgentScope>(["mandates:read"]);
  for (const message of messages) {
    if (message.method !== "tools/call") continue;
    const tool = agentTools.find((definition) => definition.name === message.params?.name);
    for (const scope of tool?.scopes ?? []) needed.add(scope);
  }
  return agentScopes.filter((scope) => needed.has(scope));
}

/**
 * A request outside the token's scopes: `403` with the MCP authorization spec's scope challenge
 * (RFC 6750 `insufficient_scope`, every scope the request needs, the resource metadata), so a
 * client can step up; the body is the service's `{error, code}` with the scopes named.
 */
function insufficientScope(base: string, scopes: readonly AgentScope[]): Response {
  const scope = scopes.join(" ");
  const error = new ApiError("INSUFFICIENT_SCOPE", { scope }, `The access token lacks a scope this request needs (it needs ${scope}).`);
  return Response.json(error.body(), {
    status: error.status,
    headers: {
      "cache-control": "no-store",
      "www-authenticate": `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${resourceMetadataUrl(base)}", error_description="${error.message}"`,
    },
  });
}

/** The number literals as written in each call's arguments, by JSON-RPC id. */
type WrittenArguments = (id: unknown) => ((path: readonly string[]) => string | undefined) | undefined;

/**
 * Where each `tools/call` of the request's JSON-RPC text (one message, or a batch) keeps its
 * arguments, so a tool judges money as written there (`1e3` is a float, as on the function).
 */
function writtenArguments(text: string, { envelope, messages }: ReturnType<typeof jsonRpcMessages>): WrittenArguments {
  const prefixes = new Map<unknown, string[]>();
  messages.forEach((message, index) => {
    if (message.method !== "tools/call" || message.id === undefined) return;
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
