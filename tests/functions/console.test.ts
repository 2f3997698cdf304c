/**
 * The merchant's console over HTTP (functions/console; docs/decisions.md, D-620 to D-624): an owner
 * signs in by proving presence on the hosted screen, holds a `__Host-console-session` cookie with
 * idle and absolute ends, and every page renders and every action works through shared/management
 * with the owner as the audit log's actor. Refused: no session, an ended, expired or signed-out
 * one, another site's request, a missing or wrong CSRF token, another merchant's object.
 */
import { describe, expect, it } from "vitest";
import { escapeHtml } from "../../shared/edge/pages";
import { type Locale, type MessageKey, translate } from "../../shared/kernel/i18n";
import { addOwner } from "../../shared/merchants/accounts";
import { ownedMerchant } from "../harness/agents";
import { ConsoleBrowser, checkOf, shownOnce, signIn } from "../harness/console";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { mandateFixture } from "../harness/mandates";
import { proveOnScreen } from "../harness/me";
import { v1 } from "../harness/resource-api";
import { completeCaptureTheme, completeMandateTheme, TEST_FONT } from "../harness/theme-fixtures";

const audit = (merchantId: string) =>
  testDb()<{ action: string; actor_kind: string; actor_id: string; client_ip: string | null }[]>`
    select action, actor_kind, actor_id, client_ip from private.management_audit_events
    where merchant_id = ${merchantId}::uuid order by occurred_at, id`;

const minutes = (n: number) => n * 60_000;

const PREVIEW_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><title>Corner</title>' +
  '<rect width="64" height="64" rx="14" fill="#0f766e"/></svg>';

/** The preview's complete capture theme: the uploaded logo and font. */
const previewTheme = (logo: string, font: string) =>
  completeCaptureTheme({ logo, font, brand: "Corner Shop", family: "Corner Mono", primary: "174 77% 26%" });

