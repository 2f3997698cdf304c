/**
 * The MCP server's authorization as standard clients meet it (issue 25, items 2, 3 and 9): the
 * scopes it advertises, the scope challenge (`403 insufficient_scope`) of a request outside the
 * token's scopes, refresh-token reuse, the `{error, code}` body of every `401`, one body limit,
 * the consent's title, and the consume tool's schema.
 */
import { auth } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { authorisedAgent, base, consent, MemoryProvider, mcpUrl, ownedMerchant } from "../harness/agents";
import { testDb } from "../harness/factories";

const METADATA_URL = () => `${base()}/.well-known/oauth-protected-resource/functions/v1/mcp`;

/** One JSON-RPC request with `token`, as raw HTTP. */
const rpcCall = (token: string | null, message: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(mcpUrl(), {
    method: "POST",
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...message }),
  });

/** A JSON-RPC answer's message, whether sent as JSON or as one SSE event. */
async function rpcAnswer(res: Response) {
  const text = await res.text();
  const data = res.headers.get("content-type")?.startsWith("text/event-stream") ? /^data: (.*)$/m.exec(text)![1] : text;
  return JSON.parse(data);
}

const toolCall = (token: string, name: string, args: Record<string, unknown>) =>
  rpcCall(token, { method: "tools/call", params: { name, arguments: args } });

/** The token endpoint with `params` (a form), as a client posts it. */
async function tokenRequest(params: Record<string, string>) {
  const res = await fetch(`${mcpUrl()}/oauth/token`, { method: "POST", body: new URLSearchParams(params) });
  return { status: res.status, body: await res.json() };
}

const refresh = (provider: MemoryProvider, refreshToken: string, extra: Record<string, string> = {}) =>
  tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: provider.client.client_id, ...extra });

describe("mcp authorization: scopes", () => {
  it("advertises both scopes in the resource metadata and the 401 challenge (it named only mandates:read, so clients never asked to write)", async () => {
    const metadata = await (await fetch(METADATA_URL())).json();
    expect(metadata.scopes_supported).toEqual(["mandates:read", "mandates:write"]);
    const res = await rpcCall(null, { method: "ping" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('scope="mandates:read mandates:write"');
  });

  it("answers a write tool with a read-only token 403 insufficient_scope naming both scopes (it was a tool result inside 200); read tools run", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token, new MemoryProvider(), mcpUrl(), ["mandates:read"]);
    expect(provider.saved.scope).toBe("mandates:read");
    const write = await toolCall(provider.saved.access_token, "mandate-revoke", { mandate_id: "m_unknown" });
    expect(write.status).toBe(403);
    const challenge = write.headers.get("www-authenticate")!;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="mandates:read mandates:write"');
    expect(challenge).toContain(`resource_metadata="${METADATA_URL()}"`);
    expect(await write.json()).toMatchObject({
      code: "INSUFFICIENT_SCOPE",
      scope: "mandates:read mandates:write",
      error: expect.any(String),
    });
    const read = await toolCall(provider.saved.access_token, "mandate-scopes", {});
    expect(read.status).toBe(200);
    expect((await rpcAnswer(read)).result.isError).toBeFalsy();
  }, 120_000);

  it("refuses a token without mandates:read everything, initialize and tools/list too: 403 naming what each request needs (write alone could revoke)", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const writeOnly = await refresh(provider, provider.saved.refresh_token, { scope: "mandates:write" });
    expect(writeOnly.status, JSON.stringify(writeOnly.body)).toBe(200);
    expect(writeOnly.body.scope).toBe("mandates:write");
    const token = writeOnly.body.access_token;
    const initialize = await rpcCall(token, {
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    expect(initialize.status).toBe(403);
    expect(initialize.headers.get("www-authenticate")).toContain('scope="mandates:read"');
    const list = await rpcCall(token, { method: "tools/list" });
    expect(list.status).toBe(403);
    const revoke = await toolCall(token, "mandate-revoke", { mandate_id: "m_unknown" });
    expect(revoke.status).toBe(403);
    expect(revoke.headers.get("www-authenticate")).toContain('scope="mandates:read mandates:write"');
  }, 120_000);

  it('takes a consent with nothing ticked, or writing alone, as a deny (it issued a token with scope "")', async () => {
    const { owner } = await ownedMerchant();
    for (const scopes of [[], ["mandates:write"]]) {
      const provider = new MemoryProvider();
      expect(await auth(provider, { serverUrl: mcpUrl(), scope: "mandates:read mandates:write" })).toBe("REDIRECT");
      const { location } = await consent(provider.authorizationUrl!, owner.session_token, "approve", scopes);
      expect({ scopes, error: location.searchParams.get("error"), code: location.searchParams.get("code") }).toEqual({
        scopes,
        error: "access_denied",
        code: null,
      });
    }
  }, 120_000);
});

describe("mcp authorization: a request that names no scope", () => {
  it("is offered every scope the server advertises at consent (OAuth lets scope be left out; the conformance suite leaves it out)", async () => {
    const { owner } = await ownedMerchant();
    const provider = new MemoryProvider();
    expect(await auth(provider, { serverUrl: mcpUrl() })).toBe("REDIRECT");
    const url = new URL(provider.authorizationUrl!);
    url.searchParams.delete("scope");
    const { html, location } = await consent(url, owner.session_token);
    expect(html).toContain('value="mandates:read"');
    expect(html).toContain('value="mandates:write"');
    expect(location.searchParams.get("code")).toBeTruthy();
  }, 120_000);
});

describe("mcp authorization: refresh tokens", () => {
  it("revokes the grant when a refresh token is used a second time (the replay was honoured and the real client's token died)", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const first = provider.saved.refresh_token;
    const rotated = await refresh(provider, first);
    expect(rotated.status).toBe(200);
    const replay = await refresh(provider, first);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    // The grant is gone: the successor refresh token and every access token with it.
    const successor = await refresh(provider, rotated.body.refresh_token);
    expect(successor.status).toBe(400);
    expect((await rpcCall(rotated.body.access_token, { method: "ping" })).status).toBe(401);
    expect((await rpcCall(provider.saved.access_token, { method: "ping" })).status).toBe(401);
  }, 120_000);

  it("revokes it too for a refresh token two rotations old, and keeps a grant whose tokens are each used once", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const first = provider.saved.refresh_token;
    const second = await refresh(provider, first);
    const third = await refresh(provider, second.body.refresh_token);
    expect([second.status, third.status]).toEqual([200, 200]);
    expect((await rpcCall(third.body.access_token, { method: "ping" })).status).toBe(200);
    expect((await refresh(provider, first)).status).toBe(400);
    expect((await refresh(provider, third.body.refresh_token)).status).toBe(400);
    expect((await rpcCall(third.body.access_token, { method: "ping" })).status).toBe(401);
  }, 120_000);
});

