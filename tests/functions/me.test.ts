/**
 * The person's own page over HTTP (functions/me; docs/decisions.md, D-465 to D-467): a person
 * enrolled at two merchants signs in by proving presence on the hosted screen, sees their mandates
 * at both, and revokes; every operation refused without the session, for another person's session,
 * an expired or replayed one, and a cross-site request.
 */
import { describe, expect, it } from "vitest";
import { ME_ROUTES } from "../../shared/contracts/me";
import { disclose, discloseBody } from "../harness/consent";
import { seedDevice } from "../harness/devices";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { enrollStranger, transact } from "../harness/identity";
import { consume, issue, mandateBody, presenceCapture, proofCapture } from "../harness/mandates";
import { Browser, identifies, identifyingRows, NOTHING_IDENTIFYING, proveOnScreen, signIn } from "../harness/me";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;
type Person = Awaited<ReturnType<typeof enrollStranger>>;

/** A mandate `person` grants an agent at `merchant` (purchase, 700 USD lifetime; `terms` override). */
async function grant(merchant: Merchant, person: Person, terms: Record<string, unknown> = {}) {
  const captureId = await proofCapture(merchant, person, { document: true, terms });
  const res = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
  expect(res.status, res.text).toBe(201);
  return res.body as { mandate_id: string; granted_to: string };
}

/** A person enrolled at two merchants (one identity, two pseudonyms), with a mandate to a different agent at each. */
async function personAtTwoMerchants() {
  const [shop, travel] = await Promise.all([merchantFactory("Corner shop"), merchantFactory("Travel desk")]);
  const person = await enrollStranger(shop.keys.pk_test);
  const atTravel = await enrollStranger(travel.keys.pk_test, person.face);
  const shopping = await grant(shop, person, { agent_display_name: "Shopping assistant" });
  const booking = await grant(travel, atTravel, { agent_display_name: "Trip planner" });
  return { shop, travel, person, atTravel, shopping, booking };
}

const events = (merchantId: string, type: string) =>
  testDb()`select data from private.outbox_events where merchant_id = ${merchantId}::uuid and type = ${type}`;

