/**
 * agent-verification-request over HTTP (spec 2.8, 4.14, 5 rule 4): an owner of the merchant mints a
 * card with their first-party session, or an agent with its OAuth 2.1 bearer (the MCP tool's
 * rules); its url opens the hosted screen once. Every field rule and error; who may mint; the
 * card's session is the service's (no merchant key exchanges or reads it).
 */
import { describe, expect, it } from "vitest";
import { requestVerification } from "../../shared/agents/verifications";
import { sha256Hex } from "../../shared/lib/crypto";
import { addOwner, removeOwner } from "../../shared/merchants/accounts";
import { authorisedAgent, type MemoryProvider, mcpUrl, ownedMerchant } from "../harness/agents";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { serviceUnderTest } from "../harness/service";
import { consumeSession, readSession } from "../harness/sessions";
import { requestCard, screenClient, tokenOfCard } from "../harness/verifications";

/** This file's person at the screen (the screen limits its endpoints per client address). */
const { boot } = screenClient();

const RESPONSE_KEYS = ["expires_at", "external_ref", "merchant_id", "purpose", "state", "ttl_seconds", "url", "verification_id"];

describe("agent-verification-request: minting", () => {
  it("an owner mints a card: its fields, a single-use url on the hosted screen, the token stored only as its hash", async () => {
    const { merchant, owner } = await ownedMerchant();
    const now = new Date();
    const res = await requestCard(
      owner.session_token,
      { merchant_id: merchant.merchant_id, external_ref: "order-77", purpose: "Confirm the order of 3 books" },
      { now },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(Object.keys(res.body).sort()).toEqual(RESPONSE_KEYS);
    expect(res.body).toMatchObject({
      verification_id: expect.stringMatching(/^av_[0-9a-f]{32}$/),
      merchant_id: merchant.merchant_id,
      external_ref: "order-77",
      purpose: "Confirm the order of 3 books",
      state: "pending",
      ttl_seconds: 300,
      expires_at: new Date(now.getTime() + 300_000).toISOString(),
    });
    const url = new URL(res.body.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${serviceUnderTest().baseUrl}/functions/v1/hosted-capture/session`);
    expect(url.search).toBe("");
    const token = tokenOfCard(res.body.url);
    expect(token).toMatch(/^hst_[A-Za-z0-9_-]{43}$/);

    const [row] = await testDb()`select s.token_hash, s.action, s.state, s.external_txn_ref, v.owner_identity_id is not null as has_owner,
        v.agent_client_id from private.agent_verifications v join private.hosted_sessions s on s.id = v.session_id
      where v.id = ${res.body.verification_id.slice(3)}::uuid`;
    expect(row).toEqual({
      token_hash: await sha256Hex(token),
      action: "verify",
      state: "open",
      external_txn_ref: `agent_verification:${res.body.verification_id.slice(3)}`,
      has_owner: true,
      agent_client_id: null,
    });
    const stored = await testDb()`select count(*)::int as n from private.hosted_sessions where token_hash = ${token}`;
    expect(stored[0].n).toBe(0);
  });

  it("ttl_seconds 60 to 900, default 300 (null too); anything else 400 INVALID_TTL", async () => {
    const { merchant, owner } = await ownedMerchant();
    const mint = (extra: Record<string, unknown>) => requestCard(owner.session_token, { merchant_id: merchant.merchant_id, ...extra });
    for (const ttl of [60, 900]) expect((await mint({ ttl_seconds: ttl })).body.ttl_seconds).toBe(ttl);
    expect((await mint({ ttl_seconds: null })).body.ttl_seconds).toBe(300);
    for (const ttl of [59, 901, 0, -60, 120.5, "300", true]) {
      expect({ ttl, ...errorOf(await mint({ ttl_seconds: ttl })) }).toEqual({ ttl, status: 400, code: "INVALID_TTL" });
    }
  });

  it("purpose: at most 140 characters (code points), not blank, no control characters; optional", async () => {
    const { merchant, owner } = await ownedMerchant();
    const mint = (purpose: unknown) => requestCard(owner.session_token, { merchant_id: merchant.merchant_id, purpose });
    expect((await mint("p".repeat(140))).status).toBe(200);
    const emoji = "🙂".repeat(140);
    expect((await mint(emoji)).body.purpose).toBe(emoji);
    expect(errorOf(await mint("p".repeat(141)))).toEqual({ status: 400, code: "PURPOSE_TOO_LONG" });
    expect(errorOf(await mint("   "))).toEqual({ status: 400, code: "PURPOSE_EMPTY" });
    expect(errorOf(await mint(""))).toEqual({ status: 400, code: "PURPOSE_EMPTY" });
    const control = await mint("pay\u0007now");
    expect(control.body).toMatchObject({ code: "INVALID_INPUT", fields: ["purpose"] });
    expect(errorOf(await mint(42))).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect((await requestCard(owner.session_token, { merchant_id: merchant.merchant_id })).body.purpose).toBeNull();
  });

  it("external_ref: 1 to 200 characters, no control characters (400 INVALID_EXTERNAL_REF); merchant_id required; strict body", async () => {
    const { merchant, owner } = await ownedMerchant();
    const mint = (body: unknown) => requestCard(owner.session_token, body);
    const base = { merchant_id: merchant.merchant_id };
    expect((await mint({ ...base, external_ref: "r".repeat(200) })).status).toBe(200);
    for (const ref of ["", "r".repeat(201), "a\nb", 7]) {
      expect(errorOf(await mint({ ...base, external_ref: ref }))).toEqual({ status: 400, code: "INVALID_EXTERNAL_REF" });
    }
    expect(errorOf(await mint({ purpose: "x" }))).toEqual({ status: 400, code: "MERCHANT_ID_REQUIRED" });
    expect(errorOf(await mint({ merchant_id: null }))).toEqual({ status: 400, code: "MERCHANT_ID_REQUIRED" });
    expect((await mint({ ...base, state: "verified" })).body).toMatchObject({ code: "INVALID_INPUT", fields: ["state"] });
    expect(errorOf(await mint([base]))).toEqual({ status: 400, code: "INVALID_INPUT" });
  });
});

describe("agent-verification-request: who may mint", () => {
  it("a merchant key is 401 USER_TOKEN_REQUIRED (secret, publishable, or beside a session token); no token too; a bad token 401 INVALID_USER_TOKEN", async () => {
    const { merchant, owner } = await ownedMerchant();
    const body = { merchant_id: merchant.merchant_id };
    const required = { status: 401, code: "USER_TOKEN_REQUIRED" };
    expect(errorOf(await requestCard(null, body))).toEqual(required);
    for (const key of [merchant.keys.sk_test, merchant.keys.pk_test, merchant.keys.sk_live]) {
      expect(errorOf(await requestCard(null, body, { headers: { "x-service-api-key": key } }))).toEqual(required);
      expect(errorOf(await requestCard(owner.session_token, body, { headers: { "x-service-api-key": key } }))).toEqual(required);
    }
    expect(errorOf(await requestCard(null, body, { headers: { authorization: `Bearer ${merchant.keys.sk_test}` } }))).toEqual({
      status: 401,
      code: "INVALID_USER_TOKEN",
    });
    expect(errorOf(await requestCard("not.a.jwt", body))).toEqual({ status: 401, code: "INVALID_USER_TOKEN" });
    const expired = await requestCard(owner.session_token, body, { now: new Date(Date.now() + 400 * 24 * 3600_000) });
    expect(errorOf(expired)).toEqual({ status: 401, code: "INVALID_USER_TOKEN" });
  });

  it("only an owner of the merchant: a person who is not, another merchant, an unknown or malformed id, a removed owner: 403 NOT_MERCHANT_OWNER", async () => {
    const { merchant, owner } = await ownedMerchant();
    const other = await ownedMerchant();
    const customer = await enrollStranger(merchant.keys.pk_test);
    const refused = { status: 403, code: "NOT_MERCHANT_OWNER" };
    expect(errorOf(await requestCard(customer.session_token, { merchant_id: merchant.merchant_id }))).toEqual(refused);
    expect(errorOf(await requestCard(owner.session_token, { merchant_id: other.merchant.merchant_id }))).toEqual(refused);
    expect(errorOf(await requestCard(owner.session_token, { merchant_id: crypto.randomUUID() }))).toEqual(refused);
    expect(errorOf(await requestCard(owner.session_token, { merchant_id: "acme" }))).toEqual(refused);
    const upper = await requestCard(owner.session_token, { merchant_id: merchant.merchant_id.toUpperCase() });
    expect(upper.body.merchant_id).toBe(merchant.merchant_id);
    await removeOwner(testDb(), merchant.merchant_id, owner.subject_ref);
    expect(errorOf(await requestCard(owner.session_token, { merchant_id: merchant.merchant_id }))).toEqual(refused);
    const count =
      await testDb()`select count(*)::int as n from private.agent_verifications where merchant_id = ${other.merchant.merchant_id}::uuid`;
    expect(count[0].n).toBe(0);
  });

  it("an owner's first-party session revoked in the database mints nothing (403 ACCESS_REVOKED), though its JWT still verifies", async () => {
    const { merchant, owner } = await ownedMerchant();
    const body = { merchant_id: merchant.merchant_id };
    expect((await requestCard(owner.session_token, body)).status).toBe(200);
    await testDb()`update private.sessions set revoked_at = now() where token_hash = ${await sha256Hex(owner.session_token)}`;
    expect(errorOf(await requestCard(owner.session_token, body))).toEqual({ status: 403, code: "ACCESS_REVOKED" });
  });

  it("the card's session is the service's: a merchant key neither exchanges it (404, the token stays usable) nor reads it", async () => {
    const { merchant, owner } = await ownedMerchant();
    const card = (await requestCard(owner.session_token, { merchant_id: merchant.merchant_id })).body;
    const token = tokenOfCard(card.url);
    expect(errorOf(await consumeSession(token, { key: merchant.keys.sk_test }))).toEqual({ status: 404, code: "not_found" });
    const [session] = await testDb()`select s.id from private.agent_verifications v join private.hosted_sessions s on s.id = v.session_id
      where v.id = ${card.verification_id.slice(3)}::uuid`;
    const sessionId = `hs_${session.id.replace(/-/g, "")}`;
    expect(errorOf(await readSession(merchant.keys.sk_test, sessionId))).toEqual({ status: 404, code: "not_found" });
    expect((await boot(token)).status).toBe(200);
  });

  it("an agent's registered name, which registration does not bound, is shown at most 200 characters long; a blank one not at all", async () => {
    const { merchant } = await ownedMerchant();
    const [{ identity_id }] =
      await testDb()`select identity_id::text from private.merchant_owners where merchant_id = ${merchant.merchant_id}::uuid`;
    const agent = {
      kind: "agent" as const,
      merchantId: merchant.merchant_id,
      environment: "test" as const,
      clientId: "client-long-name",
      ownerIdentityId: identity_id as string,
      scopes: ["mandates:read"],
    };
    const deps = { sql: testDb(), now: new Date(), locale: "en" as const };
    const mint = (agentName: string | null) =>
      requestVerification(deps, agent, { ttl_seconds: 300 }, { serviceBaseUrl: serviceUnderTest().baseUrl, agentName });
    const named = await mint(`  ${"é".repeat(300)}`);
    const blank = await mint("   ");
    const names = await testDb()`select id, agent_name from private.agent_verifications
      where id in (${named.verification_id.slice(3)}::uuid, ${blank.verification_id.slice(3)}::uuid)`;
    const byId = new Map(names.map((row) => [row.id.replace(/-/g, ""), row.agent_name]));
    expect(byId.get(named.verification_id.slice(3))).toBe("é".repeat(200));
    expect(byId.get(blank.verification_id.slice(3))).toBeNull();
  });

  it("a live owner is no sandbox owner: cards live in the owner's environment", async () => {
    const merchant = await merchantFactory();
    const liveOwner = await enrollStranger(merchant.keys.pk_live);
    await addOwner(testDb(), merchant.merchant_id, liveOwner.subject_ref, new Date());
    const res = await requestCard(liveOwner.session_token, { merchant_id: merchant.merchant_id });
    expect(res.status, res.text).toBe(200);
    const [row] = await testDb()`select environment from private.agent_verifications where id = ${res.body.verification_id.slice(3)}::uuid`;
    expect(row.environment).toBe("live");
  });
});

describe("agent-verification-request: an agent's OAuth 2.1 bearer (spec 5 rule 4; it was 401 INVALID_USER_TOKEN)", () => {
  /** The token endpoint's refresh grant for `provider`, with `extra` parameters. */
  async function refreshed(provider: MemoryProvider, extra: Record<string, string> = {}) {
    const res = await fetch(`${mcpUrl()}/oauth/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: provider.saved.refresh_token,
        client_id: provider.client.client_id,
        ...extra,
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { access_token: string; refresh_token: string; scope: string };
  }

  it("mints a card for the agent's merchant, named for the agent as the MCP tool's card is", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const res = await requestCard(provider.saved.access_token, { merchant_id: merchant.merchant_id, purpose: "Confirm the order" });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(RESPONSE_KEYS);
    expect(res.body).toMatchObject({ merchant_id: merchant.merchant_id, state: "pending", purpose: "Confirm the order" });
    const [row] = await testDb()`select agent_client_id, agent_name, owner_identity_id::text from private.agent_verifications
      where id = ${res.body.verification_id.slice(3)}::uuid`;
    expect(row).toMatchObject({ agent_client_id: provider.client.client_id, agent_name: "Shopping agent" });
    expect((await boot(tokenOfCard(res.body.url))).status).toBe(200);
  }, 120_000);

  it("refuses another merchant (403 NOT_MERCHANT_OWNER), a token without the tool's scope mandates:read (403 INSUFFICIENT_SCOPE), and a merchant key beside it", async () => {
    const { merchant, owner } = await ownedMerchant();
    const other = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    expect(errorOf(await requestCard(provider.saved.access_token, { merchant_id: other.merchant.merchant_id }))).toEqual({
      status: 403,
      code: "NOT_MERCHANT_OWNER",
    });
    const headers = { "x-service-api-key": merchant.keys.sk_test };
    expect(errorOf(await requestCard(provider.saved.access_token, { merchant_id: merchant.merchant_id }, { headers }))).toEqual({
      status: 401,
      code: "USER_TOKEN_REQUIRED",
    });
    const writeOnly = await refreshed(provider, { scope: "mandates:write" });
    expect(writeOnly.scope).toBe("mandates:write");
    const refused = await requestCard(writeOnly.access_token, { merchant_id: merchant.merchant_id });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "INSUFFICIENT_SCOPE", scope: "mandates:read" });
  }, 120_000);

  it("refuses a revoked grant, an expired token, an owner who left and an unknown token: 401 INVALID_USER_TOKEN", async () => {
    const { merchant, owner } = await ownedMerchant();
    const body = { merchant_id: merchant.merchant_id };
    const invalid = { status: 401, code: "INVALID_USER_TOKEN" };
    const { provider } = await authorisedAgent(owner.session_token);
    // RFC 7009: revoking the refresh token revokes the grant.
    const metadata = await (await fetch(`${serviceUnderTest().baseUrl}/.well-known/oauth-authorization-server`)).json();
    const revocation = await fetch(metadata.revocation_endpoint, {
      method: "POST",
      body: new URLSearchParams({ token: provider.saved.refresh_token, client_id: provider.client.client_id }),
    });
    expect(revocation.status).toBe(200);
    expect(errorOf(await requestCard(provider.saved.access_token, body))).toEqual(invalid);

    const { provider: second } = await authorisedAgent(owner.session_token);
    expect((await requestCard(second.saved.access_token, body)).status).toBe(200);
    const later = new Date(Date.now() + 2 * 3600_000);
    expect(errorOf(await requestCard(second.saved.access_token, body, { now: later }))).toEqual(invalid);
    expect(errorOf(await requestCard("user:grant:secret", body))).toEqual(invalid);
    await removeOwner(testDb(), merchant.merchant_id, owner.subject_ref);
    expect(errorOf(await requestCard(second.saved.access_token, body))).toEqual(invalid);
  }, 120_000);
});
