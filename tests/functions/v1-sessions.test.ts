/**
 * /v1/sessions over HTTP: create (every mode, every rule and error, idempotency and its race), read,
 * and each mode taken through the hosted screen's JSON endpoints (boot, complete, cancel) with
 * simulator captures, as the page would: what the screen is asked, what the result carries, and
 * where the person is sent back. Expiry by the request clock.
 */
import { describe, expect, it } from "vitest";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, resultOf } from "../harness/http";
import { enrollStranger, newStranger } from "../harness/identity";
import { v1, whileInFlight } from "../harness/resource-api";
import { asSession, bootedSession, createdSession, sessionBody, tokenOf } from "../harness/resource-sessions";
import { serviceUnderTest } from "../harness/service";
import { boot, openSession, screenCall } from "../harness/sessions";

const HOSTED_CONSENT = { version: "hosted-capture-1", retention_days: 365 };
const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

function captureOf(person: { capture(options: { nonce: string; light: boolean }): { descriptor: unknown } }, nonce: string) {
  return { capture_nonce: nonce, face_template: person.capture({ nonce, light: true }).descriptor };
}

function mandateTerms(extra: Record<string, unknown> = {}) {
  return {
    granted_to: `agent_${crypto.randomUUID()}`,
    scope: ["purchase"],
    ceiling: { amount: 5000, currency: "EUR", period: "month" },
    until: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    ...extra,
  };
}

/** A merchant and a person enrolled with it. */
async function merchantAndPerson() {
  const merchant = await merchantFactory();
  const person = await enrollStranger(merchant.keys.pk_test);
  return { merchant, person, key: merchant.keys.sk_test };
}

/** The hosted screen's page answers a GET of the url's path on the service (the fragment stays in the browser). */
async function expectScreenPage(url: URL) {
  const page = await resultOf(await fetch(new URL(url.pathname, serviceUnderTest().baseUrl)), "GET");
  expect(page.status, page.text).toBe(200);
  expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  expect(page.text).toMatch(/<script type="module" src="assets\/[0-9a-f]{16}\/session\.js">/);
}

async function readV1(key: string, id: string, now?: Date) {
  const res = await v1(`/sessions/${id}`, { key, now });
  expect(res.status, res.text).toBe(200);
  return asSession(res.body);
}