describe("me: sign-in by presence and the person's session", () => {
  it("signs in once through a merchant's link, in a __Host- cookie; sees every merchant's mandates, no pseudonym", async () => {
    const { shop, person, atTravel, shopping, booking } = await personAtTwoMerchants();
    const browser = new Browser();
    const started = await browser.call("/sign-in", { body: { merchant_id: shop.merchant_id, environment: "test" } });
    expect(started.status, started.text).toBe(201);
    expect(started.headers.get("cache-control")).toBe("no-store");
    expect(started.headers.getSetCookie()[0]).toMatch(
      /^__Host-me-sign-in=[A-Za-z0-9_-]{43}; Max-Age=900; Path=\/; Secure; HttpOnly; SameSite=Strict$/,
    );

    // Before the screen is done: pending, nothing used up.
    const early = await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id } });
    expect(errorOf(early)).toEqual({ status: 409, code: "SIGN_IN_PENDING" });
    expect((await proveOnScreen(started.body.url, person)).body.state).toBe("completed");

    // Another browser (no sign-in cookie, or its own) cannot finish it.
    const thief = new Browser();
    expect(errorOf(await thief.call("/sign-in/finish", { body: { session_id: started.body.session_id } }))).toEqual({
      status: 401,
      code: "SIGN_IN_FAILED",
    });

    const finished = await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id } });
    expect(finished.status, finished.text).toBe(200);
    expect(finished.body).toMatchObject({ signed_in: true, environment: "test" });
    const [sessionCookie, cleared] = finished.headers.getSetCookie();
    expect(sessionCookie).toMatch(/^__Host-me-session=pst_[A-Za-z0-9_-]{43}; Max-Age=1800; Path=\/; Secure; HttpOnly; SameSite=Strict$/);
    expect(cleared).toMatch(/^__Host-me-sign-in=; Max-Age=0;/);
    browser.csrf = finished.body.csrf_token;
    // Idle ten minutes, absolute thirty, both from the sign-in.
    expect(Date.parse(finished.body.expires_at) - Date.parse(finished.body.idle_expires_at)).toBe(20 * 60_000);

    // Single use: the sign-in cookie is cleared, and replayed it is refused as used.
    expect(browser.cookies.has("__Host-me-sign-in")).toBe(false);
    const replay = new Browser();
    replay.cookies.set("__Host-me-sign-in", started.headers.getSetCookie()[0].split(";")[0].split("=")[1]);
    const again = await replay.call("/sign-in/finish", { body: { session_id: started.body.session_id } });
    expect(again.body).toMatchObject({ code: "SIGN_IN_FAILED", reason: "used" });

    const listed = await browser.call("/mandates", { headers: { "accept-language": "pt-BR" } });
    expect(listed.status, listed.text).toBe(200);
    const byId = new Map(listed.body.mandates.map((m: Record<string, any>) => [m.mandate_id, m]));
    expect(byId.get(shopping.mandate_id)).toMatchObject({
      merchant: { merchant_id: shop.merchant_id, name: "Corner shop" },
      agent_display_name: "Shopping assistant",
      scopes: ["purchase"],
      scope_labels: ["Fazer compras"],
      ceiling: { kind: "amount", amount: 700, currency: "USD", period: "lifetime" },
      remaining: { amount: 700, currency: "USD" },
      status: "active",
      last_consumptions: [],
    });
    expect(byId.get(booking.mandate_id)).toMatchObject({ merchant: { name: "Travel desk" }, agent_display_name: "Trip planner" });
    // Neither merchant's pseudonym for the person is shown.
    expect(listed.text).not.toContain(person.subject_ref);
    expect(listed.text).not.toContain(atTravel.subject_ref);
    expect(listed.text).not.toContain("granted_by");
  }, 240_000);

  it("refuses a refused capture, a face the merchant does not know, an unknown merchant and a cross-site start", async () => {
    const shop = await merchantFactory();
    const stranger = await enrollStranger((await merchantFactory()).keys.pk_test);
    const browser = new Browser();
    const started = await browser.call("/sign-in", { body: { merchant_id: shop.merchant_id, environment: "test" } });
    const done = await proveOnScreen(started.body.url, stranger);
    expect(done.body).toMatchObject({ state: "failed" });
    const refused = await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id } });
    expect(refused.body).toMatchObject({ code: "SIGN_IN_FAILED", reason: "refused" });

    for (const merchant_id of [crypto.randomUUID(), "x'; drop"]) {
      expect(errorOf(await browser.call("/sign-in", { body: { merchant_id, environment: "test" } }))).toEqual({
        status: 404,
        code: "not_found",
      });
    }
    const crossSiteHeaders: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "https://evil.example" },
    ];
    for (const headers of crossSiteHeaders) {
      const crossSite = await browser.call("/sign-in", { body: { merchant_id: shop.merchant_id, environment: "test" }, headers });
      expect(errorOf(crossSite)).toEqual({ status: 403, code: "CROSS_SITE_REQUEST" });
      expect(crossSite.headers.getSetCookie()).toEqual([]);
    }
    for (const session_id of ["hs_zz", `hs_${crypto.randomUUID().replaceAll("-", "")}`]) {
      expect((await browser.call("/sign-in/finish", { body: { session_id } })).body).toMatchObject({
        code: "SIGN_IN_FAILED",
        reason: "unknown",
      });
    }
  }, 240_000);

  it("ends the session when idle for ten minutes, thirty minutes after sign-in whatever the activity, and on sign-out", async () => {
    const shop = await merchantFactory();
    const person = await enrollStranger(shop.keys.pk_test);
    const t0 = new Date();
    const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

    const idle = new Browser();
    await signIn(idle, shop.merchant_id, person, t0);
    expect((await idle.call("/session", { now: at(9) })).status).toBe(200);
    // Each request moves the idle end on: nine minutes after the last one it still stands.
    expect((await idle.call("/session", { now: at(18) })).status).toBe(200);
    expect(errorOf(await idle.call("/session", { now: at(28.5) }))).toEqual({ status: 401, code: "PERSON_SESSION_EXPIRED" });

    const busy = new Browser();
    await signIn(busy, shop.merchant_id, person, t0);
    for (const minute of [8, 16, 24, 29]) expect((await busy.call("/session", { now: at(minute) })).status).toBe(200);
    expect(errorOf(await busy.call("/mandates", { now: at(30) }))).toEqual({ status: 401, code: "PERSON_SESSION_EXPIRED" });

    const leaving = new Browser();
    await signIn(leaving, shop.merchant_id, person);
    const token = leaving.cookies.get("__Host-me-session")!;
    expect(errorOf(await leaving.post("/sign-out", {}, { headers: { "x-csrf-token": "wrong" } }))).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });
    const out = await leaving.post("/sign-out", {});
    expect(out.body).toEqual({ signed_out: true });
    expect(leaving.cookies.has("__Host-me-session")).toBe(false);
    // The token replayed after sign-out authenticates nothing.
    leaving.cookies.set("__Host-me-session", token);
    expect(errorOf(await leaving.call("/mandates"))).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });
    expect(errorOf(await new Browser().call("/mandates"))).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });
    leaving.cookies.set("__Host-me-session", `pst_${"A".repeat(43)}`);
    expect(errorOf(await leaving.call("/session"))).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });
  }, 240_000);
});

/**
 * Every route behind the person's session, by method, with a body its input would take (the
 * refusals below come before the input is read). The sign-in's own routes are not here: they are
 * before any session.
 */
const SESSION_ROUTES: { route: string; method: "GET" | "POST" }[] = [
  { route: ME_ROUTES.session, method: "GET" },
  { route: ME_ROUTES.signOut, method: "POST" },
  { route: ME_ROUTES.mandates, method: "GET" },
  { route: ME_ROUTES.revokeMandates, method: "POST" },
  { route: ME_ROUTES.merchants, method: "GET" },
  { route: ME_ROUTES.consentLedger, method: "GET" },
  { route: ME_ROUTES.withdrawConsent, method: "POST" },
  { route: ME_ROUTES.disclosures, method: "GET" },
  { route: ME_ROUTES.receipts, method: "GET" },
  { route: ME_ROUTES.devices, method: "GET" },
  { route: ME_ROUTES.revokeDevice, method: "POST" },
  { route: ME_ROUTES.renameDevice, method: "POST" },
  { route: ME_ROUTES.exports, method: "POST" },
  { route: `${ME_ROUTES.exports}/exp_${"0".repeat(32)}`, method: "GET" },
  { route: ME_ROUTES.presence, method: "POST" },
  { route: ME_ROUTES.erase, method: "POST" },
];

