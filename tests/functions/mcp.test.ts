import { auth } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { removeOwner } from "../../shared/merchants/accounts";
import { authorisedAgent, base, body, connect, MemoryProvider, mcpUrl, ownedMerchant, REDIRECT } from "../harness/agents";
import { merchantFactory, testDb } from "../harness/factories";
import { enrollStranger, transact } from "../harness/identity";
import { issue, mandateBody, mandateFixture, proofCapture } from "../harness/mandates";
import { screenClient, tokenOfCard } from "../harness/verifications";

describe("mcp: OAuth discovery", () => {
  it("answers a call without a token 401 pointing at the protected resource metadata, which names the issuer", async () => {
    const res = await fetch(mcpUrl(), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    const challenge = res.headers.get("www-authenticate")!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1];
    expect(metadataUrl).toBe(`${base()}/.well-known/oauth-protected-resource/functions/v1/mcp`);
    const resource = await (await fetch(metadataUrl)).json();
    expect(resource).toMatchObject({ resource: mcpUrl(), authorization_servers: [base()] });
    const server = await (await fetch(`${base()}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      issuer: base(),
      authorization_endpoint: `${base()}/functions/v1/mcp/oauth/authorize`,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(server.registration_endpoint).toBe(`${base()}/functions/v1/mcp/oauth/register`);
    expect(server.revocation_endpoint).toBeTruthy();
  });
});

describe("mcp: an owner authorises an agent, which acts on mandates", () => {
  it("runs the whole flow with the SDK's client: consent, tools, each tool, refresh, revocation", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { provider, html, csp } = await authorisedAgent(owner.session_token);
    // The consent screen: the agent's name, in the owner's locale, under a strict CSP.
    expect(html).toContain("Shopping agent");
    expect(html).toContain('lang="pt-BR"');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    const agentId = provider.client.client_id as string;

    const client = await connect(provider);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "agent-verification-request",
      "agent-verification-result",
      "mandate-check",
      "mandate-consume",
      "mandate-get",
      "mandate-issue",
      "mandate-revoke",
      "mandate-scopes",
      "receipt-verify",
    ]);
    expect(tools.find((t) => t.name === "mandate-check")!.inputSchema).toMatchObject({
      type: "object",
      required: ["mandate_id", "scope"],
    });

    const scopes = body(await client.callTool({ name: "mandate-scopes", arguments: {} }));
    expect(scopes.money_scopes).toEqual(["purchase", "payment"]);

    // A person (with a document) grants this agent a purchase mandate, proven by a fresh capture.
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true, terms: { granted_to: agentId } });
    const issued = await client.callTool({ name: "mandate-issue", arguments: mandateBody(person, captureId) });
    expect(issued.isError, JSON.stringify(issued)).toBeFalsy();
    const mandateId = body(issued).mandate_id;

    const checked = body(
      await client.callTool({
        name: "mandate-check",
        arguments: { mandate_id: mandateId, scope: "purchase", amount: 200, currency: "USD" },
      }),
    );
    expect(checked.allowed).toBe(true);
    const consumeArgs = {
      mandate_id: mandateId,
      scope: "purchase",
      amount: 200,
      currency: "USD",
      idempotency_key: `idem-${crypto.randomUUID()}`,
    };
    const consumed = body(await client.callTool({ name: "mandate-consume", arguments: consumeArgs }));
    expect(consumed).toMatchObject({ allowed: true, remaining: { amount: 500, currency: "USD" } });
    const replayed = body(await client.callTool({ name: "mandate-consume", arguments: consumeArgs }));
    expect(replayed).toMatchObject({ allowed: true, idempotent_replay: true, consumption_id: consumed.consumption_id });
    const withoutKey = body(await client.callTool({ name: "mandate-consume", arguments: { ...consumeArgs, idempotency_key: undefined } }));
    expect(withoutKey).toMatchObject({ allowed: false, reason: "idempotency_key_required" });

    const read = body(await client.callTool({ name: "mandate-get", arguments: { id: mandateId } }));
    expect(read.consumptions).toHaveLength(1);

    // Spec 4.11: not by the agent holding the mandate; the same answer as an unknown one.
    const own = await client.callTool({ name: "mandate-revoke", arguments: { mandate_id: mandateId } });
    expect(own.isError).toBe(true);
    expect(body(own)).toMatchObject({ code: "not_found", status: 404 });
    // Another agent's mandate of the merchant: the agent may revoke it as the merchant, never spend it.
    const otherCapture = await proofCapture(merchant, person, { document: true });
    const other = await issue(merchant.keys.sk_test, mandateBody(person, otherCapture));
    expect(other.status, other.text).toBe(201);
    const spend = await client.callTool({
      name: "mandate-consume",
      arguments: { ...consumeArgs, mandate_id: other.body.mandate_id, idempotency_key: `idem-${crypto.randomUUID()}` },
    });
    expect(body(spend)).toMatchObject({ code: "not_found" });
    const revoked = body(await client.callTool({ name: "mandate-revoke", arguments: { mandate_id: other.body.mandate_id } }));
    expect(revoked).toMatchObject({ revoked: true, status: "revoked" });

    // Input is judged by the function's own schema, with its codes.
    const bad = await client.callTool({
      name: "mandate-check",
      arguments: { mandate_id: mandateId, scope: "purchase", amount: 1.5, currency: "USD" },
    });
    expect(body(bad)).toMatchObject({ code: "AMOUNT_INVALID", status: 400 });

    // Public receipt verification of an act of the merchant.
    const shot = person.capture();
    const act = await transact(merchant.keys.sk_test, {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: person.subject_ref,
      capture_nonce: shot.nonce,
      face_template: shot.descriptor,
    });
    expect(act.status, act.text).toBe(200);
    const receipt = body(await client.callTool({ name: "receipt-verify", arguments: { code: act.body.receipt_code } }));
    expect(receipt.valid).toBe(true);
    await client.close();

    // Refresh: a new pair, the refresh token rotated; the new access token works.
    const metadata = await (await fetch(`${base()}/.well-known/oauth-authorization-server`)).json();
    const refreshed = await fetch(metadata.token_endpoint, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: provider.saved.refresh_token, client_id: agentId }),
    });
    const tokens = await refreshed.json();
    expect(refreshed.status, JSON.stringify(tokens)).toBe(200);
    expect(tokens.refresh_token).not.toBe(provider.saved.refresh_token);
    expect(tokens.access_token).not.toBe(provider.saved.access_token);
    provider.saved = tokens;
    const again = await connect(provider);
    expect((await again.listTools()).tools.length).toBe(9);
    await again.close();

    // Revocation: the access token stops at once.
    const revocation = await fetch(metadata.revocation_endpoint, {
      method: "POST",
      body: new URLSearchParams({ token: tokens.access_token, client_id: agentId }),
    });
    expect(revocation.status).toBe(200);
    const after = await fetch(mcpUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(after.status).toBe(401);
  }, 240_000);
});

describe("mcp: an agent asks a person to prove presence", () => {
  it("agent-verification-request and -result: the card names the agent to the person; the agent polls it to verified; another merchant's is refused", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const client = await connect(provider);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "agent-verification-result")!.inputSchema).toMatchObject({ required: ["verification_id"] });
    const requestSchema = tools.find((t) => t.name === "agent-verification-request")!.inputSchema as any;
    expect(requestSchema).toMatchObject({ properties: { ttl_seconds: { default: 300 } }, additionalProperties: false });
    expect(JSON.stringify(requestSchema.properties.purpose)).toContain("At most 140 characters");

    // merchant_id defaults to the agent's merchant.
    const minted = await client.callTool({
      name: "agent-verification-request",
      arguments: { purpose: "Confirm the booking", ttl_seconds: 120 },
    });
    expect(minted.isError, JSON.stringify(minted)).toBeFalsy();
    const card = body(minted);
    expect(card).toMatchObject({ merchant_id: merchant.merchant_id, purpose: "Confirm the booking", ttl_seconds: 120, state: "pending" });
    const result = async () =>
      body(await client.callTool({ name: "agent-verification-result", arguments: { verification_id: card.verification_id } }));
    expect(await result()).toMatchObject({ state: "pending", reason: "pending" });

    const { boot, screenCall } = screenClient();
    const screen = (await boot(tokenOfCard(card.url))).body;
    expect(screen.card).toEqual({
      verification_id: card.verification_id,
      purpose: "Confirm the booking",
      agent_name: "Shopping agent",
      requested_by: "agent",
    });
    expect(await result()).toMatchObject({ state: "opened" });
    const { descriptor } = owner.capture({ nonce: screen.capture_nonce, light: true });
    const done = await screenCall("complete", screen.screen_token, { capture_nonce: screen.capture_nonce, face_template: descriptor });
    expect(done.body.state, done.text).toBe("completed");
    expect(await result()).toMatchObject({
      state: "verified",
      reason: "verified",
      assurance_level: "face_voice",
      receipt_code: done.body.outcome.receipt_code,
    });

    // The owner reads the agent's card too; the agent's errors keep the function's codes.
    const byOwner = await fetch(`${base()}/functions/v1/agent-verification-result?verification_id=${card.verification_id}`, {
      headers: { authorization: `Bearer ${owner.session_token}` },
    });
    expect((await byOwner.json()).state).toBe("verified");
    const elsewhere = await ownedMerchant();
    const foreign = await client.callTool({
      name: "agent-verification-request",
      arguments: { merchant_id: elsewhere.merchant.merchant_id },
    });
    expect(body(foreign)).toMatchObject({ code: "NOT_MERCHANT_OWNER", status: 403 });
    const tooLong = await client.callTool({ name: "agent-verification-request", arguments: { purpose: "p".repeat(141) } });
    expect(body(tooLong)).toMatchObject({ code: "PURPOSE_TOO_LONG", status: 400 });
    const theirCard = await fetch(`${base()}/functions/v1/agent-verification-request`, {
      method: "POST",
      headers: { authorization: `Bearer ${elsewhere.owner.session_token}`, "content-type": "application/json" },
      body: JSON.stringify({ merchant_id: elsewhere.merchant.merchant_id }),
    });
    const theirs = await theirCard.json();
    const unseen = await client.callTool({ name: "agent-verification-result", arguments: { verification_id: theirs.verification_id } });
    expect(body(unseen)).toMatchObject({ code: "not_found", status: 404 });
    // Spec 4.14 and 5 rule 4: the function takes the agent's OAuth bearer too, with the tool's rules.
    const direct = await fetch(`${base()}/functions/v1/agent-verification-request`, {
      method: "POST",
      headers: { authorization: `Bearer ${provider.saved.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ merchant_id: merchant.merchant_id }),
    });
    expect(direct.status).toBe(200);
    await client.close();
  }, 240_000);
});

