/**
 * An owner signs in at the MCP authorization endpoint by proving presence on the hosted capture
 * screen (driven through the screen's JSON endpoints, boot and complete, with simulator captures),
 * and the consent screen in the three locales.
 */
import { auth } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { base, body, connect, cookiesOf, decideOn, MemoryProvider, mcpUrl, ownedMerchant } from "../harness/agents";
import { enrollStranger } from "../harness/identity";
import { boot, screenCall } from "../harness/sessions";

type Person = { capture(options: { nonce: string; light: boolean }): { descriptor: unknown; nonce: string } };

/** A fresh authorization request of an SDK client (DCR, PKCE, resource): its URL and the client. */
async function authorizationRequest() {
  const provider = new MemoryProvider();
  expect(await auth(provider, { serverUrl: mcpUrl(), scope: "mandates:read mandates:write" })).toBe("REDIRECT");
  return { provider, url: provider.authorizationUrl! };
}

const post = (url: URL, fields: Record<string, string>, cookie?: string, locale = "en") =>
  fetch(url, {
    method: "POST",
    body: new URLSearchParams(fields),
    headers: { "accept-language": locale, ...(cookie ? { cookie } : {}) },
    redirect: "manual",
  });

/** Step one: "prove it is me" for the business; the capture screen's token, the session id and the browser's cookie. */
async function startPresence(url: URL, merchantId: string, environment = "test") {
  const page = await post(url, { sign_in: "presence", merchant_id: merchantId, environment });
  const html = await page.text();
  expect(page.status, html).toBe(200);
  const screenUrl = /href="([^"]+\/functions\/v1\/hosted-capture\/session#hst_[^"]+)"/.exec(html)![1];
  const sessionId = /name="presence_session" value="(hs_[0-9a-f]{32})"/.exec(html)![1];
  const cookie = cookiesOf(page);
  expect(page.headers.get("cache-control")).toBe("no-store");
  expect(page.headers.getSetCookie()[0]).toMatch(/^__Host-agent-sign-in=.+; Max-Age=900; Path=\/; Secure; HttpOnly; SameSite=Strict$/);
  return { html, screenUrl, sessionToken: new URL(screenUrl).hash.slice(1), sessionId, cookie };
}

/** The person on the capture screen: boot with the token, complete with their capture. */
async function proveOnScreen(sessionToken: string, person: Person) {
  const booted = await boot(sessionToken);
  expect(booted.status, booted.text).toBe(200);
  const { descriptor } = person.capture({ nonce: booted.body.capture_nonce, light: true });
  return screenCall("complete", booted.body.screen_token, { capture_nonce: booted.body.capture_nonce, face_template: descriptor });
}

const continueWith = (url: URL, sessionId: string, cookie: string, locale?: string) =>
  post(url, { presence_session: sessionId }, cookie, locale);