/** A request another site made: the browser says so, or the origin is not the service's. */
const CROSS_SITE: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { origin: "https://evil.example" }];

describe("me: every operation behind the session", () => {
  it("refuses no session, a signed-out one replayed, an expired one, a cross-site request, and a change without the CSRF token", async () => {
    const routes = new Set(SESSION_ROUTES.map(({ route }) => route.replace(/\/exp_0+$/, "")));
    const beforeSession = [ME_ROUTES.signIn, ME_ROUTES.signInFinish, ME_ROUTES.passkeyOptions, ME_ROUTES.passkeySignIn];
    expect([...routes, ...beforeSession].sort(), "every route of the contract is here").toEqual(Object.values(ME_ROUTES).sort());

    const shop = await merchantFactory();
    const person = await enrollStranger(shop.keys.pk_test);
    const t0 = new Date();
    const replayed = new Browser();
    await signIn(replayed, shop.merchant_id, person, t0);
    const token = replayed.cookies.get("__Host-me-session")!;
    expect((await replayed.post("/sign-out", {}, { now: t0 })).status).toBe(200);
    replayed.cookies.set("__Host-me-session", token);
    const expired = new Browser();
    await signIn(expired, shop.merchant_id, person, t0);
    const live = new Browser();
    await signIn(live, shop.merchant_id, person, t0);
    const later = new Date(t0.getTime() + 31 * 60_000);

    for (const { route, method } of SESSION_ROUTES) {
      const body = method === "POST" ? {} : undefined;
      const refusal = async (browser: Browser, options: { now?: Date; headers?: Record<string, string> } = {}) =>
        errorOf(
          await browser.call(route, {
            method,
            body,
            now: options.now ?? t0,
            headers: { "x-csrf-token": browser.csrf, ...options.headers },
          }),
        );
      expect(await refusal(new Browser()), `${route}: no session`).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });
      expect(await refusal(replayed), `${route}: signed out, replayed`).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });
      expect(await refusal(expired, { now: later }), `${route}: thirty minutes on`).toEqual({
        status: 401,
        code: "PERSON_SESSION_EXPIRED",
      });
      for (const headers of CROSS_SITE) {
        expect(await refusal(live, { headers }), `${route}: ${JSON.stringify(headers)}`).toEqual({
          status: 403,
          code: "CROSS_SITE_REQUEST",
        });
      }
      if (method === "POST") {
        expect(await refusal(live, { headers: { "x-csrf-token": "" } }), `${route}: no CSRF token`).toEqual({
          status: 403,
          code: "CSRF_TOKEN_INVALID",
        });
      }
    }
    // Refused all along, the live session still works.
    expect((await live.call("/session", { now: t0 })).status).toBe(200);
  }, 240_000);

  it("refuses another person's session everything that names what is this person's", async () => {
    const { shop, travel, person, shopping } = await personAtTwoMerchants();
    const [{ identity_id }] = await testDb()`select identity_id from private.subject_refs where subject_ref = ${person.subject_ref}`;
    const { device } = await seedDevice(shop.merchant_id, "test", identity_id);
    const owner = new Browser();
    await signIn(owner, shop.merchant_id, person);
    const exported = await owner.post("/exports", {});
    expect(exported.status, exported.text).toBe(201);
    const proof = await proveAgain(owner, travel.merchant_id, person);

    // Someone known at the shop only.
    const intruder = new Browser();
    await signIn(intruder, shop.merchant_id, await enrollStranger(shop.keys.pk_test));
    const notFound = { status: 404, code: "not_found" };
    expect(errorOf(await intruder.post("/mandates/revoke", { mandate_id: shopping.mandate_id }))).toEqual(notFound);
    expect(errorOf(await intruder.post("/consents/withdraw", { merchant_id: travel.merchant_id, confirm: true }))).toEqual(notFound);
    expect(errorOf(await intruder.post("/devices/revoke", { device_id: device.device_id }))).toEqual(notFound);
    expect(errorOf(await intruder.post("/devices/rename", { device_id: device.device_id, name: "Mine now" }))).toEqual(notFound);
    expect(errorOf(await intruder.call(`/exports/${exported.body.export_id}`))).toEqual(notFound);
    expect(errorOf(await intruder.post("/presence", { merchant_id: travel.merchant_id }))).toEqual(notFound);
    const erased = await intruder.post("/erase", { merchant_id: shop.merchant_id, confirm: true, presence_session_id: proof });
    expect({ ...errorOf(erased), reason: erased.body.reason }).toEqual({ status: 403, code: "PRESENCE_PROOF_INVALID", reason: "unknown" });

    // The person's own things are as they were.
    expect(
      (await owner.call("/mandates")).body.mandates.find((m: { mandate_id: string }) => m.mandate_id === shopping.mandate_id).status,
    ).toBe("active");
    expect((await owner.call("/merchants")).body.merchants.map((m: { consent_state: string }) => m.consent_state)).toEqual([
      "active",
      "active",
    ]);
    expect((await owner.call("/devices")).body.devices).toEqual([
      expect.objectContaining({ device_id: device.device_id, name: null, revoked_at: null }),
    ]);
    expect((await owner.call(`/exports/${exported.body.export_id}`)).status).toBe(200);
    const mine = await owner.post("/erase", { merchant_id: travel.merchant_id, confirm: true, presence_session_id: proof });
    expect(mine.body, "the proof was not used up by the intruder").toMatchObject({ erased: true, merchants: 1 });
  }, 240_000);
});