describe("mcp: subscriptions", () => {
  it("acknowledges a subscriptions/listen stream (2026-07-28) and keeps it open until the client closes it; it was never answered", async () => {
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const client = await connect(provider, {}, mcpUrl(), { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    // The tool list never changes, so the server honours no list-changed filter.
    const subscription = await client.listen({ toolsListChanged: true }, { timeout: 10_000 });
    expect(subscription.honoredFilter).toEqual({});
    // The stream stays usable beside it.
    expect((await client.listTools()).tools.length).toBe(9);
    // Closing ends the stream (the client's close, or the server's empty answer to its cancel), never a drop.
    await subscription.close();
    expect(["local", "graceful"]).toContain(await subscription.closed);
    await client.close();
  }, 120_000);
});

describe("mcp: refused calls", () => {
  it("refuses an expired token (on the service's clock), another merchant's mandates and a removed owner's agent", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const later = new Date(Date.now() + 2 * 3600_000).toISOString();
    await expect(connect(provider, { "x-test-now": later })).rejects.toThrow();
    const expired = await fetch(mcpUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${provider.saved.access_token}`, "content-type": "application/json", "x-test-now": later },
      body: "{}",
    });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toMatch(/invalid_token.*resource_metadata=/);

    // Another merchant's mandate is unknown to this agent, as on mandate-get.
    const foreign = await mandateFixture();
    const client = await connect(provider);
    const read = await client.callTool({ name: "mandate-get", arguments: { id: foreign.mandate.mandate_id } });
    expect(body(read)).toMatchObject({ code: "not_found", status: 404 });
    const revoke = await client.callTool({ name: "mandate-revoke", arguments: { mandate_id: foreign.mandate.mandate_id } });
    expect(body(revoke)).toMatchObject({ code: "not_found" });
    await client.close();

    // The owner leaves: the agent's next call is refused.
    await removeOwner(testDb(), merchant.merchant_id, owner.subject_ref);
    const gone = await fetch(mcpUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${provider.saved.access_token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(gone.status).toBe(401);
  }, 240_000);

  it("binds every token to this resource: another audience is refused at authorization and at the token endpoint", async () => {
    const { owner } = await ownedMerchant();
    const provider = new MemoryProvider();
    await auth(provider, { serverUrl: mcpUrl(), scope: "mandates:read" });
    const url = new URL(provider.authorizationUrl!);
    url.searchParams.set("resource", "https://elsewhere.example/mcp");
    const page = await fetch(url, { headers: { authorization: `Bearer ${owner.session_token}` }, redirect: "manual" });
    expect(page.status).toBe(302);
    expect(new URL(page.headers.get("location")!).searchParams.get("error")).toBe("invalid_target");

    const { provider: agent } = await authorisedAgent(owner.session_token);
    const metadata = await (await fetch(`${base()}/.well-known/oauth-authorization-server`)).json();
    const retarget = await fetch(metadata.token_endpoint, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: agent.saved.refresh_token,
        client_id: agent.client.client_id,
        resource: "https://elsewhere.example/mcp",
      }),
    });
    expect(retarget.status).toBe(400);
    expect((await retarget.json()).error).toBe("invalid_target");
  }, 240_000);

  it("refuses a token of another audience (the service reached at another origin), and bearers that are no access token", async () => {
    const { merchant, owner } = await ownedMerchant();
    // The same service at http://localhost:<port>: its resource, and so the token's audience, is that origin's MCP URL.
    const elsewhere = mcpUrl().replace("//127.0.0.1:", "//localhost:");
    const { provider } = await authorisedAgent(owner.session_token, new MemoryProvider(), elsewhere);
    const there = await connect(provider, {}, elsewhere);
    expect((await there.listTools()).tools.length).toBe(9);
    await there.close();
    const call = (bearer: string) =>
      fetch(mcpUrl(), {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',
      });
    for (const [what, bearer] of [
      ["a token for another audience", provider.saved.access_token],
      ["the merchant's secret key", merchant.keys.sk_test],
      ["the owner's first-party session token", owner.session_token],
    ]) {
      const res = await call(bearer);
      expect({ what, status: res.status }).toEqual({ what, status: 401 });
      const challenge = res.headers.get("www-authenticate");
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain(`resource_metadata="${base()}/.well-known/oauth-protected-resource/functions/v1/mcp"`);
    }
    await expect(connect(provider)).rejects.toThrow();
  }, 240_000);

  it("answers a sign-in posted as something other than a form 400 with the error page, where it was a 500", async () => {
    for (const [type, body] of [
      ["application/json", '{"session_token":"x"}'],
      ["text/plain", "session_token=x"],
      ["multipart/form-data; boundary=x", "not multipart"],
    ]) {
      const res = await fetch(`${mcpUrl()}/oauth/authorize`, { method: "POST", headers: { "content-type": type }, body });
      expect({ type, status: res.status }).toEqual({ type, status: 400 });
      expect(await res.text()).toContain("not a form");
    }
  });

  it("answers a client id or token too long for the key store as unknown, where the store's error was a 500 or an empty 503", async () => {
    const long = "c".repeat(600);
    const token = await fetch(`${mcpUrl()}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "x", client_id: long }),
    });
    expect(token.status).toBe(401);
    expect((await token.json()).error).toBe("invalid_client");
    const basic = await fetch(`${mcpUrl()}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${long}:secret`)}` },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "x" }),
    });
    expect(basic.status).toBe(401);
    const bearer = await fetch(mcpUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${"u".repeat(300)}:${"g".repeat(300)}:${"s".repeat(300)}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(bearer.status).toBe(401);
    const { owner } = await ownedMerchant();
    const query = new URLSearchParams({
      response_type: "code",
      client_id: long,
      redirect_uri: REDIRECT,
      code_challenge: "a".repeat(43),
      code_challenge_method: "S256",
    });
    const authorize = await fetch(`${mcpUrl()}/oauth/authorize?${query}`, { headers: { authorization: `Bearer ${owner.session_token}` } });
    expect(authorize.status).toBe(400);
  });

  it("shows no consent to a person who owns nothing, and none without a valid session", async () => {
    const merchant = await merchantFactory();
    const stranger = await enrollStranger(merchant.keys.pk_test);
    const provider = new MemoryProvider();
    await auth(provider, { serverUrl: mcpUrl(), scope: "mandates:read" });
    const notOwner = await fetch(provider.authorizationUrl!, { headers: { authorization: `Bearer ${stranger.session_token}` } });
    expect(notOwner.status).toBe(403);
    const unsigned = await fetch(provider.authorizationUrl!);
    expect(unsigned.status).toBe(200);
    expect(await unsigned.text()).toContain('name="session_token"');
    const forged = await fetch(provider.authorizationUrl!, { headers: { authorization: "Bearer not.a.jwt" } });
    expect(forged.status).toBe(401);
  }, 120_000);
});

describe("mcp: rate limit", () => {
  /** One JSON-RPC ping with `provider`'s access token, as raw HTTP. */
  const ping = (provider: MemoryProvider) =>
    fetch(mcpUrl(), {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.saved.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });

  it("allows an agent 300 requests a minute for its merchant, then 429 RATE_LIMITED with Retry-After; another agent of the merchant has its own", async () => {
    // The limiter counts in the real clock's minute windows: start with enough of this one left.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 25_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
    const { owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const { provider: other } = await authorisedAgent(owner.session_token);
    const answers: number[] = [];
    for (let wave = 0; wave < 300 / 15; wave++)
      answers.push(...(await Promise.all(Array.from({ length: 15 }, () => ping(provider)))).map((r) => r.status));
    expect(new Set(answers)).toEqual(new Set([200]));
    const refused = await ping(provider);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "RATE_LIMITED", retry_after_seconds: expect.any(Number) });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await ping(other)).status).toBe(200);
  }, 120_000);
});

describe("mcp: tool arguments are read as the functions read their bodies", () => {
  it("refuses text no column can store, nesting past 32 levels and money written as a float, as the function does (these were 500s or accepted)", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const agentId = provider.client.client_id as string;
    const login = { scopes: ["login"], ceiling: undefined };
    const ownCapture = await proofCapture(merchant, owner, { terms: { ...login, granted_to: agentId } });
    const ownMandate = await issue(merchant.keys.sk_test, mandateBody(owner, ownCapture));
    const otherMandate = await issue(merchant.keys.sk_test, mandateBody(owner, await proofCapture(merchant, owner, { terms: login })));
    expect([ownMandate.status, otherMandate.status]).toEqual([201, 201]);
    const mandateId = ownMandate.body.mandate_id as string;
    const client = await connect(provider);
    const refused = async (name: string, args: Record<string, unknown>) => body(await client.callTool({ name, arguments: args }));
    const unstorable = { code: "INVALID_INPUT", status: 400 };
    expect(await refused("mandate-check", { mandate_id: mandateId, scope: "login", action_ref: "a\ud800" })).toMatchObject({
      ...unstorable,
      fields: ["action_ref"],
    });
    expect(await refused("mandate-check", { mandate_id: mandateId, scope: "login", context: { merchant: "a\u0000" } })).toMatchObject({
      ...unstorable,
      fields: ["context.merchant"],
    });
    expect(
      await refused("mandate-consume", {
        mandate_id: mandateId,
        scope: "login",
        action_ref: "a\u0000",
        idempotency_key: `idem-${crypto.randomUUID()}`,
      }),
    ).toMatchObject({ ...unstorable, fields: ["action_ref"] });
    expect(await refused("mandate-revoke", { mandate_id: otherMandate.body.mandate_id, reason: "x\u0000" })).toMatchObject({
      ...unstorable,
      fields: ["reason"],
    });
    await client.close();

    // Raw JSON-RPC, as a client writes it: 33 levels of nesting, and an amount written 1e3.
    const call = async (argumentsText: string) => {
      const res = await fetch(mcpUrl(), {
        method: "POST",
        headers: {
          authorization: `Bearer ${provider.saved.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mandate-consume","arguments":${argumentsText}}}`,
      });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      return JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text).result.structuredContent;
    };
    const args = `"mandate_id":"${mandateId}","scope":"login","idempotency_key":"idem-${crypto.randomUUID()}"`;
    expect(await call(`{${args},"action_ref":"deep","context":${"[".repeat(32)}${"]".repeat(32)}}`)).toMatchObject({
      code: "INVALID_INPUT",
      fields: ["context"],
    });
    expect(await call(`{${args},"amount":1e3,"currency":"USD"}`)).toMatchObject({ code: "AMOUNT_INVALID", status: 400 });
    expect(await call(`{${args},"amount":1000,"currency":"USD"}`)).toMatchObject({ allowed: true });
  }, 240_000);
});