describe("POST /v1/sessions", () => {
  it("opens a session of each mode: status open, 30 minutes, the metadata back, and a single-use url to the screen with the token in its fragment", async () => {
    const { person, key } = await merchantAndPerson();
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const bodies = [
      sessionBody("claim", { metadata: { order: "A-1" } }),
      sessionBody("recognise", { facetoken: person.subject_ref }),
      sessionBody("attribute", { facetoken: person.subject_ref, attribute: "document_verified" }),
      sessionBody("mandate", { facetoken: person.subject_ref, mandate: mandateTerms() }),
    ];
    for (const body of bodies) {
      const res = await v1("/sessions", { key, body, now });
      expect(res.status, res.text).toBe(201);
      asSession(res.body);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("service-version")).toBe("2026-09-14");
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^hs_[0-9a-f]{32}$/),
        object: "session",
        status: "open",
        mode: body.mode,
        return_url: body.return_url,
        cancel_url: body.return_url,
        facetoken: (body as { facetoken?: string }).facetoken ?? null,
        metadata: (body as { metadata?: object }).metadata ?? {},
        created_at: now.toISOString(),
        expires_at: at(now, 1800).toISOString(),
        ended_at: null,
        result: null,
      });
      const url = new URL(res.body.url);
      expect(url.origin).toBe(new URL(serviceUnderTest().baseUrl).origin);
      await expectScreenPage(url);
      expect(url.search).toBe("");
      expect(url.hash).toMatch(/^#hst_[A-Za-z0-9_-]{43}$/);
      // The url is never shown again: reads carry no token.
      const read = await readV1(key, res.body.id, now);
      expect(read).toEqual(Object.fromEntries(Object.entries(res.body).filter(([field]) => field !== "url")));
    }
  });

  it("opens the url on the merchant's own domain (a CNAME to the service) and keeps the branding, the locale and the terms", async () => {
    const { person, key } = await merchantAndPerson();
    const branding = {
      logo_url: "https://cdn.shop.example/logo.svg",
      accent: "#1A73E8",
      domain: "Verify.Shop.Example",
      headline: "Confirm it is you",
      footer_note: "Shop Ltd.",
    };
    const terms = mandateTerms();
    const session = await createdSession(
      key,
      sessionBody("mandate", {
        facetoken: person.subject_ref,
        mandate: terms,
        branding,
        locale: "pt-BR",
        cancel_url: "https://shop.example/cancelled",
      }),
    );
    expect(new URL(session.url).origin).toBe("https://verify.shop.example");
    await expectScreenPage(new URL(session.url));
    expect(session).toMatchObject({
      branding: { ...branding, domain: "verify.shop.example" },
      locale: "pt-BR",
      cancel_url: "https://shop.example/cancelled",
    });
    expect(session.mandate).toMatchObject({ ...terms, granted_to_kind: "agent" });
  });

  it("refuses a return_url or cancel_url that is not an absolute https URL: 400 invalid_return_url", async () => {
    // 21 requests at once: the live key's burst (a sandbox key's is 20 a second), the same rules either way.
    const key = (await merchantFactory()).keys.sk_live;
    const bad = [
      "http://shop.example/return",
      "/return",
      "shop.example/return",
      "javascript:alert(1)",
      "data:text/html,hi",
      "https://user:pass@shop.example/",
      "https://",
      `https://shop.example/${"a".repeat(2048)}`,
      42,
      "",
    ];
    for (const value of bad) {
      expect({ value, ...errorOf(await v1("/sessions", { key, body: sessionBody("claim", { return_url: value }) })) }).toEqual({
        value,
        status: 400,
        code: "invalid_return_url",
      });
      expect({ value, ...errorOf(await v1("/sessions", { key, body: sessionBody("claim", { cancel_url: value }) })) }).toEqual({
        value,
        status: 400,
        code: "invalid_return_url",
      });
    }
    const missing = await v1("/sessions", { key, body: { mode: "claim" } });
    expect(errorOf(missing)).toEqual({ status: 400, code: "invalid_return_url" });
  });

  it("takes facetoken, attribute and mandate exactly where the mode needs them: missing or stray is 400 invalid_input naming the field", async () => {
    const { person, key } = await merchantAndPerson();
    const facetoken = person.subject_ref;
    const cases: [Record<string, unknown>, string][] = [
      [sessionBody("recognise"), "facetoken"],
      [sessionBody("attribute", { attribute: "document_verified" }), "facetoken"],
      [sessionBody("mandate", { mandate: mandateTerms() }), "facetoken"],
      [sessionBody("claim", { facetoken }), "facetoken"],
      [sessionBody("attribute", { facetoken }), "attribute"],
      [sessionBody("recognise", { facetoken, attribute: "document_verified" }), "attribute"],
      [sessionBody("mandate", { facetoken }), "mandate"],
      [sessionBody("claim", { mandate: mandateTerms() }), "mandate"],
      [sessionBody("attribute", { facetoken, attribute: "age_over_18" }), "attribute"],
      [sessionBody("unlock"), "mode"],
      [sessionBody("recognise", { facetoken: "" }), "facetoken"],
      [sessionBody("claim", { locale: "not a locale!" }), "locale"],
      [sessionBody("claim", { surprise: true }), "surprise"],
    ];
    for (const [body, field] of cases) {
      const res = await v1("/sessions", { key, body });
      expect({ body, ...errorOf(res), fields: res.body.fields }).toEqual({ body, status: 400, code: "invalid_input", fields: [field] });
    }
  });

  it("judges a mandate's terms by the mandate rules at creation, with their codes; branding and metadata by theirs", async () => {
    const { person, key } = await merchantAndPerson();
    const facetoken = person.subject_ref;
    const cases: [Record<string, unknown>, string][] = [
      [{ mandate: mandateTerms({ scope: ["teleport"] }) }, "unknown_scope"],
      [{ mandate: mandateTerms({ scope: ["*"] }) }, "wildcard_scope_forbidden"],
      [{ mandate: mandateTerms({ until: new Date(Date.now() - 1000).toISOString() }) }, "expires_at_not_in_future"],
      [{ mandate: mandateTerms({ until: new Date(Date.now() + 400 * 86_400_000).toISOString() }) }, "expires_at_too_far"],
      [{ mandate: mandateTerms({ scope: ["login"] }) }, "amount_ceiling_not_applicable"],
    ];
    for (const [extra, code] of cases) {
      const res = await v1("/sessions", { key, body: sessionBody("mandate", { facetoken, ...extra }) });
      expect({ expected: code, ...errorOf(res) }).toEqual({ expected: code, status: 400, code });
    }
    const brandings = [
      { accent: "blue" },
      { logo_url: "http://cdn.example/logo.png" },
      { domain: "not a host" },
      { headline: "" },
      { footer_note: "x".repeat(201) },
      { colour: "#000000" },
      "plain",
    ];
    for (const branding of brandings) {
      expect({ branding, ...errorOf(await v1("/sessions", { key, body: sessionBody("claim", { branding }) })) }).toEqual({
        branding,
        status: 400,
        code: "invalid_branding",
      });
    }
    expect(errorOf(await v1("/sessions", { key, body: sessionBody("claim", { metadata: { n: 1 } }) }))).toEqual({
      status: 400,
      code: "invalid_metadata",
    });
    const big = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    expect(errorOf(await v1("/sessions", { key, body: sessionBody("claim", { metadata: big }) }))).toEqual({
      status: 400,
      code: "metadata_too_large",
    });
  });

  it("needs a secret key as a bearer: none, publishable, unknown are 401", async () => {
    const merchant = await merchantFactory();
    expect(errorOf(await v1("/sessions", { body: sessionBody("claim") }))).toEqual({ status: 401, code: "api_key_required" });
    expect(errorOf(await v1("/sessions", { key: merchant.keys.pk_test, body: sessionBody("claim") }))).toEqual({
      status: 401,
      code: "auth_required",
    });
    expect(errorOf(await v1("/sessions", { key: `sk_test_${"A".repeat(40)}`, body: sessionBody("claim") }))).toEqual({
      status: 401,
      code: "invalid_api_key",
    });
  });
});