describe("me: mandates at every merchant", () => {
  it("revokes one agent's mandate: the agent's next consume is refused, mandate.revoked reaches that merchant only", async () => {
    const { shop, travel, person, shopping, booking } = await personAtTwoMerchants();
    const browser = new Browser();
    // Signed in through the other merchant's link: the same person, seen at both.
    await signIn(browser, travel.merchant_id, person);
    expect(
      (await consume(shop.keys.sk_test, { mandate_id: shopping.mandate_id, scope: "purchase", amount: 120, currency: "USD" })).body.allowed,
    ).toBe(true);
    const listed = await browser.call("/mandates");
    const before = listed.body.mandates.find((m: Record<string, any>) => m.mandate_id === shopping.mandate_id);
    expect(before).toMatchObject({ remaining: { amount: 580 }, last_consumptions: [{ scope: "purchase", amount: 120, currency: "USD" }] });

    // Without the CSRF token, from another site: refused, nothing revoked.
    expect(errorOf(await browser.call("/mandates/revoke", { body: { mandate_id: shopping.mandate_id } }))).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });
    expect(
      errorOf(await browser.post("/mandates/revoke", { mandate_id: shopping.mandate_id }, { headers: { origin: "https://evil.example" } })),
    ).toEqual({ status: 403, code: "CROSS_SITE_REQUEST" });
    expect(
      (await consume(shop.keys.sk_test, { mandate_id: shopping.mandate_id, scope: "purchase", amount: 1, currency: "USD" })).body.allowed,
    ).toBe(true);

    const revoked = await browser.post("/mandates/revoke", { mandate_id: shopping.mandate_id });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.revoked).toEqual([{ mandate_id: shopping.mandate_id, already_revoked: false, revoked_at: expect.any(String) }]);
    const next = await consume(shop.keys.sk_test, { mandate_id: shopping.mandate_id, scope: "purchase", amount: 1, currency: "USD" });
    expect(next.body).toMatchObject({ allowed: false, reason: "mandate_revoked" });
    expect(await events(shop.merchant_id, "mandate.revoked")).toEqual([
      { data: expect.objectContaining({ mandate_id: shopping.mandate_id, revoked_by: "granting_human" }) },
    ]);
    expect(await events(travel.merchant_id, "mandate.revoked")).toEqual([]);
    // The other agent's mandate stands; a repeat says already revoked.
    expect(
      (await browser.call("/mandates")).body.mandates.find((m: Record<string, any>) => m.mandate_id === booking.mandate_id).status,
    ).toBe("active");
    expect((await browser.post("/mandates/revoke", { mandate_id: shopping.mandate_id })).body.revoked[0].already_revoked).toBe(true);
  }, 240_000);

  it("revokes every standing mandate of one agent at one merchant, and nothing of another person's", async () => {
    const shop = await merchantFactory();
    const person = await enrollStranger(shop.keys.pk_test);
    const first = await grant(shop, person, { granted_to: "agent_same" });
    const second = await grant(shop, person, {
      granted_to: "agent_same",
      scopes: ["login"],
      ceiling: { kind: "count", count: 3, period: "daily" },
    });
    const other = await grant(shop, person, { granted_to: "agent_other" });
    const someoneElse = await enrollStranger(shop.keys.pk_test);
    const theirs = await grant(shop, someoneElse, { granted_to: "agent_same" });

    const mine = new Browser();
    await signIn(mine, shop.merchant_id, person);
    const intruder = new Browser();
    await signIn(intruder, shop.merchant_id, someoneElse);

    // Another person's session: my mandate is not theirs to see or revoke (the same 404 as an unknown one).
    expect((await intruder.call("/mandates")).body.mandates.map((m: Record<string, any>) => m.mandate_id)).toEqual([theirs.mandate_id]);
    for (const body of [
      { mandate_id: first.mandate_id },
      { mandate_id: "mdt_nope" },
      { merchant_id: shop.merchant_id, granted_to: "agent_other" },
    ]) {
      expect(errorOf(await intruder.post("/mandates/revoke", body))).toEqual({ status: 404, code: "not_found" });
    }
    // My CSRF token in the intruder's session is refused too.
    expect(
      errorOf(await intruder.post("/mandates/revoke", { mandate_id: theirs.mandate_id }, { headers: { "x-csrf-token": mine.csrf } })),
    ).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });

    const all = await mine.post("/mandates/revoke", { merchant_id: shop.merchant_id, granted_to: "agent_same" });
    expect(all.status, all.text).toBe(200);
    expect(all.body.revoked.map((r: { mandate_id: string }) => r.mandate_id).sort()).toEqual([first.mandate_id, second.mandate_id].sort());
    const statuses = new Map((await mine.call("/mandates")).body.mandates.map((m: Record<string, any>) => [m.mandate_id, m.status]));
    expect(Object.fromEntries(statuses)).toEqual({
      [first.mandate_id]: "revoked",
      [second.mandate_id]: "revoked",
      [other.mandate_id]: "active",
    });
    expect((await intruder.call("/mandates")).body.mandates[0].status).toBe("active");
    expect((await events(shop.merchant_id, "mandate.revoked")).length).toBe(2);
    // Nothing standing left for that agent: the same 404.
    expect(errorOf(await mine.post("/mandates/revoke", { merchant_id: shop.merchant_id, granted_to: "agent_same" }))).toEqual({
      status: 404,
      code: "not_found",
    });
    expect(errorOf(await mine.post("/mandates/revoke", { mandate_id: first.mandate_id, granted_to: "x" }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
  }, 240_000);
});