describe("mcp: an owner signs in by proving presence on the hosted capture screen", () => {
  it("opens a login session bound to the request, and after the capture the same browser gets the consent screen, then a token", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { provider, url } = await authorizationRequest();
    const signIn = await fetch(url, { headers: { "accept-language": "es" } });
    const signInHtml = await signIn.text();
    expect(signInHtml).toContain('name="sign_in" value="presence"');
    expect(signInHtml).toContain("O demuestra que eres tú, ante la cámara");

    const started = await startPresence(url, merchant.merchant_id);
    // Continue before the screen is done: not yet, and nothing is used up.
    const early = await continueWith(url, started.sessionId, started.cookie);
    expect(early.status).toBe(409);
    expect(await early.text()).toContain("has not identified you yet");

    const done = await proveOnScreen(started.sessionToken, owner);
    expect(done.body).toMatchObject({ state: "completed", action: "login", outcome: { approved: true } });

    const { html, location } = await decideOn(url, await continueWith(url, started.sessionId, started.cookie, "pt-BR"));
    expect(html).toContain("Permitir que Shopping agent");
    expect(location.searchParams.get("iss")).toBe(base());
    const code = location.searchParams.get("code")!;
    expect(await auth(provider, { serverUrl: mcpUrl(), authorizationCode: code, iss: base() })).toBe("AUTHORIZED");
    const client = await connect(provider);
    expect(body(await client.callTool({ name: "mandate-scopes", arguments: {} })).money_scopes).toEqual(["purchase", "payment"]);
    await client.close();

    // Single use: the same session, browser and request again.
    const again = await continueWith(url, started.sessionId, started.cookie);
    expect(again.status).toBe(401);
    expect(await again.text()).toContain("did not succeed");
  }, 240_000);

  it("cannot be carried to another authorization request, nor to another browser", async () => {
    const { merchant, owner } = await ownedMerchant();
    const first = await authorizationRequest();
    const started = await startPresence(first.url, merchant.merchant_id);
    expect((await proveOnScreen(started.sessionToken, owner)).body.state).toBe("completed");

    // An attacker's own request (another client, another PKCE challenge) with the victim's session and cookie.
    const swapped = await authorizationRequest();
    const onOther = await continueWith(swapped.url, started.sessionId, started.cookie);
    expect(onOther.status).toBe(401);
    expect(await onOther.text()).not.toContain('name="handle"');
    // The same request from a browser without the cookie, or with another one.
    expect((await continueWith(first.url, started.sessionId, "")).status).toBe(401);
    const stranger = await startPresence(swapped.url, merchant.merchant_id);
    expect((await continueWith(first.url, started.sessionId, stranger.cookie)).status).toBe(401);
    // Session ids that name nothing: malformed, overlong, unknown.
    for (const id of ["hs_zz", "x".repeat(300), `hs_${crypto.randomUUID().replaceAll("-", "")}`]) {
      expect((await continueWith(first.url, id, started.cookie)).status).toBe(401);
    }
    // None of that used it up: the browser that started it, on its request, still signs in.
    const own = await continueWith(first.url, started.sessionId, started.cookie);
    expect(own.status, await own.clone().text()).toBe(200);
    expect(await own.text()).toContain('name="handle"');
  }, 240_000);

  it("signs in only an owner of the business: someone else identified, a refused capture, or a business without owners", async () => {
    const { merchant, owner } = await ownedMerchant();
    const customer = await enrollStranger(merchant.keys.pk_test);
    const { url } = await authorizationRequest();

    const byCustomer = await startPresence(url, merchant.merchant_id);
    expect((await proveOnScreen(byCustomer.sessionToken, customer)).body.state).toBe("completed");
    const notOwner = await continueWith(url, byCustomer.sessionId, byCustomer.cookie);
    expect(notOwner.status).toBe(403);

    // The owner cancels on the screen: that session never signs anyone in.
    const cancelledByOwner = await startPresence(url, merchant.merchant_id);
    const booted = await boot(cancelledByOwner.sessionToken);
    expect((await screenCall("cancel", booted.body.screen_token, {})).body.state).toBe("cancelled");
    const cancelled = await continueWith(url, cancelledByOwner.sessionId, cancelledByOwner.cookie);
    expect(cancelled.status).toBe(401);
    expect(owner.subject_ref).not.toBe(customer.subject_ref);

    // A business with no owner in that environment (or no business at all): no session is opened.
    const live = await post(url, { sign_in: "presence", merchant_id: merchant.merchant_id, environment: "live" });
    expect(live.status).toBe(404);
    expect(live.headers.getSetCookie()).toEqual([]);
    const unknown = await post(url, { sign_in: "presence", merchant_id: crypto.randomUUID(), environment: "test" });
    expect(unknown.status).toBe(404);
    const malformed = await post(url, { sign_in: "presence", merchant_id: "x'; drop", environment: "test" });
    expect(malformed.status).toBe(404);
  }, 240_000);

  it("refuses a sign-in whose capture is more than ten minutes old (on the service's clock)", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { url } = await authorizationRequest();
    const started = await startPresence(url, merchant.merchant_id);
    expect((await proveOnScreen(started.sessionToken, owner)).body.state).toBe("completed");
    const later = new Date(Date.now() + 11 * 60_000).toISOString();
    const stale = await fetch(url, {
      method: "POST",
      body: new URLSearchParams({ presence_session: started.sessionId }),
      headers: { cookie: started.cookie, "x-test-now": later },
    });
    expect(stale.status).toBe(401);
  }, 240_000);
});

describe("mcp: the consent screen speaks the owner's language", () => {
  it.each([
    ["en", "Allow Shopping agent to act for", "Deny"],
    ["pt-BR", "Permitir que Shopping agent aja por", "Recusar"],
    ["es", "¿Permitir que Shopping agent actúe por", "Rechazar"],
  ])(
    "%s",
    async (locale, title, deny) => {
      const { owner } = await ownedMerchant();
      const { url } = await authorizationRequest();
      const page = await fetch(url, { headers: { authorization: `Bearer ${owner.session_token}`, "accept-language": locale } });
      const html = await page.text();
      expect(page.status, html).toBe(200);
      expect(page.headers.get("content-language")).toBe(locale);
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(html).toContain(`lang="${locale}"`);
      expect(html).toContain(title);
      expect(html).toContain(`value="deny">${deny}<`);
    },
    120_000,
  );
});