describe("console: sign-in by presence and the owner's session", () => {
  it("signs an owner in once, in a __Host- cookie, and names them in the audit log", async () => {
    const { merchant, owner } = await ownedMerchant();
    const browser = new ConsoleBrowser();
    const signInPage = await browser.page("/");
    expect(signInPage.status).toBe(200);
    expect(signInPage.text).toContain('data-view="sign-in"');
    expect(signInPage.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'self'/);
    expect(signInPage.headers.get("content-security-policy")).toContain("form-action 'self'");
    // A form's POST must carry its origin: under no-referrer a browser sends Origin: null (D-623).
    expect(signInPage.headers.get("referrer-policy")).toBe("same-origin");

    const started = await browser.form("/sign-in", { merchant_id: merchant.merchant_id, environment: "test" }, { csrf: null });
    expect(started.status, started.text).toBe(200);
    expect(started.headers.getSetCookie()[0]).toMatch(
      /^__Host-console-sign-in=[A-Za-z0-9_-]{43}; Max-Age=900; Path=\/; Secure; HttpOnly; SameSite=Strict$/,
    );
    const check = checkOf(started);
    expect(check.url).toContain("/functions/v1/hosted-capture/");

    // Before the screen is done: the check's page again, nothing signed in.
    const early = await browser.form("/sign-in/finish", { session_id: check.sessionId, url: check.url }, { csrf: null });
    expect(early.status).toBe(200);
    expect(early.text).toContain('data-view="check"');
    expect(checkOf(early).url, "the pending page still opens the same screen").toBe(check.url);
    expect(early.headers.getSetCookie()).toEqual([]);

    expect((await proveOnScreen(check.url, owner)).body.state).toBe("completed");
    // Another browser cannot finish it.
    const thief = new ConsoleBrowser();
    const stolen = await thief.form("/sign-in/finish", { session_id: check.sessionId }, { csrf: null });
    expect(stolen.text).toContain("(unknown)");
    expect(stolen.headers.getSetCookie()).toEqual([]);

    const finished = await browser.form("/sign-in/finish", { session_id: check.sessionId }, { csrf: null });
    expect(finished.status, finished.text).toBe(303);
    expect(finished.headers.get("location")).toBe("/functions/v1/console/");
    const [session, cleared] = finished.headers.getSetCookie();
    expect(session).toMatch(/^__Host-console-session=ost_[A-Za-z0-9_-]{43}; Max-Age=28800; Path=\/; Secure; HttpOnly; SameSite=Strict$/);
    expect(cleared).toMatch(/^__Host-console-sign-in=; Max-Age=0;/);

    // Used once: the same sign-in again (its cookie replayed) signs nobody in.
    const replay = new ConsoleBrowser();
    replay.cookies.set("__Host-console-sign-in", started.headers.getSetCookie()[0].split(";")[0].split("=")[1]);
    expect((await replay.form("/sign-in/finish", { session_id: check.sessionId }, { csrf: null })).text).toContain("(used)");

    const overview = await browser.page("/");
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('id="mode"');
    expect(overview.text).toContain("Test mode");
    expect(overview.text).toContain('<svg class="chart"');
    expect(overview.headers.get("cache-control")).toBe("no-store");
    expect(await audit(merchant.merchant_id)).toContainEqual(
      expect.objectContaining({ action: "console.signed_in", actor_kind: "owner", actor_id: owner.subject_ref }),
    );
  }, 240_000);

  it("signs in only an owner of the merchant in that environment", async () => {
    const { merchant } = await ownedMerchant();
    const customer = await enrollStranger(merchant.keys.pk_test);
    const browser = new ConsoleBrowser();
    const started = await browser.form("/sign-in", { merchant_id: merchant.merchant_id, environment: "test" }, { csrf: null });
    const check = checkOf(started);
    expect((await proveOnScreen(check.url, customer)).body.state).toBe("completed");
    const refused = await browser.form("/sign-in/finish", { session_id: check.sessionId }, { csrf: null });
    expect(refused.text).toContain("(not_owner)");
    expect(refused.headers.getSetCookie()).toEqual([]);

    // No owner in live, no merchant at all, not an id: nothing opened.
    for (const [merchant_id, environment] of [
      [merchant.merchant_id, "live"],
      [crypto.randomUUID(), "test"],
      ["x'; drop", "test"],
    ]) {
      expect(errorOf(await browser.form("/sign-in", { merchant_id, environment }, { csrf: null }))).toEqual({
        status: 404,
        code: "not_found",
      });
    }
  }, 240_000);

  it("ends the session idle after 15 minutes and 8 hours after sign-in, whatever the activity", async () => {
    const { merchant, owner } = await ownedMerchant();
    const t0 = new Date();
    const idle = new ConsoleBrowser();
    await signIn(idle, merchant.merchant_id, owner, t0);
    expect((await idle.page("/keys", { now: new Date(t0.getTime() + minutes(14)) })).text).toContain('aria-current="page"');
    const late = await idle.page("/keys", { now: new Date(t0.getTime() + minutes(14 + 15)) });
    expect(late.text).toContain('data-view="sign-in"');
    expect(late.text).toContain("Your session has ended");
    expect(errorOf(await idle.form("/keys", { kind: "secret" }, { now: new Date(t0.getTime() + minutes(14 + 15)) }))).toEqual({
      status: 401,
      code: "OWNER_SESSION_EXPIRED",
    });

    const busy = new ConsoleBrowser();
    await signIn(busy, merchant.merchant_id, owner, t0);
    let at = t0.getTime();
    while (at + minutes(14) < t0.getTime() + minutes(8 * 60)) {
      at += minutes(14);
      expect((await busy.page("/owners", { now: new Date(at) })).text).not.toContain('data-view="sign-in"');
    }
    expect((await busy.page("/owners", { now: new Date(t0.getTime() + minutes(8 * 60)) })).text).toContain('data-view="sign-in"');
  }, 240_000);

  it("signs out: the cookie replayed is refused; everywhere ends every console session of the owner", async () => {
    const { merchant, owner } = await ownedMerchant();
    const first = new ConsoleBrowser();
    const second = new ConsoleBrowser();
    const third = new ConsoleBrowser();
    for (const b of [first, second, third]) await signIn(b, merchant.merchant_id, owner);
    const kept = first.cookies.get("__Host-console-session") ?? "";

    const out = await first.form("/sign-out");
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/functions/v1/console/?signed_out=1");
    expect(first.cookies.has("__Host-console-session")).toBe(false);
    const replayed = new ConsoleBrowser();
    replayed.cookies.set("__Host-console-session", kept);
    replayed.csrf = first.csrf;
    expect((await replayed.page("/keys")).text).toContain('data-view="sign-in"');
    expect(errorOf(await replayed.form("/keys", { kind: "secret" }))).toEqual({ status: 401, code: "OWNER_SESSION_REQUIRED" });
    // The second browser is still in.
    expect((await second.page("/keys")).text).not.toContain('data-view="sign-in"');

    expect((await second.form("/sign-out", { everywhere: "1" })).status).toBe(303);
    expect((await third.page("/keys")).text).toContain('data-view="sign-in"');
    const actions = (await audit(merchant.merchant_id)).map((a) => a.action);
    expect(actions).toContain("console.signed_out");
    expect(actions).toContain("console.signed_out_everywhere");
  }, 240_000);

  it("offers the owner's other merchants in a switcher; switching is a sign-in of its own there (D-622)", async () => {
    const { merchant: shop, owner } = await ownedMerchant();
    const travel = await merchantFactory("Travel desk");
    const atTravel = await enrollStranger(travel.keys.pk_test, owner.face);
    await addOwner(testDb(), travel.merchant_id, atTravel.subject_ref, new Date());
    const browser = new ConsoleBrowser();
    const overview = await signIn(browser, shop.merchant_id, owner);
    expect(overview.text).toContain("Travel desk (Test)");
    expect(overview.text).toContain(`name="merchant_id" value="${travel.merchant_id}"`);
    const atShop = browser.cookies.get("__Host-console-session");

    // The switch opens a check at the other merchant; the face proves it there, under that merchant's pseudonym.
    const started = await browser.form("/sign-in", { merchant_id: travel.merchant_id, environment: "test" });
    const check = checkOf(started);
    expect((await proveOnScreen(check.url, atTravel)).body.state).toBe("completed");
    expect((await browser.form("/sign-in/finish", { session_id: check.sessionId }, { csrf: null })).status).toBe(303);
    expect(browser.cookies.get("__Host-console-session")).not.toBe(atShop);
    const there = await browser.page("/keys");
    expect(there.text).toContain("at Travel desk");
    expect(await audit(travel.merchant_id)).toContainEqual(
      expect.objectContaining({ action: "console.signed_in", actor_id: atTravel.subject_ref }),
    );
  }, 240_000);

  it("refuses another site's request, a missing or wrong CSRF token, and another merchant's objects", async () => {
    const { merchant, owner } = await ownedMerchant();
    const other = await merchantFactory();
    const browser = new ConsoleBrowser();
    await signIn(browser, merchant.merchant_id, owner);

    const crossSite: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "https://evil.example" },
    ];
    for (const headers of crossSite) {
      expect(errorOf(await browser.form("/keys", { kind: "secret" }, { headers }))).toEqual({ status: 403, code: "CROSS_SITE_REQUEST" });
      expect(errorOf(await browser.call("/keys", { headers }))).toEqual({ status: 403, code: "CROSS_SITE_REQUEST" });
    }
    expect(errorOf(await browser.form("/keys", { kind: "secret" }, { csrf: null }))).toEqual({ status: 403, code: "CSRF_TOKEN_INVALID" });
    expect(errorOf(await browser.form("/keys", { kind: "secret" }, { csrf: "x".repeat(43) }))).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });
    // Another owner's token (their own session's) is not this session's.
    const { merchant: elsewhere, owner: stranger } = await ownedMerchant();
    const theirs = new ConsoleBrowser();
    await signIn(theirs, elsewhere.merchant_id, stranger);
    expect(errorOf(await browser.form("/keys", { kind: "secret" }, { csrf: theirs.csrf }))).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });
    // The JSON upload takes the token in its header only.
    expect(errorOf(await browser.call("/theme/assets", { body: { kind: "logo", content_type: "image/png", data: "AAAA" } }))).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });

    // Another merchant's key and endpoint are unknown here.
    const keys = await v1("/api_keys", { key: other.keys.sk_test });
    const otherKey = keys.body.data[0].id as string;
    expect(errorOf(await browser.form(`/keys/${otherKey}/revoke`))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await browser.form(`/keys/${otherKey}/roll`, { overlap_hours: "1" }))).toEqual({ status: 404, code: "not_found" });
    const endpoint = await v1("/webhook_endpoints", {
      key: other.keys.sk_test,
      body: { url: "https://example.com/hook" },
      headers: { "idempotency-key": `k-${crypto.randomUUID()}` },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    expect(errorOf(await browser.call(`/webhooks/${endpoint.body.id}`))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await browser.form(`/webhooks/${endpoint.body.id}/disable`))).toEqual({ status: 404, code: "not_found" });
    const { mandate } = await mandateFixture();
    expect(errorOf(await browser.form(`/mandates/${mandate.mandate_id}/revoke`))).toEqual({ status: 404, code: "not_found" });
    expect((await v1(`/mandates/${mandate.mandate_id}`, { key: other.keys.sk_test })).status).toBe(404);
  }, 240_000);
});