describe("me: merchants, consents and the consent ledger", () => {
  it("shows each merchant since when and under which consent; the ledger readable and verified; withdraws at one merchant", async () => {
    const { shop, travel, person, atTravel } = await personAtTwoMerchants();
    const browser = new Browser();
    await signIn(browser, shop.merchant_id, person);

    const merchants = await browser.call("/merchants");
    expect(merchants.status, merchants.text).toBe(200);
    expect(merchants.body.merchants.map((m: Record<string, unknown>) => m.name)).toEqual(["Corner shop", "Travel desk"]);
    expect(merchants.body.merchants[1]).toMatchObject({
      merchant_id: travel.merchant_id,
      consent_state: "active",
      consents: [{ version: "2026-11", retention_days: 365, ended_at: null, ended_by: null }],
    });
    expect(merchants.text).not.toContain(person.subject_ref);

    const ledger = await browser.call("/consent-ledger");
    expect(ledger.status, ledger.text).toBe(200);
    expect(ledger.body.verification).toEqual({ ok: true, entries: 2, breaks: [] });
    expect(ledger.body.entries.map((e: Record<string, unknown>) => [e.seq, e.kind, (e.merchant as { name: string }).name])).toEqual([
      [1, "consent_granted", "Corner shop"],
      [2, "consent_granted", "Travel desk"],
    ]);
    expect(ledger.body.entries[0].prev_hash).toBe("0".repeat(64));
    expect(ledger.body.entries[1].prev_hash).toBe(ledger.body.entries[0].row_hash);

    // Withdrawing needs the confirmation that the consequences were shown, the CSRF token, the same site.
    expect(errorOf(await browser.post("/consents/withdraw", { merchant_id: travel.merchant_id }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
    expect(errorOf(await browser.call("/consents/withdraw", { body: { merchant_id: travel.merchant_id, confirm: true } }))).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });
    expect(
      errorOf(
        await browser.post(
          "/consents/withdraw",
          { merchant_id: travel.merchant_id, confirm: true },
          { headers: { "sec-fetch-site": "cross-site" } },
        ),
      ),
    ).toEqual({ status: 403, code: "CROSS_SITE_REQUEST" });
    expect(errorOf(await browser.post("/consents/withdraw", { merchant_id: crypto.randomUUID(), confirm: true }))).toEqual({
      status: 404,
      code: "not_found",
    });

    const withdrawn = await browser.post("/consents/withdraw", { merchant_id: travel.merchant_id, confirm: true });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    expect(withdrawn.body).toMatchObject({ revoked: true, already_revoked: false });
    // The merchant's next call sees it: face-identify no longer knows the person there, and it heard of it.
    const shot = person.capture();
    const identified = await call("face-identify", {
      key: travel.keys.pk_test,
      body: { capture_nonce: shot.nonce, face_template: shot.descriptor },
      headers: replayHeaders(),
    });
    expect(identified.body).toMatchObject({ matched: false });
    expect(await events(travel.merchant_id, "consent.withdrawn")).toEqual([
      { data: { subject_ref: atTravel.subject_ref, withdrawn_at: withdrawn.body.revoked_at, withdrawn_by: "person" } },
    ]);
    expect(await events(shop.merchant_id, "consent.withdrawn")).toEqual([]);
    expect((await browser.post("/consents/withdraw", { merchant_id: travel.merchant_id, confirm: true })).body.already_revoked).toBe(true);
    expect((await events(travel.merchant_id, "consent.withdrawn")).length).toBe(1);

    const after = await browser.call("/consent-ledger");
    expect(after.body.verification).toEqual({ ok: true, entries: 3, breaks: [] });
    expect(after.body.entries[2]).toMatchObject({ seq: 3, kind: "consent_withdrawn", ends_seq: 2, merchant: { name: "Travel desk" } });
    expect((await browser.call("/merchants")).body.merchants[1]).toMatchObject({
      consent_state: "revoked",
      consents: [{ ended_by: "consent_withdrawn" }],
    });

    // Another person's session sees none of it, and cannot withdraw for them.
    const other = await enrollStranger(shop.keys.pk_test);
    const intruder = new Browser();
    await signIn(intruder, shop.merchant_id, other);
    expect((await intruder.call("/merchants")).body.merchants.map((m: Record<string, unknown>) => m.merchant_id)).toEqual([
      shop.merchant_id,
    ]);
    expect((await intruder.call("/consent-ledger")).body.entries.length).toBe(1);
    expect(errorOf(await intruder.post("/consents/withdraw", { merchant_id: travel.merchant_id, confirm: true }))).toEqual({
      status: 404,
      code: "not_found",
    });
    for (const route of ["/merchants", "/consent-ledger"]) {
      expect(errorOf(await new Browser().call(route))).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });
      expect(errorOf(await browser.call(route, { headers: { origin: "https://evil.example" } }))).toEqual({
        status: 403,
        code: "CROSS_SITE_REQUEST",
      });
    }
  }, 240_000);
});

