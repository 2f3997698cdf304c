/**
 * Client ID Metadata Documents: an agent whose client_id is the https URL of its metadata document,
 * served here on loopback under the test CA (the run's service trusts it, and allows loopback
 * documents: OAUTH_CIMD_ALLOW_LOOPBACK=1); a deployment without that allowance fetches nothing
 * that is not on the public Internet.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { auth } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../scripts/local/server";
import { authorisedAgent, body, connect, MemoryProvider, mcpUrl, ownedMerchant, REDIRECT } from "../harness/agents";
import { startVariantServer } from "../harness/variant-server";

const tls = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url), "utf8");

/** What each path of the document host answers; every request it received, by path. */
const documents = new Map<string, (url: string) => { status?: number; body: string; hang?: boolean }>();
const requests: string[] = [];
let host: Server;
let origin: string;

beforeAll(async () => {
  host = createServer({ key: tls("localhost.key"), cert: tls("localhost.pem") }, (req, res) => {
    requests.push(req.url!);
    const answer = documents.get(req.url!)?.(`${origin}${req.url}`);
    if (!answer) return void res.writeHead(404).end();
    res.writeHead(answer.status ?? 200, { "content-type": "application/json" });
    if (answer.hang) return void res.write(answer.body.slice(0, 10)); // never ends
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  origin = `https://127.0.0.1:${(host.address() as AddressInfo).port}`;
});
afterAll(async () => {
  host.closeAllConnections();
  await new Promise((resolve) => host.close(resolve));
});

/** A document at a fresh path: `metadata` changes the well-formed one. */
function publish(metadata: (url: string) => Record<string, unknown> = () => ({}), options: { pad?: number; hang?: boolean } = {}): string {
  const path = `/agents/${crypto.randomUUID()}.json`;
  documents.set(path, (url) => {
    const document = {
      client_id: url,
      client_name: "Catalogue agent",
      client_uri: origin,
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...metadata(url),
      ...(options.pad ? { logo_uri: `${origin}/${"x".repeat(options.pad)}` } : {}),
    };
    return { body: JSON.stringify(document), hang: options.hang };
  });
  return `${origin}${path}`;
}

/** The authorization URL an SDK client with this document would open (PKCE, resource, scopes). */
async function authorizationUrlFor(clientId: string): Promise<URL> {
  const provider = new MemoryProvider(clientId);
  expect(await auth(provider, { serverUrl: mcpUrl(), scope: "mandates:read" })).toBe("REDIRECT");
  return provider.authorizationUrl!;
}

describe("mcp: Client ID Metadata Documents", () => {
  it("authorises an SDK client by its document, with no registration: consent names its domain, tools answer, refresh works", async () => {
    const { owner } = await ownedMerchant();
    const clientId = publish();
    const provider = new MemoryProvider(clientId);
    const { html } = await authorisedAgent(owner.session_token, provider);
    // The client was never registered: the SDK used the URL as its client_id.
    expect(provider.client.client_id).toBe(clientId);
    expect(provider.authorizationUrl!.searchParams.get("client_id")).toBe(clientId);
    expect(html).toContain("Catalogue agent");
    expect(html).toContain("127.0.0.1");
    const client = await connect(provider);
    expect(body(await client.callTool({ name: "mandate-scopes", arguments: {} })).money_scopes).toEqual(["purchase", "payment"]);
    await client.close();

    const refreshed = await fetch(`${mcpUrl()}/oauth/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: provider.saved.refresh_token, client_id: clientId }),
    });
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    expect((await refreshed.json()).access_token).toEqual(expect.any(String));
  }, 120_000);

  it("refuses a document that names another client_id, has no matching redirect_uri, is too large or is not JSON", async () => {
    const { owner } = await ownedMerchant();
    const refused = async (clientId: string, expected: RegExp) => {
      const page = await fetch(await authorizationUrlFor(clientId), { headers: { authorization: `Bearer ${owner.session_token}` } });
      const html = await page.text();
      expect({ clientId, status: page.status }).toEqual({ clientId, status: 400 });
      expect(html).toMatch(expected);
      expect(html).not.toContain('name="handle"');
    };
    await refused(
      publish(() => ({ client_id: `${origin}/agents/someone-else.json` })),
      /does not match metadata URL/,
    );
    await refused(
      publish(() => ({ redirect_uris: ["https://elsewhere.example/callback"] })),
      /redirect/i,
    );
    await refused(
      publish(() => ({}), { pad: 6 * 1024 }),
      /size limit/,
    );
    const notJson = `/agents/${crypto.randomUUID()}.json`;
    documents.set(notJson, () => ({ body: "<html>hello</html>" }));
    await refused(`${origin}${notJson}`, /not valid JSON/);
    await refused(`${origin}/agents/missing.json`, /HTTP 404/);

    // The token endpoint knows such a client no better.
    const token = await fetch(`${mcpUrl()}/oauth/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "authorization_code", code: "x", client_id: `${origin}/agents/missing.json` }),
    });
    expect(token.status).toBe(401);
    expect((await token.json()).error).toBe("invalid_client");
  }, 120_000);

  it("gives up on a document that does not arrive within the provider's ten seconds", async () => {
    const { owner } = await ownedMerchant();
    const clientId = publish(() => ({}), { hang: true });
    const started = Date.now();
    const page = await fetch(await authorizationUrlFor(clientId), { headers: { authorization: `Bearer ${owner.session_token}` } });
    expect(page.status).toBe(400);
    expect(await page.text()).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 60_000);

  describe("a deployment without the loopback allowance", () => {
    let strict: RunningServer;
    beforeAll(async () => {
      strict = await startVariantServer(["mcp"], { OAUTH_CIMD_ALLOW_LOOPBACK: undefined });
    }, 120_000);
    afterAll(() => strict?.stop());

    it("fetches nothing from loopback or private addresses, at the authorization and token endpoints", async () => {
      const metadata = await (await fetch(`${strict.url}/.well-known/oauth-authorization-server`)).json();
      expect(metadata.client_id_metadata_document_supported).toBe(true);
      const before = requests.length;
      const clientId = publish();
      const query = (id: string) =>
        new URLSearchParams({
          response_type: "code",
          client_id: id,
          redirect_uri: REDIRECT,
          code_challenge: "a".repeat(43),
          code_challenge_method: "S256",
          resource: `${strict.url}/functions/v1/mcp`,
        });
      for (const id of [
        clientId,
        clientId.replace("127.0.0.1", "localhost"),
        "https://10.0.0.7/agent.json",
        "https://169.254.169.254/latest/meta-data.json",
        "https://[::1]/agent.json",
      ]) {
        const page = await fetch(`${strict.url}/functions/v1/mcp/oauth/authorize?${query(id)}`);
        expect({ id, status: page.status }).toEqual({ id, status: 400 });
        expect(await page.text()).toContain("not on the public Internet");
        const token = await fetch(`${strict.url}/functions/v1/mcp/oauth/token`, {
          method: "POST",
          body: new URLSearchParams({ grant_type: "authorization_code", code: "x", client_id: id }),
        });
        expect({ id, status: token.status }).toEqual({ id, status: 401 });
      }
      expect(requests.length).toBe(before);
    }, 120_000);
  });
});