describe("POST /v1/sessions with an Idempotency-Key", () => {
  it("replays the original session and url; another body is 422; the key is scoped to the merchant and environment", async () => {
    const { key, merchant } = await merchantAndPerson();
    const body = sessionBody("claim", { metadata: { order: "idem-1" } });
    const first = await v1("/sessions", { key, body, idempotencyKey: "session-idem-1" });
    expect(first.status, first.text).toBe(201);
    const again = await v1("/sessions", { key, body, idempotencyKey: "session-idem-1" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-status")).toBe("replayed");
    expect(again.body).toEqual(first.body);
    const [{ count }] = await testDb()`select count(*)::int from private.hosted_sessions where merchant_id = ${merchant.merchant_id}`;
    expect(count).toBe(1);
    const other = await v1("/sessions", { key, body: { ...body, metadata: { order: "idem-2" } }, idempotencyKey: "session-idem-1" });
    expect(errorOf(other)).toEqual({ status: 422, code: "idempotency_key_reused" });
    const live = await v1("/sessions", { key: merchant.keys.sk_live, body, idempotencyKey: "session-idem-1" });
    expect(live.status).toBe(201);
    expect(live.body.id).not.toBe(first.body.id);
    expect(errorOf(await v1("/sessions", { key, body, idempotencyKey: "short" }))).toEqual({
      status: 400,
      code: "idempotency_key_invalid",
    });
  });

  it("two requests with one key at once: one runs, the other gets 409 with Retry-After; then the key replays the one that ran", async () => {
    const { key, merchant } = await merchantAndPerson();
    const body = sessionBody("claim");
    const idempotencyKey = `race-${crypto.randomUUID()}`;
    const ran = await whileInFlight(
      "private.hosted_sessions",
      { merchantId: merchant.merchant_id, idempotencyKey },
      () => v1("/sessions", { key, body, idempotencyKey }),
      async () => {
        const second = await v1("/sessions", { key, body, idempotencyKey });
        expect(errorOf(second)).toEqual({ status: 409, code: "idempotency_in_flight" });
        expect(second.headers.get("retry-after")).toBe("1");
      },
    );
    expect(ran.status, ran.text).toBe(201);
    const replay = await v1("/sessions", { key, body, idempotencyKey });
    expect(replay.body).toEqual(ran.body);
    const [{ count }] = await testDb()`select count(*)::int from private.hosted_sessions where merchant_id = ${merchant.merchant_id}`;
    expect(count).toBe(1);
  });
});

describe("GET /v1/sessions/{id}", () => {
  it("is the same 404 not_found for an unknown, malformed, another merchant's, the other environment's and a function API session", async () => {
    const { key, merchant } = await merchantAndPerson();
    const session = await createdSession(key, sessionBody("claim"));
    const unknown = await v1(`/sessions/hs_${"0".repeat(32)}`, { key });
    expect(errorOf(unknown)).toEqual({ status: 404, code: "not_found" });
    const other = await merchantFactory();
    const functionSession = await openSession(key, { action: "login" });
    for (const [path, k] of [
      [`/sessions/${session.id}`, other.keys.sk_test],
      [`/sessions/${session.id}`, merchant.keys.sk_live],
      ["/sessions/not-an-id", key],
      [`/sessions/${functionSession.session_id}`, key],
    ]) {
      expect((await v1(path, { key: k })).text).toBe(unknown.text);
    }
    expect((await readV1(key, session.id.slice(3))).id).toBe(session.id);
  });

  it("reports expired from expires_at on, with nothing run; the url then opens nothing (410)", async () => {
    const { key } = await merchantAndPerson();
    const t0 = new Date();
    const session = await createdSession(key, sessionBody("claim"), { now: t0 });
    expect((await readV1(key, session.id, at(t0, 1799))).status).toBe("open");
    const expired = await readV1(key, session.id, at(t0, 1800));
    expect(expired).toMatchObject({ status: "expired", ended_at: session.expires_at, result: null });
    expect(errorOf(await boot(tokenOf(session.url), { now: at(t0, 1800) }))).toEqual({ status: 410, code: "SESSION_EXPIRED" });
  });
});

describe("each mode on the hosted screen", () => {
  it("the url is single use: a second boot is 409", async () => {
    const { key } = await merchantAndPerson();
    const session = await createdSession(key, sessionBody("claim"));
    await bootedSession(session.url);
    expect(errorOf(await boot(tokenOf(session.url)))).toEqual({ status: 409, code: "SESSION_ALREADY_CONSUMED" });
  });

  it("a session's locale the screen does not speak: the screen speaks the person's (their browser's), not a default", async () => {
    const { key } = await merchantAndPerson();
    const session = await createdSession(key, sessionBody("claim", { locale: "fr-CA" }));
    const screen = await bootedSession(session.url, { locale: "pt-BR,pt;q=0.9" });
    expect(screen).toMatchObject({ locale: "pt-BR", mode: { locale: "fr-CA" } });
  });

  it("claim: the screen offers the hosted consent, enrols the person, and the result names their new facetoken; the person returns with session_id and status", async () => {
    const { key } = await merchantAndPerson();
    const session = await createdSession(
      key,
      sessionBody("claim", { metadata: { signup: "1" }, locale: "es-MX", branding: { headline: "Hola" } }),
    );
    const screen = await bootedSession(session.url, { locale: "en" });
    expect(screen).toMatchObject({
      action: "claim",
      consent: HOSTED_CONSENT,
      locale: "es",
      mode: {
        name: "claim",
        attribute: null,
        mandate: null,
        branding: { headline: "Hola" },
        locale: "es-MX",
        return_url: session.return_url,
      },
    });
    expect(JSON.stringify(screen)).not.toContain("signup");
    const person = newStranger();
    const done = await screenCall("complete", screen.screen_token, {
      ...captureOf(person, screen.capture_nonce),
      consent: { ...HOSTED_CONSENT, accepted: true },
    });
    expect(done.status, done.text).toBe(200);
    const back = new URL(done.body.return_to);
    expect(back.origin + back.pathname).toBe("https://shop.example/return");
    expect(Object.fromEntries(back.searchParams)).toEqual({ order: "42", session_id: session.id, status: "completed" });
    const read = await readV1(key, session.id);
    expect(read).toMatchObject({
      status: "completed",
      metadata: { signup: "1" },
      result: { approved: true, reason: null, facetoken: expect.stringMatching(/^sub_/) },
    });
    expect(read.result).not.toHaveProperty("subject_ref");
    // The facetoken is the person's with this merchant: a recognise session for it now recognises them.
    const again = await createdSession(key, sessionBody("recognise", { facetoken: read.result.facetoken }));
    const againScreen = await bootedSession(again.url);
    const recognised = await screenCall("complete", againScreen.screen_token, captureOf(person, againScreen.capture_nonce));
    expect(recognised.body.outcome.approved).toBe(true);
  });

  it("recognise: approved for the facetoken's person; another known person is subject_mismatch; an unknown face not_recognised; no act, no receipt", async () => {
    const { key, merchant, person } = await merchantAndPerson();
    const other = await enrollStranger(merchant.keys.pk_test);
    const outcomes: Record<string, unknown>[] = [];
    for (const who of [person, other, newStranger()]) {
      const session = await createdSession(key, sessionBody("recognise", { facetoken: person.subject_ref }));
      const screen = await bootedSession(session.url);
      const done = await screenCall("complete", screen.screen_token, captureOf(who, screen.capture_nonce));
      expect(done.status, done.text).toBe(200);
      const read = await readV1(key, session.id);
      expect(read.status).toBe("completed");
      expect(new URL(done.body.return_to).searchParams.get("status")).toBe("completed");
      outcomes.push(read.result);
    }
    expect(outcomes).toEqual([
      { approved: true, reason: null, facetoken: person.subject_ref, device_binding: "none" },
      { approved: false, reason: "subject_mismatch", facetoken: null },
      { approved: false, reason: "not_recognised", facetoken: null },
    ]);
  });

  it("attribute document_verified: true with a verified document on record at the capture, false without; the receipt of the capture", async () => {
    const { key, person } = await merchantAndPerson();
    const answers: unknown[] = [];
    for (const document of [false, true]) {
      const session = await createdSession(
        key,
        sessionBody("attribute", { facetoken: person.subject_ref, attribute: "document_verified" }),
      );
      const screen = await bootedSession(session.url);
      expect(screen.mode).toMatchObject({ name: "attribute", attribute: "document_verified" });
      const body = { ...captureOf(person, screen.capture_nonce), ...(document ? { document: await passport() } : {}) };
      const done = await screenCall("complete", screen.screen_token, body);
      expect(done.status, done.text).toBe(200);
      const read = await readV1(key, session.id);
      expect(read.result).toMatchObject({
        approved: true,
        facetoken: person.subject_ref,
        attribute: "document_verified",
        receipt_code: expect.any(String),
      });
      expect(read.result).not.toHaveProperty("transaction_id");
      answers.push(read.result.value);
    }
    expect(answers).toEqual([false, true]);
  });

  it("mandate: the screen shows the terms; the person's capture proves the grant and the mandate exists, granted by the facetoken", async () => {
    const { key, person } = await merchantAndPerson();
    const terms = mandateTerms();
    const session = await createdSession(key, sessionBody("mandate", { facetoken: person.subject_ref, mandate: terms }));
    const screen = await bootedSession(session.url);
    expect(screen.mode.mandate).toMatchObject(terms);
    const done = await screenCall("complete", screen.screen_token, {
      ...captureOf(person, screen.capture_nonce),
      document: await passport(),
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.outcome).toMatchObject({ approved: true });
    const read = await readV1(key, session.id);
    expect(read.result).toMatchObject({ approved: true, facetoken: person.subject_ref, mandate_id: expect.stringMatching(/^mdt_/) });
    const mandate = await v1(`/mandates/${read.result.mandate_id}`, { key });
    expect(mandate.body).toMatchObject({
      status: "active",
      granted_by: person.subject_ref,
      granted_to: terms.granted_to,
      scope: ["purchase"],
      ceiling: { amount: 5000, currency: "EUR", period: "month" },
      remaining: 5000,
    });
    expect(Date.parse(mandate.body.until)).toBe(Date.parse(terms.until));
  });

  it("mandate step-up (spec 4.7 rule 8, D-428): the boot asks the face only; a silent capture under the light grants it at level face, which a session without step_up_of refuses as no_speech", async () => {
    const { key, person } = await merchantAndPerson();
    const parentSession = await createdSession(key, sessionBody("mandate", { facetoken: person.subject_ref, mandate: mandateTerms() }));
    const parentScreen = await bootedSession(parentSession.url);
    expect(parentScreen.presence, "a grant from nothing asks the voice").toBe("face_voice");
    // Where the voice is asked, a capture that says nothing is no presence.
    const silent = await screenCall("complete", parentScreen.screen_token, {
      capture_nonce: parentScreen.capture_nonce,
      face_template: person.capture({ nonce: parentScreen.capture_nonce, faceOnly: true }).descriptor,
      document: await passport(),
    });
    expect(silent.status, silent.text).toBe(200);
    expect(silent.body.outcome).toMatchObject({ approved: false, reason: "no_speech" });
    // The parent, granted by face and voice with the passport on record.
    const grantSession = await createdSession(key, sessionBody("mandate", { facetoken: person.subject_ref, mandate: mandateTerms() }));
    const grantScreen = await bootedSession(grantSession.url);
    const granted = await screenCall("complete", grantScreen.screen_token, {
      ...captureOf(person, grantScreen.capture_nonce),
      document: await passport(),
    });
    expect(granted.body.outcome, granted.text).toMatchObject({ approved: true });
    const parentId = (await readV1(key, grantSession.id)).result.mandate_id;

    const terms = mandateTerms({ ceiling: { amount: 20000, currency: "EUR", period: "month" }, step_up_of: parentId });
    const session = await createdSession(key, sessionBody("mandate", { facetoken: person.subject_ref, mandate: terms }));
    const screen = await bootedSession(session.url);
    expect(screen).toMatchObject({ presence: "face", mode: { mandate: { step_up_of: parentId } } });
    const done = await screenCall("complete", screen.screen_token, {
      capture_nonce: screen.capture_nonce,
      face_template: person.capture({ nonce: screen.capture_nonce, faceOnly: true }).descriptor,
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.outcome).toMatchObject({ approved: true, reason: null });
    const read = await readV1(key, session.id);
    expect(read.result).toMatchObject({ approved: true, facetoken: person.subject_ref, mandate_id: expect.stringMatching(/^mdt_/) });
    const mandate = await v1(`/mandates/${read.result.mandate_id}`, { key });
    expect(mandate.body).toMatchObject({
      status: "active",
      assurance_level: "face",
      ceiling: { amount: 20000, currency: "EUR", period: "month" },
    });
    // The receipt of the capture says what it proved: the face.
    const verified = await call("receipt-verify", { query: { code: done.body.outcome.receipt_code } });
    expect(verified.body).toMatchObject({ valid: true, assurance_level: "face" });
  });

  it("mandate: a money scope without a document on record is refused (document_required) and grants nothing; another person grants nothing", async () => {
    const { key, merchant, person } = await merchantAndPerson();
    for (const who of [person, await enrollStranger(merchant.keys.pk_test)]) {
      const session = await createdSession(key, sessionBody("mandate", { facetoken: person.subject_ref, mandate: mandateTerms() }));
      const screen = await bootedSession(session.url);
      const done = await screenCall("complete", screen.screen_token, captureOf(who, screen.capture_nonce));
      expect(done.status, done.text).toBe(200);
      expect(done.body.outcome.approved).toBe(false);
      const read = await readV1(key, session.id);
      expect(read.status).toBe("completed");
      expect(read.result).toMatchObject(
        who === person
          ? { reason: "document_required", code: "document_required", facetoken: person.subject_ref }
          : { reason: "subject_mismatch", facetoken: null },
      );
    }
    expect((await v1("/mandates", { key })).body.data).toEqual([]);
  });

  it("cancel: status cancelled, the person goes to cancel_url (return_url when none was given)", async () => {
    const { key } = await merchantAndPerson();
    for (const cancelUrl of ["https://shop.example/cancelled", undefined]) {
      const session = await createdSession(key, sessionBody("claim", cancelUrl ? { cancel_url: cancelUrl } : {}));
      const screen = await bootedSession(session.url);
      const done = await screenCall("cancel", screen.screen_token, { reason: "camera_unavailable" });
      expect(done.status, done.text).toBe(200);
      const back = new URL(done.body.return_to);
      expect(back.origin + back.pathname).toBe(cancelUrl ?? "https://shop.example/return");
      expect(back.searchParams.get("session_id")).toBe(session.id);
      expect(back.searchParams.get("status")).toBe("cancelled");
      expect(await readV1(key, session.id)).toMatchObject({
        status: "cancelled",
        result: { approved: false, reason: "camera_unavailable" },
      });
    }
  });
});