describe("me: disclosures and receipts", () => {
  it("shows which claims each merchant received, when and why, never a value; every act approved or refused, receipts verifiable", async () => {
    const { shop, travel, person } = await personAtTwoMerchants();
    const captureId = await presenceCapture(shop, person, { document: true });
    const fields = [
      { key: "issuing_country", disclosure_type: "value", requires_kyc: true },
      { key: "age_over_18", disclosure_type: "zk_proof", circuit_id: "age_over", public_input: { threshold: 18 } },
    ];
    const disclosed = await disclose(shop.keys.sk_test, discloseBody(shop, captureId, fields));
    expect(disclosed.status, disclosed.text).toBe(200);
    expect(disclosed.text).toContain("UTO");
    // A refused act at the other merchant: a coerced capture.
    const shot = person.capture({ state: "coerced" });
    const refused = await transact(travel.keys.sk_test, {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: (await enrollStranger(travel.keys.pk_test, person.face)).subject_ref,
      capture_nonce: shot.nonce,
      face_template: shot.descriptor,
    });
    expect(errorOf(refused)).toEqual({ status: 403, code: "COERCION_DETECTED" });

    const browser = new Browser();
    await signIn(browser, shop.merchant_id, person);
    const disclosures = await browser.call("/disclosures");
    expect(disclosures.status, disclosures.text).toBe(200);
    expect(disclosures.body.disclosures).toEqual([
      expect.objectContaining({
        merchant: { merchant_id: shop.merchant_id, name: "Corner shop" },
        purpose: "account_opening",
        claims: [
          { key: "issuing_country", disclosure_type: "value", status: "disclosed" },
          { key: "age_over_18", disclosure_type: "zk_proof", status: "disclosed" },
        ],
        revoked_at: null,
      }),
    ]);
    expect(disclosures.text).not.toContain("UTO");
    expect(disclosures.text).not.toContain('"value":');

    const receipts = await browser.call("/receipts");
    expect(receipts.status, receipts.text).toBe(200);
    const acts = receipts.body.acts as Record<string, any>[];
    const approved = acts.find((act) => act.transaction_id === captureId)!;
    expect(approved).toMatchObject({ merchant: { name: "Corner shop" }, action: "ACTION_LOGIN", approved: true, refusal: null });
    const verified = await call("receipt-verify", { query: { code: approved.receipt.code } });
    expect(verified.body).toMatchObject({ valid: true, transaction_id: captureId, merchant_id: shop.merchant_id });
    expect(new URL(approved.receipt.verify_url).pathname).toBe("/functions/v1/receipt-verify");
    expect(acts.find((act) => act.merchant.name === "Travel desk" && !act.approved)).toMatchObject({
      approved: false,
      refusal: "COERCION_DETECTED",
      receipt: null,
    });

    // Another person's session sees none of it.
    const intruder = new Browser();
    await signIn(intruder, shop.merchant_id, await enrollStranger(shop.keys.pk_test));
    expect((await intruder.call("/disclosures")).body.disclosures).toEqual([]);
    expect(JSON.stringify((await intruder.call("/receipts")).body)).not.toContain(captureId);
    for (const route of ["/disclosures", "/receipts"]) {
      expect(errorOf(await new Browser().call(route))).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });
      expect(errorOf(await browser.call(route, { headers: { "sec-fetch-site": "cross-site" } }))).toEqual({
        status: 403,
        code: "CROSS_SITE_REQUEST",
      });
    }
  }, 240_000);
});

/** Opens the presence proof that confirms an erasure, at `merchantId`, and proves it with `face`'s capture. */
async function proveAgain(browser: Browser, merchantId: string, face: Person, now?: Date) {
  const opened = await browser.post("/presence", { merchant_id: merchantId }, { now });
  expect(opened.status, opened.text).toBe(201);
  expect((await proveOnScreen(opened.body.url, face, now)).body.state).toBe("completed");
  return opened.body.session_id as string;
}

