/**
 * Standard MCP clients against the server, each left to its defaults (issue 25): discovery from
 * the 401, dynamic client registration, authorization with both scopes through the consent page
 * (the owner's part as tests/functions/mcp.test.ts does it), and a write tool call. Here the
 * official TypeScript SDK v1 client (`@modelcontextprotocol/sdk` 1.x, pinned; it runs on Node 20);
 * tests/functions/mcp.test.ts drives the v2 client.
 */

import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { consent, MemoryProvider, mcpUrl, ownedMerchant } from "../harness/agents";
import { enrollStranger } from "../harness/identity";
import { issue, mandateBody, proofCapture } from "../harness/mandates";

/** A merchant with an owner, and a mandate the merchant issued (an agent with write may revoke it). */
async function merchantWithMandate() {
  const { merchant, owner } = await ownedMerchant();
  const person = await enrollStranger(merchant.keys.pk_test);
  const captureId = await proofCapture(merchant, person, { document: true });
  const issued = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
  expect(issued.status, issued.text).toBe(201);
  return { merchant, owner, mandateId: issued.body.mandate_id as string };
}

describe("mcp clients: the official SDK v1 client", () => {
  it("discovers, registers, asks for both scopes by itself (it asked for mandates:read alone), and revokes a mandate", async () => {
    const { owner, mandateId } = await merchantWithMandate();
    // No scope configured: the client takes what the server advertises.
    const provider = new MemoryProvider();
    const first = new Client({ name: "sdk v1 agent", version: "1.0.0" });
    const unauthorised = new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider as never });
    await expect(first.connect(unauthorised)).rejects.toThrow(UnauthorizedError);
    expect(provider.client?.client_id, "registered by DCR").toBeTruthy();
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.searchParams.get("scope")).toBe("mandates:read mandates:write");
    expect(authorizationUrl.searchParams.get("resource")).toBe(mcpUrl());

    const { html, location } = await consent(authorizationUrl, owner.session_token);
    expect(html).toContain('value="mandates:write"');
    await unauthorised.finishAuth(location.searchParams.get("code")!);
    expect(provider.saved.scope).toBe("mandates:read mandates:write");

    const client = new Client({ name: "sdk v1 agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider as never }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("mandate-revoke");
    const revoked = await client.callTool({ name: "mandate-revoke", arguments: { mandate_id: mandateId } });
    expect(revoked.isError, JSON.stringify(revoked)).toBeFalsy();
    expect(revoked.structuredContent).toMatchObject({ revoked: true, status: "revoked" });
    await client.close();
  }, 240_000);
});
