/**
 * Standard MCP clients against the server, each left to its defaults (issue 25): discovery from
 * the 401, dynamic client registration, authorization with both scopes through the consent page
 * (the owner's part as tests/functions/mcp.test.ts does it), and a write tool call. The official
 * TypeScript SDK v1 client (`@modelcontextprotocol/sdk` 1.x; it runs on Node 20), `mcp-remote`
 * (the stdio proxy desktop hosts run) and the MCP Inspector's CLI (2.x), all pinned devDependencies;
 * the last two need Node 22 and run under the registry's `node` package (tests/harness/node22-tool.ts).
 * tests/functions/mcp.test.ts drives the v2 SDK client.
 */

import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { consent, MemoryProvider, mcpUrl, ownedMerchant } from "../harness/agents";
import { enrollStranger } from "../harness/identity";
import { issue, mandateBody, proofCapture } from "../harness/mandates";
import { AUTHORIZATION_URL, packageScript, type RunningTool, startNode22Tool, stdioRpc } from "../harness/node22-tool";

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

/** What a test started, stopped and removed after it whatever happened. */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh directory a client keeps its registration and tokens in (removed after the test). */
async function clientHome(name: string) {
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A client's process, stopped after the test. */
function tracked(tool: RunningTool) {
  cleanups.push(() => tool.stop());
  return tool;
}

/**
 * The person's part when a command-line client prints its authorization URL: the owner signs in
 * and approves both scopes, and the redirect is delivered to the client's loopback callback.
 * The URL the client asked for, and the redirect its callback was given.
 */
async function ownerApprovesPrinted(tool: RunningTool, sessionToken: string) {
  const authorizationUrl = new URL((await tool.printed(AUTHORIZATION_URL))[1]);
  const { html, location } = await consent(authorizationUrl, sessionToken);
  expect(html).toContain('value="mandates:write"');
  const delivered = await fetch(location);
  expect(delivered.status, await delivered.text()).toBeLessThan(400);
  return { authorizationUrl, location };
}

describe("mcp clients: mcp-remote (stdio proxy, Node 22)", () => {
  it("discovers, registers, asks for both scopes by itself, takes the owner's consent at its callback, and revokes a mandate over stdio", async () => {
    const { owner, mandateId } = await merchantWithMandate();
    const home = await clientHome("mcp-remote");
    const callbackPort = await freePort();
    // Defaults but the callback port (one known free, not the one derived from the URL's hash), the
    // redirect URI's host (the loopback address, not `localhost`), and no fallback to the old SSE
    // transport (a failure of Streamable HTTP shows as itself).
    const tool = tracked(
      await startNode22Tool(
        packageScript("mcp-remote/dist/proxy.js"),
        [mcpUrl(), String(callbackPort), "--host", "127.0.0.1", "--transport", "http-only"],
        { MCP_REMOTE_CONFIG_DIR: home },
      ),
    );
    const { authorizationUrl, location } = await ownerApprovesPrinted(tool, owner.session_token);
    expect(authorizationUrl.searchParams.get("scope")).toBe("mandates:read mandates:write");
    expect(authorizationUrl.searchParams.get("resource")).toBe(mcpUrl());
    expect(authorizationUrl.searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${callbackPort}/oauth/callback`);
    expect(location.searchParams.get("code")).toBeTruthy();
    await tool.printed(/Proxy established successfully/);

    // What it keeps: a registration of its own, and the token with both scopes.
    // (Its files are under a directory named for its store format: `<home>/mcp-remote-v1/<server hash>_tokens.json`.)
    const stored = join(home, (await readdir(home))[0]);
    const files = await readdir(stored);
    const tokensFile = files.find((file) => file.endsWith("_tokens.json"));
    expect(tokensFile, files.join(", ")).toBeTruthy();
    const tokens = JSON.parse(await readFile(join(stored, tokensFile!), "utf8"));
    expect(tokens.scope).toBe("mandates:read mandates:write");

    const mcp = stdioRpc(tool);
    const initialised = await mcp.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "desktop host", version: "1.0.0" },
    });
    expect(initialised.serverInfo).toBeTruthy();
    mcp.notify("notifications/initialized");
    const { tools } = await mcp.request("tools/list");
    expect(tools.map((t: { name: string }) => t.name)).toContain("mandate-revoke");
    const revoked = await mcp.request("tools/call", { name: "mandate-revoke", arguments: { mandate_id: mandateId } });
    expect(revoked.isError, JSON.stringify(revoked)).toBeFalsy();
    expect(revoked.structuredContent).toMatchObject({ revoked: true, status: "revoked" });
  }, 180_000); // a few seconds; the first run on a machine also fetches Node 22
});

describe("mcp clients: the MCP Inspector CLI (2.x, Node 22)", () => {
  it("discovers, registers, asks for both scopes by itself, signs in headless at its callback, then revokes a mandate with the stored token", async () => {
    const { owner, mandateId } = await merchantWithMandate();
    const home = await clientHome("mcp-inspector");
    const callbackUrl = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    const env = {
      // Its whole state (catalog, OAuth state, secrets) in the test's directory, secrets as a file.
      HOME: home,
      MCP_STORAGE_DIR: home,
      MCP_INSPECTOR_SECRET_STORE: "file",
      // No terminal here: the sign-in runs only when forced, and prints the URL it would open.
      MCP_AUTO_OPEN_ENABLED: "true",
    };
    const inspector = packageScript("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    const common = ["--cli", mcpUrl(), "--transport", "http", "--callback-url", callbackUrl, "--format", "json"];

    const listing = tracked(await startNode22Tool(inspector, [...common, "--method", "tools/list"], env));
    const { authorizationUrl } = await ownerApprovesPrinted(listing, owner.session_token);
    expect(authorizationUrl.searchParams.get("scope")).toBe("mandates:read mandates:write");
    expect(authorizationUrl.searchParams.get("resource")).toBe(mcpUrl());
    expect(authorizationUrl.searchParams.get("redirect_uri")).toBe(callbackUrl);
    const listed = await listing.exited();
    expect(listed.code, listed.stderr).toBe(0);
    // `--format json`: one object on stdout, the answer under `result`.
    expect(JSON.parse(listed.stdout).result.tools.map((t: { name: string }) => t.name)).toContain("mandate-revoke");

    // The write, with what the sign-in stored and no sign-in allowed.
    const call = tracked(
      await startNode22Tool(
        inspector,
        [
          ...common,
          "--stored-auth-only",
          "--method",
          "tools/call",
          "--tool-name",
          "mandate-revoke",
          "--tool-arg",
          `mandate_id=${mandateId}`,
        ],
        env,
      ),
    );
    const called = await call.exited();
    expect(called.code, called.stderr).toBe(0);
    const { result } = JSON.parse(called.stdout);
    expect(result.isError, called.stdout).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ revoked: true, status: "revoked" });
  }, 180_000); // a few seconds; the first run on a machine also fetches Node 22
});