describe("me: erasure", () => {
  it("erases at one merchant, confirmed by a fresh presence proof: its mandates revoked, the merchant told, the other untouched", async () => {
    const { shop, travel, person, atTravel, shopping, booking } = await personAtTwoMerchants();
    const browser = new Browser();
    await signIn(browser, shop.merchant_id, person);

    // No proof, a proof of another session, an unknown id: refused, nothing erased.
    expect(
      (await browser.post("/erase", { merchant_id: travel.merchant_id, confirm: true, presence_session_id: "hs_00" })).body,
    ).toMatchObject({
      code: "PRESENCE_PROOF_INVALID",
      reason: "unknown",
    });
    const otherSession = new Browser();
    await signIn(otherSession, shop.merchant_id, person);
    const theirs = await proveAgain(otherSession, travel.merchant_id, person);
    expect(
      (await browser.post("/erase", { merchant_id: travel.merchant_id, confirm: true, presence_session_id: theirs })).body,
    ).toMatchObject({
      code: "PRESENCE_PROOF_INVALID",
      reason: "unknown",
    });
    expect(errorOf(await browser.post("/erase", { merchant_id: travel.merchant_id, presence_session_id: theirs }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
    // Someone else's face on the proof's screen: a mismatch.
    const stranger = await enrollStranger(travel.keys.pk_test);
    const byStranger = await proveAgain(browser, travel.merchant_id, stranger);
    expect(
      (await browser.post("/erase", { merchant_id: travel.merchant_id, confirm: true, presence_session_id: byStranger })).body,
    ).toMatchObject({
      code: "PRESENCE_PROOF_INVALID",
      reason: "mismatch",
    });
    // A proof older than five minutes: stale.
    const old = await proveAgain(browser, travel.merchant_id, person);
    const later = new Date(Date.now() + 6 * 60_000);
    await browser.call("/session", { now: new Date(Date.now() + 60_000) });
    expect(
      (await browser.post("/erase", { merchant_id: travel.merchant_id, confirm: true, presence_session_id: old }, { now: later })).body,
    ).toMatchObject({ code: "PRESENCE_PROOF_INVALID", reason: "stale" });
    expect(await identifies(travel, person)).toBe(true);

    const proof = await proveAgain(browser, travel.merchant_id, person);
    const erased = await browser.post("/erase", { merchant_id: travel.merchant_id, confirm: true, presence_session_id: proof });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toEqual({ erased: true, merchants: 1, identity_erased: false });
    expect(
      (await browser.post("/erase", { merchant_id: travel.merchant_id, confirm: true, presence_session_id: proof })).body,
    ).toMatchObject({
      code: "PRESENCE_PROOF_INVALID",
      reason: "used",
    });

    // The merchant's next calls see it; it was told that, and only that.
    expect(await identifies(travel, person)).toBe(false);
    expect(
      (await consume(travel.keys.sk_test, { mandate_id: booking.mandate_id, scope: "purchase", amount: 1, currency: "USD" })).body,
    ).toMatchObject({
      allowed: false,
      reason: "mandate_revoked",
    });
    const told = await testDb()`select type, data from private.outbox_events where merchant_id = ${travel.merchant_id}::uuid
      and type in ('identity.erased', 'mandate.revoked', 'consent.withdrawn') order by created_at, type`;
    expect(told.map((e) => e.type).sort()).toEqual(["identity.erased", "mandate.revoked"]);
    expect(told.find((e) => e.type === "identity.erased")!.data).toEqual({
      subject_ref: atTravel.subject_ref,
      erased_at: expect.any(String),
    });
    expect(await events(shop.merchant_id, "identity.erased")).toEqual([]);
    // The other merchant is untouched: its mandate stands, it still knows the person, the session goes on.
    expect(await identifies(shop, person)).toBe(true);
    expect(
      (await consume(shop.keys.sk_test, { mandate_id: shopping.mandate_id, scope: "purchase", amount: 1, currency: "USD" })).body.allowed,
    ).toBe(true);
    expect((await browser.call("/merchants")).body.merchants.map((m: Record<string, unknown>) => m.consent_state)).toEqual([
      "active",
      "revoked",
    ]);
  }, 240_000);

  it("erases at every merchant: nothing that identifies the person remains, table by table, and the merchants' next calls see it", async () => {
    const { shop, travel, person, shopping, booking } = await personAtTwoMerchants();
    const captureId = await presenceCapture(shop, person, { document: true });
    const fields = [{ key: "identity_document", disclosure_type: "document" }];
    expect((await disclose(shop.keys.sk_test, discloseBody(shop, captureId, fields))).status).toBe(200);
    const browser = new Browser();
    await signIn(browser, shop.merchant_id, person);
    const [{ identity_id }] = await testDb()`select identity_id from private.subject_refs where subject_ref = ${person.subject_ref}`;
    const db = testDb();
    expect((await db`select count(*)::int as n from private.identity_documents where identity_id = ${identity_id}`)[0].n).toBeGreaterThan(
      0,
    );
    expect(
      (
        await db`select count(*)::int as n from private.disclosed_documents d join private.consent_ledger l on l.id = d.disclosure_id
      where l.identity_id = ${identity_id}`
      )[0].n,
    ).toBe(1);

    const proof = await proveAgain(browser, shop.merchant_id, person);
    const erased = await browser.post("/erase", { all: true, confirm: true, presence_session_id: proof });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toEqual({ erased: true, merchants: 2, identity_erased: true });
    expect(erased.headers.getSetCookie()[0]).toMatch(/^__Host-me-session=; Max-Age=0;/);
    expect(errorOf(await browser.call("/mandates"))).toEqual({ status: 401, code: "PERSON_SESSION_REQUIRED" });

    // Table by table (tests/harness/me.ts names each).
    expect(await identifyingRows(identity_id)).toEqual(NOTHING_IDENTIFYING);
    expect(
      await db`select kind, count(*)::int as n from private.consent_ledger where identity_id = ${identity_id} group by kind order by kind`,
    ).toEqual([
      { kind: "consent_granted", n: 2 },
      { kind: "consent_withdrawn", n: 2 },
      { kind: "data_erased", n: 2 },
      { kind: "disclosure", n: 1 },
    ]);
    // What stays: pseudonyms and receipts, which name no one (D-470).
    expect((await db`select count(*)::int as n from private.subject_refs where identity_id = ${identity_id}`)[0].n).toBe(2);

    // The merchants' next calls.
    expect(await identifies(shop, person)).toBe(false);
    expect(await identifies(travel, person)).toBe(false);
    for (const [merchant, mandate] of [
      [shop, shopping],
      [travel, booking],
    ] as const) {
      expect(
        (await consume(merchant.keys.sk_test, { mandate_id: mandate.mandate_id, scope: "purchase", amount: 1, currency: "USD" })).body,
      ).toMatchObject({
        allowed: false,
        reason: "mandate_revoked",
      });
      expect((await events(merchant.merchant_id, "identity.erased")).length).toBe(1);
    }
    // Signing in again finds nobody.
    const again = new Browser();
    const started = await again.call("/sign-in", { body: { merchant_id: shop.merchant_id, environment: "test" } });
    expect((await proveOnScreen(started.body.url, person)).body.state).toBe("failed");
  }, 240_000);
});

describe("me: export", () => {
  it("generates one JSON file on request, downloadable once by the person, expiring; no template, no other person", async () => {
    const { shop, travel, person, atTravel, shopping, booking } = await personAtTwoMerchants();
    const browser = new Browser();
    await signIn(browser, shop.merchant_id, person);
    expect(errorOf(await browser.call("/exports", { method: "POST", body: {} }))).toEqual({ status: 403, code: "CSRF_TOKEN_INVALID" });
    expect(errorOf(await browser.post("/exports", {}, { headers: { "sec-fetch-site": "cross-site" } }))).toEqual({
      status: 403,
      code: "CROSS_SITE_REQUEST",
    });

    const created = await browser.post("/exports", {});
    expect(created.status, created.text).toBe(201);
    expect(created.body.export_id).toMatch(/^exp_[0-9a-f]{32}$/);
    expect(Date.parse(created.body.expires_at) - Date.now()).toBeGreaterThan(14 * 60_000);

    // Another person's session, a cross-site request: refused, and the file is still there.
    const intruder = new Browser();
    await signIn(intruder, shop.merchant_id, await enrollStranger(shop.keys.pk_test));
    expect(errorOf(await intruder.call(`/exports/${created.body.export_id}`))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await browser.call(`/exports/${created.body.export_id}`, { headers: { origin: "https://evil.example" } }))).toEqual({
      status: 403,
      code: "CROSS_SITE_REQUEST",
    });

    const file = await browser.call(`/exports/${created.body.export_id}`);
    expect(file.status, file.text).toBe(200);
    expect(file.headers.get("content-disposition")).toBe('attachment; filename="my-data.json"');
    expect(file.headers.get("cache-control")).toBe("no-store");
    expect(file.body).toMatchObject({ format: "me-export/1", environment: "test", identity: { documents: expect.any(Array) } });
    expect(file.body.identity.documents.length).toBeGreaterThan(0);
    expect(file.body.merchants.map((m: Record<string, unknown>) => [m.name, m.subject_ref])).toEqual([
      ["Corner shop", person.subject_ref],
      ["Travel desk", atTravel.subject_ref],
    ]);
    expect(file.body.mandates.map((m: { mandate_id: string }) => m.mandate_id).sort()).toEqual(
      [shopping.mandate_id, booking.mandate_id].sort(),
    );
    expect(file.body.consent_ledger.verification.ok).toBe(true);
    expect(file.body.acts.length).toBeGreaterThan(0);
    expect(file.text).not.toMatch(/embedding|face_template|baseline|identity_id/);
    void travel;

    // Once: the content is gone.
    expect(errorOf(await browser.call(`/exports/${created.body.export_id}`))).toEqual({ status: 404, code: "not_found" });
    const [row] = await testDb()`select content is null as gone, downloaded_at is not null as taken from private.person_exports
      where id = ${created.body.export_id.slice(4)}::uuid`;
    expect(row).toEqual({ gone: true, taken: true });

    // Expiring: fifteen minutes on the service's clock.
    const late = await browser.post("/exports", {});
    const at = new Date(Date.parse(late.body.expires_at) + 1000);
    const reader = new Browser();
    await signIn(reader, shop.merchant_id, person, new Date(at.getTime() - 60_000));
    expect(errorOf(await reader.call(`/exports/${late.body.export_id}`, { now: at }))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await browser.call("/exports/exp_nope"))).toEqual({ status: 404, code: "not_found" });
  }, 240_000);
});

describe("me: devices", () => {
  it("lists, names and revokes the person's passkeys; the merchants hear device.revoked; another person's are not found", async () => {
    const { shop, travel, person } = await personAtTwoMerchants();
    const [{ identity_id }] = await testDb()`select identity_id from private.subject_refs where subject_ref = ${person.subject_ref}`;
    const { device } = await seedDevice(shop.merchant_id, "test", identity_id);
    const browser = new Browser();
    await signIn(browser, shop.merchant_id, person);

    const listed = await browser.call("/devices");
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.devices).toEqual([expect.objectContaining({ device_id: device.device_id, name: null, revoked_at: null })]);
    expect((await browser.post("/devices/rename", { device_id: device.device_id, name: "My phone" })).body.device.name).toBe("My phone");

    const intruder = new Browser();
    await signIn(intruder, shop.merchant_id, await enrollStranger(shop.keys.pk_test));
    expect((await intruder.call("/devices")).body.devices).toEqual([]);
    expect(errorOf(await intruder.post("/devices/revoke", { device_id: device.device_id }))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await browser.call("/devices/revoke", { body: { device_id: device.device_id } }))).toEqual({
      status: 403,
      code: "CSRF_TOKEN_INVALID",
    });

    const revoked = await browser.post("/devices/revoke", { device_id: device.device_id });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ already_revoked: false, device: { device_id: device.device_id, revoked_at: expect.any(String) } });
    for (const merchant of [shop, travel]) {
      expect((await events(merchant.merchant_id, "device.revoked")).length, merchant.merchant_id).toBe(1);
    }
    expect((await browser.post("/devices/revoke", { device_id: device.device_id })).body.already_revoked).toBe(true);
  }, 240_000);
});