describe("console: pages and actions, audited with the owner as actor", () => {
  it("renders every page, in three languages", async () => {
    const { merchant, owner } = await ownedMerchant();
    const browser = new ConsoleBrowser();
    await signIn(browser, merchant.merchant_id, owner);
    const pages: [string, string][] = [
      ["/", "Overview"],
      ["/keys", "API keys"],
      ["/webhooks", "Webhooks"],
      ["/mandates", "Mandates"],
      ["/sessions", "Hosted sessions"],
      ["/receipts", "Receipts"],
      ["/consents", "Consents"],
      ["/theme", "Theme"],
      ["/owners", "Owners"],
      ["/audit", "Audit log"],
    ];
    for (const [route, heading] of pages) {
      const shown = await browser.page(route);
      expect(shown.status, `${route} ${shown.text}`).toBe(200);
      expect(shown.text, route).toContain(`<h1>${heading}</h1>`);
      expect(shown.text).not.toContain("<script>");
    }
    // A table's cells name their columns, for the cards it becomes at a phone's width; its roles keep it a table.
    const keys = (await browser.page("/keys")).text;
    expect(keys).toContain('<table role="table">');
    expect(keys).toMatch(/<td role="cell" data-label="[^"]+">/);
    expect((await browser.page("/keys", { headers: { "accept-language": "pt-BR" } })).text).toContain("<h1>Chaves de API</h1>");
    const es = await browser.page("/audit", { headers: { "accept-language": "es" } });
    expect(es.text).toContain("<h1>Registro de auditoría</h1>");
    expect(es.headers.get("content-language")).toBe("es");
  }, 240_000);

  it("creates, rolls and revokes keys; adds, changes, tests and rotates an endpoint; resends a delivery", async () => {
    const { merchant, owner } = await ownedMerchant();
    const browser = new ConsoleBrowser();
    await signIn(browser, merchant.merchant_id, owner);

    const created = await browser.form("/keys", { name: "Dashboard", kind: "secret", scopes: ["management.read"] });
    expect(created.status, created.text).toBe(200);
    const key = shownOnce(created, "new-key");
    expect(key).toMatch(/^sk_test_/);
    expect((await v1("/api_keys", { key })).status).toBe(200);
    expect((await browser.page("/keys")).text).not.toContain(key);

    const listed = await v1("/api_keys", { key });
    const id = listed.body.data.find((k: { name: string | null }) => k.name === "Dashboard").id as string;
    const rolled = await browser.form(`/keys/${id}/roll`, { overlap_hours: "0" });
    const successor = shownOnce(rolled, "new-key");
    expect(successor).toMatch(/^sk_test_/);
    expect(successor).not.toBe(key);
    expect((await v1("/api_keys", { key })).status).toBe(401);
    const successorId = (await v1("/api_keys", { key: successor })).body.data.find(
      (k: { name: string | null; status: string }) => k.name === "Dashboard" && k.status === "active",
    ).id as string;
    const revoked = await browser.form(`/keys/${successorId}/revoke`);
    expect(revoked.status).toBe(303);
    expect((await v1("/api_keys", { key: successor })).status).toBe(401);
    expect(errorOf(await browser.form(`/keys/${successorId}/roll`, { overlap_hours: "25" }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });

    const added = await browser.form("/webhooks", { url: "https://example.com/hooks", event_types: "" });
    expect(added.status, added.text).toBe(200);
    expect(shownOnce(added, "new-secret")).toMatch(/^whsec_/);
    const endpointId = /\/webhooks\/(we_[0-9a-f]{32})\/test/.exec(added.text)?.[1] ?? "";
    expect(errorOf(await browser.form("/webhooks", { url: "http://example.com/hooks" }))).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(
      (await browser.form(`/webhooks/${endpointId}`, { url: "https://example.com/v2", event_types: "mandate.revoked, webhook.test" }))
        .status,
    ).toBe(303);
    expect((await browser.form(`/webhooks/${endpointId}/disable`)).status).toBe(303);
    expect((await browser.page(`/webhooks/${endpointId}`)).text).toContain('id="endpoint-status">disabled');
    expect((await browser.form(`/webhooks/${endpointId}/enable`)).status).toBe(303);
    const rotated = await browser.form(`/webhooks/${endpointId}/rotate`);
    expect(shownOnce(rotated, "new-secret")).toMatch(/^whsec_/);
    expect((await browser.form(`/webhooks/${endpointId}/test`)).status).toBe(303);
    const detail = await browser.page(`/webhooks/${endpointId}`);
    // Both secrets sign during the overlap: each by its hint, the old one with the hour it stops, in the page's words.
    expect(detail.text).toContain("Signing secrets");
    expect(detail.text.match(/<code>whsec_[^<]*<\/code>/g)).toHaveLength(2);
    expect(detail.text).toMatch(/<\/code> \(signs until [^)]+\)/);
    const deliveryId = /\/deliveries\/(whd_[0-9a-f]{32})"/.exec(detail.text)?.[1] ?? "";
    expect(deliveryId).not.toBe("");
    const delivery = await browser.page(`/deliveries/${deliveryId}`);
    expect(delivery.text).toContain("webhook.test");
    expect(delivery.text).toContain('id="payload"');
    const resent = await browser.form(`/deliveries/${deliveryId}/resend`);
    expect(resent.status).toBe(303);
    expect(resent.headers.get("location")).toBe(`/functions/v1/console/webhooks/${endpointId}?done=resent`);

    const events = await audit(merchant.merchant_id);
    const byOwner = events.filter((e) => e.actor_kind === "owner" && e.actor_id === owner.subject_ref).map((e) => e.action);
    for (const action of [
      "api_key.created",
      "api_key.rolled",
      "api_key.revoked",
      "webhook_endpoint.created",
      "webhook_endpoint.updated",
      "webhook_endpoint.disabled",
      "webhook_endpoint.enabled",
      "webhook_endpoint.secret_rotated",
      "webhook_endpoint.tested",
      "webhook_delivery.replayed",
    ])
      expect(byOwner, action).toContain(action);
    expect(events.filter((e) => e.actor_kind === "owner").every((e) => e.client_ip === browser.from)).toBe(true);
    const auditPage = await browser.page("/audit");
    expect(auditPage.text).toContain("api_key.rolled");
    const exported = await browser.call("/audit/export");
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-disposition")).toContain("attachment");
    expect(exported.body.data.some((e: { actor: { id: string } }) => e.actor.id === owner.subject_ref)).toBe(true);
  }, 240_000);

  it("revokes a mandate, invites and removes an owner, drafts and publishes a theme with an uploaded logo", async () => {
    const { merchant, person: owner, mandate } = await mandateFixture();
    await testDb()`insert into private.merchant_owners (merchant_id, identity_id, environment, subject_ref, added_at)
      select ${merchant.merchant_id}::uuid, identity_id, 'test', subject_ref, now() from private.subject_refs
      where merchant_id = ${merchant.merchant_id}::uuid and subject_ref = ${owner.subject_ref}`;
    const browser = new ConsoleBrowser();
    await signIn(browser, merchant.merchant_id, owner);

    const found = await browser.page(`/mandates?granted_by=${owner.subject_ref}`);
    expect(found.text).toContain(mandate.mandate_id);
    expect((await browser.page(`/mandates/${mandate.mandate_id}`)).text).toContain('id="mandate-status">active');
    const revoked = await browser.form(`/mandates/${mandate.mandate_id}/revoke`, { reason: "Owner asked" });
    expect(revoked.status, revoked.text).toBe(303);
    expect((await browser.page(`/mandates/${mandate.mandate_id}`)).text).toContain('id="mandate-status">revoked');

    const invitee = await enrollStranger(merchant.keys.pk_test);
    const invited = await browser.form("/owners/invite", { subject_ref: invitee.subject_ref, return_url: "https://shop.example/owners" });
    expect(invited.status, invited.text).toBe(200);
    expect(shownOnce(invited, "invitation-url")).toContain("/functions/v1/hosted-capture/");
    // The last owner cannot remove themselves.
    expect(errorOf(await browser.form(`/owners/${owner.subject_ref}/remove`))).toEqual({ status: 409, code: "LAST_OWNER" });

    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      "base64",
    ).toString("base64");
    const uploaded = await browser.call("/theme/assets", {
      body: { kind: "logo", content_type: "image/png", data: png },
      headers: { "x-csrf-token": browser.csrf },
    });
    expect(uploaded.status, uploaded.text).toBe(201);
    expect((await browser.page("/theme")).text).toContain(uploaded.body.id);
    const draft = JSON.stringify({ brand_name: "Corner shop", logo_square_url: uploaded.body.id });
    expect(errorOf(await browser.form("/theme/draft", { surface: "capture", theme: "{not json", intent: "save" }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
    const validated = await browser.form("/theme/draft", { surface: "capture", theme: draft, intent: "validate" });
    expect(validated.status).toBe(200);
    expect(validated.text).toContain('class="card error"');
    const saved = await browser.form("/theme/draft", { surface: "capture", theme: draft, intent: "save" });
    expect(saved.status, saved.text).toBe(200);
    expect((await v1("/themes/capture", { key: merchant.keys.sk_test })).body.draft.theme).toMatchObject({ brand_name: "Corner shop" });
    // An incomplete draft is never published (D-525).
    expect(errorOf(await browser.form("/theme/draft", { surface: "capture", theme: draft, intent: "publish" }))).toEqual({
      status: 422,
      code: "THEME_INVALID",
    });

    const actions = (await audit(merchant.merchant_id)).filter((e) => e.actor_id === owner.subject_ref).map((e) => e.action);
    for (const action of ["mandate.revoked", "owner.invited", "theme_asset.uploaded", "theme.drafted"])
      expect(actions, action).toContain(action);
  }, 240_000);
  it("previews the draft on the hosted screen's own page, light and dark, to a signed-in owner of that merchant only (D-670)", async () => {
    const { merchant, owner } = await ownedMerchant();
    const browser = new ConsoleBrowser();
    await signIn(browser, merchant.merchant_id, owner);
    const upload = async (body: Record<string, string>) => {
      const answer = await browser.call("/theme/assets", { body, headers: { "x-csrf-token": browser.csrf } });
      expect(answer.status, answer.text).toBe(201);
      return answer.body as { id: string; url: string; stylesheet_url: string | null };
    };
    const logo = await upload({ kind: "logo", content_type: "image/svg+xml", data: Buffer.from(PREVIEW_LOGO).toString("base64") });
    const font = await upload({ kind: "font", content_type: "font/woff2", data: TEST_FONT.toString("base64"), family: "Corner Mono" });
    // Without a draft there is nothing to preview.
    expect((await browser.page("/theme")).text).not.toContain("<iframe");
    expect(errorOf(await browser.page("/theme/preview?surface=capture&scheme=light"))).toEqual({ status: 404, code: "not_found" });

    const theme = JSON.stringify(previewTheme(logo.id, font.id));
    expect((await browser.form("/theme/draft", { surface: "capture", theme, intent: "save" })).status).toBe(200);
    const editor = await browser.page("/theme");
    expect(editor.headers.get("content-security-policy")).toContain("frame-src 'self'");
    expect(editor.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    for (const scheme of ["light", "dark"]) {
      expect(editor.text).toContain(`<iframe src="/functions/v1/console/theme/preview?surface=capture&amp;scheme=${scheme}"`);
    }

    const light = await browser.page("/theme/preview?surface=capture&scheme=light");
    expect(light.status, light.text).toBe(200);
    const policy = light.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("frame-ancestors 'self'");
    expect(policy).not.toContain("script-src");
    // The hosted screen's markup and style sheet, its introduction shown, no script: the draft's logo, name and fonts written in.
    expect(light.text).toContain('<link rel="stylesheet" href="/functions/v1/hosted-capture/assets/screen.css">');
    expect(light.text).toContain('<body class="hosted" data-state="intro">');
    expect(light.text).toContain('<section data-view="intro">');
    expect(light.text).toContain(`<img id="logo" alt="" width="40" height="40" src="${logo.url}">`);
    expect(light.text).toContain('<span id="brand-name">Corner Shop</span>');
    expect(light.text).toContain("Sign in to Corner Shop");
    expect(light.text).toContain(`<link rel="stylesheet" href="${font.stylesheet_url}">`);
    expect(light.text).not.toContain("session.js");
    expect(light.text).toMatch(/href="\/functions\/v1\/console\/theme\/preview\.css\?surface=capture&(?:amp|#38);scheme=light"/);

    // Each scheme's colours as the hosted screen derives them (shared/lib/screen-theme.ts): drawn light, mirrored for dark.
    const lightCss = await browser.page("/theme/preview.css?surface=capture&scheme=light");
    expect(lightCss.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(lightCss.text).toContain("color-scheme: light;");
    expect(lightCss.text).toContain("--primary: 174 77% 26%;");
    expect(lightCss.text).toContain("--background: 0 0% 100%;");
    expect(lightCss.text).toContain('--font-body: "Corner Mono", monospace;');
    expect(lightCss.text).toContain("--radius-lg: 16px;");
    const darkCss = await browser.page("/theme/preview.css?surface=capture&scheme=dark");
    expect(darkCss.text).toContain("color-scheme: dark;");
    expect(darkCss.text).toContain("--background: 0 0% 0%;");
    expect(darkCss.text).toContain("--primary: 174 77% 74%;");
    expect(errorOf(await browser.page("/theme/preview?surface=capture&scheme=sepia"))).toEqual({ status: 400, code: "INVALID_INPUT" });

    // Signed out, or signed in to another merchant: neither the draft's logo nor its colours.
    const nobody = new ConsoleBrowser();
    const anonymous = await nobody.page("/theme/preview?surface=capture&scheme=light");
    expect(anonymous.text).toContain('data-view="sign-in"');
    expect(anonymous.text).not.toContain(logo.id);
    expect(errorOf(await nobody.page("/theme/preview.css?surface=capture&scheme=light"))).toEqual({
      status: 401,
      code: "OWNER_SESSION_REQUIRED",
    });
    const { merchant: elsewhere, owner: stranger } = await ownedMerchant();
    const theirs = new ConsoleBrowser();
    await signIn(theirs, elsewhere.merchant_id, stranger);
    expect(errorOf(await theirs.page("/theme/preview?surface=capture&scheme=light"))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await theirs.page("/theme/preview.css?surface=capture&scheme=dark"))).toEqual({ status: 404, code: "not_found" });

    // The mandate surface on its own introduction (D-701): a mandate session's, as the hosted screen words it, with example terms.
    const mandateTheme = completeMandateTheme({
      logo: logo.id,
      font: font.id,
      brand: "Corner Agents",
      family: "Corner Mono",
      primary: "262 83% 40%",
    });
    const saved = await browser.form("/theme/draft", { surface: "mandate", theme: JSON.stringify(mandateTheme), intent: "save" });
    expect(saved.status, saved.text).toBe(200);
    const mandateEditor = await browser.page("/theme?surface=mandate");
    expect(mandateEditor.text).toContain("As the hosted screen opens a mandate for an agent");
    for (const scheme of ["light", "dark"]) {
      expect(mandateEditor.text).toContain(`<iframe src="/functions/v1/console/theme/preview?surface=mandate&amp;scheme=${scheme}"`);
      const frame = await browser.page(`/theme/preview?surface=mandate&scheme=${scheme}`);
      expect(frame.status, frame.text).toBe(200);
      expect(frame.text).toContain('<span id="brand-name">Corner Agents</span>');
      expect(frame.text).toContain('<h1 id="intro-title" tabindex="-1">Allow Shopping assistant to act for you</h1>');
      expect(frame.text).not.toContain("Sign in to Corner");
      expect(frame.text).toMatch(
        /<dl id="intro-terms" class="terms"><dt>Agent<\/dt><dd>Shopping assistant<\/dd><dt>It may<\/dt><dd>Make purchases<\/dd><dt>Limit<\/dt><dd>5 actions per month<\/dd><dt>Until<\/dt><dd>[^<]+<\/dd><\/dl>/,
      );
      expect(frame.text).toMatch(new RegExp(`preview\\.css\\?surface=mandate&(?:amp|#38);scheme=${scheme}"`));
      const css = await browser.page(`/theme/preview.css?surface=mandate&scheme=${scheme}`);
      expect(css.text).toContain(`color-scheme: ${scheme};`);
      expect(css.text).toContain("--primary: 262 83% 40%;");
      expect(css.text).toContain(scheme === "light" ? "--background: 0 0% 100%;" : "--background: 0 0% 0%;");
    }
    // In Portuguese, the mandate's words of the screen's own catalogue.
    const pt = await browser.page("/theme/preview?surface=mandate&scheme=light", { headers: { "accept-language": "pt-BR" } });
    expect(pt.text).toContain(
      escapeHtml(translate("pt-BR", "screen.mode.mandate.title", { agent: translate("pt-BR", "console.theme.example_agent") })),
    );
    // The capture surface's preview still shows the sign-in's, and no terms.
    const capture = await browser.page("/theme/preview?surface=capture&scheme=dark");
    expect(capture.text).toContain("Sign in to Corner Shop");
    expect(capture.text).toContain('<dl id="intro-terms" class="terms" hidden></dl>');
  }, 240_000);
});

/** What a browser's navigation and form submission send as Accept. */
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const LOCALES: Locale[] = ["en", "pt-BR", "es"];
const unescapeHtml = (text: string) => text.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, "&");

describe("console: a refused request is a page in the owner's words, with the way back (D-700)", () => {
  it("answers each kind of refusal with a page in three languages, its status kept; JSON to a client asking for it", async () => {
    const { merchant, owner } = await ownedMerchant();
    const browser = new ConsoleBrowser();
    await signIn(browser, merchant.merchant_id, owner);
    // A key revoked: rolling it is refused as things stand.
    expect((await browser.form("/keys", { kind: "secret", name: "Retired" })).status).toBe(200);
    const retired = (await v1("/api_keys", { key: merchant.keys.sk_test })).body.data.find((k: { name?: string }) => k.name === "Retired");
    expect((await browser.form(`/keys/${retired.id}/revoke`)).status).toBe(303);
    const other = await merchantFactory();
    const otherKey = (await v1("/api_keys", { key: other.keys.sk_test })).body.data[0].id as string;
    const signedOut = new ConsoleBrowser();
    const base = "/functions/v1/console";

    type Refusal = {
      send: (headers: Record<string, string>) => ReturnType<ConsoleBrowser["form"]>;
      status: number;
      code: string;
      kind: string;
      back: string;
    };
    const refusals: Refusal[] = [
      {
        // Bad input: a webhook at a plain-http URL; the way back keeps what was typed.
        send: (headers) => browser.form("/webhooks", { url: "http://shop.example/hook", event_types: "mandate.revoked" }, { headers }),
        status: 400,
        code: "INVALID_INPUT",
        kind: "input",
        back: `${base}/webhooks?url=http%3A%2F%2Fshop.example%2Fhook&event_types=mandate.revoked`,
      },
      {
        send: (headers) => browser.form(`/keys/${retired.id}/roll`, { overlap_hours: "1" }, { headers }),
        status: 409,
        code: "KEY_INACTIVE",
        kind: "refused",
        back: `${base}/keys`,
      },
      {
        // A form whose token is not this session's (opened before a sign-in again): what was typed kept.
        send: (headers) => browser.form("/keys", { kind: "publishable", name: "Kiosk" }, { headers, csrf: "x".repeat(43) }),
        status: 403,
        code: "CSRF_TOKEN_INVALID",
        kind: "csrf",
        back: `${base}/keys?name=Kiosk&kind=publishable`,
      },
      {
        send: (headers) => browser.form(`/owners/${owner.subject_ref}/remove`, {}, { headers }),
        status: 409,
        code: "LAST_OWNER",
        kind: "last_owner",
        back: `${base}/owners`,
      },
      {
        send: (headers) => browser.form(`/keys/${otherKey}/revoke`, {}, { headers }),
        status: 404,
        code: "not_found",
        kind: "not_found",
        back: `${base}/keys`,
      },
      {
        send: (headers) => signedOut.form("/keys", { kind: "secret", name: "Late" }, { headers, csrf: null }),
        status: 401,
        code: "OWNER_SESSION_REQUIRED",
        kind: "session",
        back: `${base}/`,
      },
      {
        send: (headers) =>
          browser.form("/keys", { kind: "secret", name: "Forged" }, { headers: { ...headers, origin: "https://evil.example" } }),
        status: 403,
        code: "CROSS_SITE_REQUEST",
        kind: "cross_site",
        back: `${base}/`,
      },
    ];
    for (const refusal of refusals) {
      const asJson = await refusal.send({ accept: "application/json" });
      expect(errorOf(asJson), refusal.code).toEqual({ status: refusal.status, code: refusal.code });
      for (const locale of LOCALES) {
        const shown = await refusal.send({ accept: BROWSER_ACCEPT, "accept-language": locale });
        const what = `${refusal.code} in ${locale}`;
        expect(shown.status, what).toBe(refusal.status);
        expect(shown.headers.get("content-type"), what).toMatch(/^text\/html/);
        expect(shown.headers.get("content-language"), what).toBe(locale);
        expect(shown.headers.get("content-security-policy"), what).toMatch(/default-src 'none'; script-src 'self'/);
        expect(shown.text, what).not.toMatch(/<script(?![^>]*\bsrc=)/);
        expect(shown.text, what).toContain(`<html lang="${locale}">`);
        expect(shown.text, what).toContain(`data-problem="${refusal.kind}"`);
        expect(shown.text, what).toContain(escapeHtml(translate(locale, `console.problem.${refusal.kind}` as MessageKey)));
        expect(shown.text, what).toMatch(new RegExp(`<code>${refusal.code}</code> · <code>[0-9a-f-]{36}</code>`));
        expect(shown.text, what).toMatch(/<div class="card error" id="problem" role="alert" tabindex="-1" autofocus>/);
        const back = unescapeHtml(/id="problem-back" href="([^"]+)"/.exec(shown.text)?.[1] ?? "");
        expect(back, what).toBe(refusal.back);
      }
    }
    // Nothing was changed by any of them: no key named by the refused forms, the owner still there.
    const names = (await v1("/api_keys", { key: merchant.keys.sk_test })).body.data.map((k: { name?: string }) => k.name);
    expect(names).not.toContain("Kiosk");
    expect(names).not.toContain("Forged");

    // The way back fills the form in again with what was typed.
    const webhooks = await browser.page("/webhooks?url=http%3A%2F%2Fshop.example%2Fhook&event_types=mandate.revoked");
    expect(webhooks.text).toContain('placeholder="https://" value="http://shop.example/hook"');
    expect(webhooks.text).toContain('value="mandate.revoked"');
    const keys = await browser.page("/keys?name=Kiosk&kind=publishable");
    expect(keys.text).toContain('name="name" maxlength="80" value="Kiosk"');
    expect(keys.text).toContain('<option value="publishable" selected>');

    // A page that fails to load leads back to the console page the owner came from, on this origin only.
    const missing = await browser.page(`/webhooks/${crypto.randomUUID()}`, {
      headers: { accept: BROWSER_ACCEPT, referer: "http://localhost/functions/v1/console/webhooks" },
    });
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('data-problem="not_found"');

    // A theme draft refused comes back on the theme page, the draft kept in the editor.
    for (const locale of LOCALES) {
      const draft = await browser.form(
        "/theme/draft",
        { surface: "capture", theme: '{"brand_name": "Half', intent: "save" },
        {
          headers: { accept: BROWSER_ACCEPT, "accept-language": locale },
        },
      );
      expect(draft.status).toBe(400);
      expect(draft.headers.get("content-language")).toBe(locale);
      expect(draft.text).toContain('id="problem" role="alert"');
      expect(draft.text).toContain("<code>INVALID_INPUT</code>");
      expect(draft.text).toContain(`spellcheck="false">${escapeHtml('{"brand_name": "Half')}</textarea>`);
    }
    expect(errorOf(await browser.form("/theme/draft", { surface: "capture", theme: "{", intent: "save" }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
  }, 240_000);
});