describe("mcp authorization: answers", () => {
  it("gives every 401 an {error, code} body beside its challenge (the body was empty)", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const later = new Date(Date.now() + 2 * 3600_000).toISOString();
    for (const [what, token, headers, code] of [
      ["no token", null, {}, "token_required"],
      ["an unknown token", "u:g:secret", {}, "invalid_token"],
      ["a session JWT", owner.session_token, {}, "invalid_token"],
      ["an expired token (the service's clock)", provider.saved.access_token, { "x-test-now": later }, "invalid_token"],
    ] as const) {
      const res = await rpcCall(token, { method: "ping" }, headers);
      expect({ what, status: res.status }).toEqual({ what, status: 401 });
      expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${METADATA_URL()}"`);
      expect({ what, body: await res.json() }).toEqual({ what, body: { error: expect.any(String), code } });
    }
  }, 120_000);

  it("stops a body over 256 KiB with 413 PAYLOAD_TOO_LARGE, as every function does (the endpoint took 4 MiB)", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const res = await rpcCall(provider.saved.access_token, { method: "ping", params: { _meta: { pad: "x".repeat(300 * 1024) } } });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    const small = await rpcCall(provider.saved.access_token, { method: "ping", params: { _meta: { pad: "x".repeat(1024) } } });
    expect(small.status).toBe(200);
  }, 120_000);

  it("names the business by its name on the consent screen when it published no theme (it named the service's default brand)", async () => {
    const { merchant, owner } = await ownedMerchant();
    const [{ name }] = await testDb()`select name from private.merchants where id = ${merchant.merchant_id}::uuid`;
    const { html } = await authorisedAgent(owner.session_token);
    const title = /<h1>([^<]*)<\/h1>/.exec(html)![1];
    expect(title).toContain(name);
    expect(title).not.toContain("Human Authorisation");
  }, 120_000);

  it("says in mandate-consume's schema that idempotency_key is required, 8 to 200 characters, as the function's Idempotency-Key", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const res = await rpcCall(provider.saved.access_token, { method: "tools/list" });
    const { tools } = (await rpcAnswer(res)).result;
    const schema = tools.find((tool: { name: string }) => tool.name === "mandate-consume").inputSchema;
    expect(schema.required).toContain("idempotency_key");
    expect(schema.properties.idempotency_key).toMatchObject({ type: "string", minLength: 8, maxLength: 200 });
  }, 120_000);
});
