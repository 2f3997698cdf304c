/**
 * The hosted screen's JSON endpoints over HTTP (functions/hosted-capture/api.ts): boot exchanges the
 * session token as the service; complete judges a simulator capture for each action through the
 * same operations as enrolment, face-identify and the transaction sink; cancel ends it. Happy,
 * error and security paths; expiry by the request clock.
 */
import { describe, expect, it } from "vitest";
import { PRESENCE_REASONS } from "../../shared/engine";
import { rpc } from "../../shared/kernel/db/rpc";
import { sha256Hex } from "../../shared/lib/crypto";
import { defaultTheme } from "../../shared/themes/theme";
import { capture } from "../harness/captures";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { enrollStranger, newStranger } from "../harness/identity";
import { ownThemeAssets } from "../harness/service";
import { authorizeBody, boot, createSession, openSession, readSession, screenCall } from "../harness/sessions";

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);
const HOSTED_CONSENT = { version: "hosted-capture-1", retention_days: 365 };
const BOOT_KEYS = [
  "action",
  "amount_cents",
  "capture_nonce",
  "card",
  "consent",
  "currency",
  "display_name",
  "environment",
  "expires_at",
  "external_txn_ref",
  "locale",
  "locales",
  "merchant_id",
  "opener_origin",
  "passkey",
  "presence",
  "screen_token",
  "session_id",
  "theme",
];

/** Opens a session with `sessionKey` and boots the screen on it; answers the session and the boot body. */
async function booted(
  sessionKey: string,
  body: Record<string, unknown> = { action: "login" },
  options: { now?: Date; locale?: string } = {},
) {
  const session = await openSession(sessionKey, body, options.now);
  const res = await boot(session.session_token, options);
  expect(res.status, res.text).toBe(200);
  return { session, screen: res.body as { screen_token: string; capture_nonce: string; [field: string]: any } };
}

function complete(screen: { screen_token: string }, body: unknown, options: Parameters<typeof screenCall>[3] = {}) {
  return screenCall("complete", screen.screen_token, body, options);
}

/** The capture body of a person's fresh capture answering the screen's nonce. */
function captureBody(
  person: { capture(options: { nonce: string; light: boolean }): { descriptor: unknown; nonce: string } },
  nonce: string,
) {
  const { descriptor } = person.capture({ nonce, light: true });
  return { capture_nonce: nonce, face_template: descriptor };
}

async function stateOf(key: string, sessionId: string, now?: Date) {
  return (await readSession(key, sessionId, now)).body;
}

describe("hosted-capture boot", () => {
  it("exchanges the token as the service: what the screen shows, the capture nonce and its credential; never the metadata", async () => {
    const m = await merchantFactory("Acme Market");
    const now = new Date();
    const body = authorizeBody({ metadata: { internal: "secret-ish" } });
    const { session, screen } = await booted(m.keys.sk_test, body, { now });
    expect(Object.keys(screen).sort()).toEqual(BOOT_KEYS);
    expect(screen).toMatchObject({
      session_id: session.session_id,
      merchant_id: m.merchant_id,
      environment: "test",
      action: "authorize",
      external_txn_ref: body.external_txn_ref,
      amount_cents: 1299,
      currency: "EUR",
      display_name: "Acme Market",
      expires_at: session.expires_at,
      locale: "en",
      locales: ["en", "pt-BR", "es"],
      consent: null,
      card: null,
      // The sandbox asks no passkey ceremony (D-485).
      passkey: null,
      // A payment's capture proves face and voice; only a mandate's step-up asks the face alone (D-428).
      presence: "face_voice",
      opener_origin: null,
    });
    // The capture nonce is the session's device challenge (docs/decisions.md, D-348).
    expect(screen.capture_nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(screen.screen_token).toMatch(/^hsc_/);
    expect(screen.theme).toMatchObject({
      merchant_id: m.merchant_id,
      surface: "capture",
      customized: false,
      theme: defaultTheme("capture", ownThemeAssets()),
    });
    expect(JSON.stringify(screen)).not.toContain("secret-ish");
    const [row] = await testDb()`select opened_by, state from private.hosted_sessions where id = ${session.session_id.slice(3)}::uuid`;
    expect(row).toEqual({ opened_by: "service", state: "opened" });
  });

  it("live mode: serves the capture's passkey ceremony, its options as issued but the challenge; a registration's user handle is kept with its challenge", async () => {
    const m = await merchantFactory("Acme Live");
    const rp = { id: "127.0.0.1", name: "Human-authorisation service" };
    const enroll = await booted(m.keys.sk_live, { action: "enroll" });
    expect(enroll.screen.passkey).toEqual({
      ceremony: "register",
      options: expect.objectContaining({
        rp,
        user: { id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), name: "Acme Live", displayName: "Acme Live" },
        pubKeyCredParams: [-7, -8, -257].map((alg) => ({ type: "public-key", alg })),
        authenticatorSelection: expect.objectContaining({ residentKey: "required", userVerification: "required" }),
        excludeCredentials: [],
      }),
      // A passkey the person holds already (made at another merchant) is asked for first (D-641).
      existing: { rpId: rp.id, timeout: 120_000, userVerification: "required", allowCredentials: [] },
    });
    expect(enroll.screen.passkey.options).not.toHaveProperty("challenge");
    const [issued] = await testDb()`select purpose, user_handle from private.device_challenges
      where challenge_hash = ${await sha256Hex(enroll.screen.capture_nonce)}`;
    expect(issued).toEqual({ purpose: "enroll", user_handle: enroll.screen.passkey.options.user.id });

    const pay = await booted(m.keys.sk_live, authorizeBody());
    expect(pay.screen.passkey).toEqual({
      ceremony: "assert",
      options: { rpId: rp.id, timeout: 120_000, userVerification: "required", allowCredentials: [] },
    });
    const [asked] = await testDb()`select purpose, user_handle from private.device_challenges
      where challenge_hash = ${await sha256Hex(pay.screen.capture_nonce)}`;
    expect(asked).toEqual({ purpose: "payment", user_handle: null });
  });

  it("a session a merchant's page opens in a popup names its origin; the boot gives it to the screen, which posts the end there alone (D-643)", async () => {
    const m = await merchantFactory();
    for (const origin of ["https://shop.example", "https://shop.example:8443", "http://localhost:5173", "http://127.0.0.1:3000"]) {
      const { screen } = await booted(m.keys.sk_live, { action: "login", opener_origin: origin });
      expect(screen.opener_origin).toBe(origin);
    }
    // Exactly an origin (no path, no trailing slash), https or a loopback host's http.
    for (const origin of [
      "https://shop.example/",
      "https://shop.example/pay",
      "http://shop.example",
      "javascript:alert(1)",
      "shop.example",
      "*",
    ]) {
      const res = await createSession(m.keys.sk_live, { action: "login", opener_origin: origin });
      expect(errorOf(res), origin).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(res.body.fields).toEqual(["opener_origin"]);
    }
  });

  it("offers the hosted consent for enroll; speaks the person's language; names the session's brand first, then the published theme's", async () => {
    const m = await merchantFactory("Plain Name");
    const enroll = await booted(m.keys.sk_test, { action: "enroll" }, { locale: "pt-BR,pt;q=0.9" });
    expect(enroll.screen).toMatchObject({ consent: HOSTED_CONSENT, locale: "pt-BR", display_name: "Plain Name" });
    expect((await booted(m.keys.sk_test, { action: "sign" }, { locale: "es-MX" })).screen.locale).toBe("es");

    const theme = {
      ...defaultTheme("capture", "https://cdn.acme.test/theme"),
      brand_name: "Acme Blue",
      color_primary: "200 50% 40%",
      mode: "dark",
    };
    await rpc(testDb(), "theme_set", { merchant_id: m.merchant_id, surface: "capture", theme });
    await rpc(testDb(), "theme_publish", { merchant_id: m.merchant_id, surface: "capture" });
    const themed = await booted(m.keys.sk_test);
    expect(themed.screen.display_name).toBe("Acme Blue");
    expect(themed.screen.theme).toMatchObject({ customized: true, theme });
    expect((await booted(m.keys.sk_test, { action: "login", brand: "Acme Kids" })).screen.display_name).toBe("Acme Kids");
  });

  it("a token booted twice: 409 SESSION_ALREADY_CONSUMED; unknown 404; expired 410 by the clock", async () => {
    const m = await merchantFactory();
    const t0 = new Date();
    const session = await openSession(m.keys.sk_test, { action: "login", ttl_seconds: 60 }, t0);
    expect((await boot(session.session_token, { now: at(t0, 1) })).status).toBe(200);
    expect(errorOf(await boot(session.session_token, { now: at(t0, 2) }))).toEqual({ status: 409, code: "SESSION_ALREADY_CONSUMED" });
    expect(errorOf(await boot(`hst_${"B".repeat(43)}`))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await boot({ token: 1 }))).toEqual({ status: 400, code: "INVALID_INPUT" });
    const stale = await openSession(m.keys.sk_test, { action: "login", ttl_seconds: 60 }, t0);
    expect(errorOf(await boot(stale.session_token, { now: at(t0, 60) }))).toEqual({ status: 410, code: "SESSION_EXPIRED" });
  });
});

describe("hosted-capture complete", () => {
  describe("each action with a simulator capture", () => {
    it("enroll: consent as offered, then the enrolment; the merchant reads the subject_ref and the same person then logs in", async () => {
      const m = await merchantFactory();
      const person = newStranger();
      const { session, screen } = await booted(m.keys.sk_test, { action: "enroll", metadata: { signup: "s-1" } });
      const res = await complete(screen, { ...captureBody(person, screen.capture_nonce), consent: { ...HOSTED_CONSENT, accepted: true } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        session_id: session.session_id,
        state: "completed",
        action: "enroll",
        ended_at: expect.any(String),
        outcome: { approved: true, reason: null, user_message: "You are enrolled. You can close this page.", receipt_code: null },
      });
      const read = await stateOf(m.keys.sk_test, session.session_id);
      expect(read).toMatchObject({ state: "completed", metadata: { signup: "s-1" } });
      expect(read.result).toEqual({
        approved: true,
        reason: null,
        subject_ref: expect.stringMatching(/^sub_/),
        consent: HOSTED_CONSENT,
        device_binding: "none",
      });
      const [consent] = await testDb()`select version, retention_days from private.consents c
        join private.subject_refs r on r.identity_id = c.identity_id and r.merchant_id = c.merchant_id
        where r.subject_ref = ${read.result.subject_ref} and r.merchant_id = ${m.merchant_id}::uuid`;
      expect(consent).toEqual(HOSTED_CONSENT);

      const login = await booted(m.keys.sk_test, { action: "login" });
      expect((await complete(login.screen, captureBody(person, login.screen.capture_nonce))).body.state).toBe("completed");
      expect((await stateOf(m.keys.sk_test, login.session.session_id)).result.subject_ref).toBe(read.result.subject_ref);
    });

    it("login: identify, then ACTION_LOGIN through the sink: a receipt the person keeps and receipt-verify confirms", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      const { session, screen } = await booted(m.keys.sk_test, { action: "login" });
      const res = await complete(screen, captureBody(person, screen.capture_nonce), { locale: "es" });
      expect(res.status, res.text).toBe(200);
      expect(res.body.outcome).toEqual({
        approved: true,
        reason: null,
        user_message: "Iniciaste sesión. Puedes cerrar esta página.",
        receipt_code: expect.stringMatching(/^RCPT-/),
      });
      const { result } = await stateOf(m.keys.sk_test, session.session_id);
      expect(result).toEqual({
        approved: true,
        reason: null,
        subject_ref: person.subject_ref,
        transaction_id: expect.any(String),
        assurance_level: "face_voice",
        receipt_id: expect.any(String),
        receipt_code: res.body.outcome.receipt_code,
        immutability_seal: expect.stringMatching(/^[0-9a-f]{64}$/),
        device_binding: "none",
      });
      const verified = await call("receipt-verify", { query: { code: result.receipt_code } });
      expect(verified.body).toMatchObject({
        valid: true,
        action: "ACTION_LOGIN",
        merchant_id: m.merchant_id,
        service_hash: `hosted_session:${session.session_id.slice(3)}`,
      });
      const [capture] = await testDb()`select capture_nonce, action from private.captures where id = ${result.transaction_id}::uuid`;
      expect(capture).toEqual({ capture_nonce: screen.capture_nonce, action: "ACTION_LOGIN" });
    });

    it("authorize: ACTION_PAYMENT for the session's amount and reference; without a document on record it is refused", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      const refused = await booted(m.keys.sk_test, authorizeBody());
      const no = await complete(refused.screen, captureBody(person, refused.screen.capture_nonce));
      expect(no.body).toMatchObject({ state: "failed", outcome: { approved: false, reason: "document_required", receipt_code: null } });
      expect((await stateOf(m.keys.sk_test, refused.session.session_id)).result).toEqual({
        approved: false,
        reason: "document_required",
        code: "DOCUMENT_REQUIRED",
        subject_ref: person.subject_ref,
      });

      const body = authorizeBody({ amount_cents: 4550, currency: "BRL" });
      const { session, screen } = await booted(m.keys.sk_test, body);
      const res = await complete(screen, { ...captureBody(person, screen.capture_nonce), document: await passport() });
      expect(res.body, res.text).toMatchObject({ state: "completed", outcome: { approved: true } });
      const { result } = await stateOf(m.keys.sk_test, session.session_id);
      expect(result).toMatchObject({ approved: true, subject_ref: person.subject_ref, assurance_level: "face_voice_doc" });
      const verified = await call("receipt-verify", { query: { code: result.receipt_code } });
      expect(verified.body).toMatchObject({ valid: true, action: "ACTION_PAYMENT", service_hash: body.external_txn_ref });
      const [row] =
        await testDb()`select amount_minor::int as amount, currency from private.captures where id = ${result.transaction_id}::uuid`;
      expect(row).toEqual({ amount: 4550, currency: "BRL" });
    });

    it("authorize with a passport that fails passive authentication: failed as document_rejected, with the sink's code", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      const { session, screen } = await booted(m.keys.sk_test, authorizeBody());
      const res = await complete(screen, {
        ...captureBody(person, screen.capture_nonce),
        document: await passport({ case: "wrong-signer" }),
      });
      expect(res.body, res.text).toMatchObject({
        state: "failed",
        outcome: { approved: false, reason: "document_rejected", receipt_code: null },
      });
      expect(res.body.outcome.user_message).toMatch(/could not be verified/);
      expect((await stateOf(m.keys.sk_test, session.session_id)).result).toEqual({
        approved: false,
        reason: "document_rejected",
        code: "DOCUMENT_REQUIRED",
        document_reason: "document_signature_invalid",
        subject_ref: person.subject_ref,
      });
    });

    it("one transaction: a refusal the database raises inside the act (an erased identity's face) still records the outcome", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      await testDb()`update private.identities set erased_at = now()
        where id = (select identity_id from private.subject_refs where subject_ref = ${person.subject_ref})`;
      const { session, screen } = await booted(m.keys.sk_test, { action: "enroll" });
      const body = { ...captureBody(person, screen.capture_nonce), consent: { ...HOSTED_CONSENT, accepted: true } };
      const res = await complete(screen, body);
      expect(res.body, res.text).toMatchObject({ state: "failed", outcome: { approved: false, reason: "identity_unreachable" } });
      expect((await stateOf(m.keys.sk_test, session.session_id)).result).toMatchObject({ code: "IDENTITY_UNREACHABLE" });
    });

    it("one transaction: an error that judged nothing leaves no trace of the act, and the session completes on a retry", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      const { session, screen } = await booted(m.keys.sk_test, { action: "login" });
      const body = captureBody(person, screen.capture_nonce);
      // A receipt the database refuses: the act fails after the identification and the capture were written.
      await testDb().unsafe(
        `alter table private.receipts add constraint refuses_receipts_of_this_test check (merchant_id <> '${m.merchant_id}'::uuid)`,
      );
      try {
        expect((await complete(screen, body)).status).toBe(500);
      } finally {
        await testDb()`alter table private.receipts drop constraint refuses_receipts_of_this_test`;
      }
      const captures = await testDb()`select count(*)::int as n from private.captures where capture_nonce = ${screen.capture_nonce}`;
      expect(captures[0].n).toBe(0);
      const claims = await testDb()`select count(*)::int as n from private.capture_nonces where capture_nonce = ${screen.capture_nonce}`;
      expect(claims[0].n, "the identification and the act were rolled back with the failed completion").toBe(0);
      expect((await stateOf(m.keys.sk_test, session.session_id)).state).toBe("opened");
      const retried = await complete(screen, body);
      expect(retried.body, retried.text).toMatchObject({ state: "completed", outcome: { approved: true } });
    });

    it("sign: ACTION_SIGN with the reference as the receipt's service_hash", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      const { session, screen } = await booted(m.keys.sk_test, { action: "sign", external_txn_ref: "contract:9.v1" });
      const res = await complete(screen, { ...captureBody(person, screen.capture_nonce), document: await passport() });
      expect(res.body.state, res.text).toBe("completed");
      const { result } = await stateOf(m.keys.sk_test, session.session_id);
      const verified = await call("receipt-verify", { query: { code: result.receipt_code } });
      expect(verified.body).toMatchObject({ valid: true, action: "ACTION_SIGN", service_hash: "contract:9.v1" });
    });
  });

  describe("refusals end the session as failed, with the reason in words", () => {
    it("a face the merchant does not know: not_recognised (in the person's language)", async () => {
      const m = await merchantFactory();
      const { session, screen } = await booted(m.keys.sk_test, { action: "login" });
      const res = await complete(screen, captureBody(newStranger(), screen.capture_nonce), { locale: "pt-BR" });
      expect(res.body).toMatchObject({
        state: "failed",
        outcome: {
          approved: false,
          reason: "not_recognised",
          user_message: "Não reconhecemos você. Talvez seja preciso fazer o cadastro primeiro.",
        },
      });
      expect((await stateOf(m.keys.sk_test, session.session_id)).result).toEqual({
        approved: false,
        reason: "not_recognised",
        subject_ref: null,
      });
    });

    it("a photo (no pulse) on login and on enroll: the engine's liveness reason", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      for (const action of ["login", "enroll"]) {
        const { session, screen } = await booted(m.keys.sk_test, { action });
        const { descriptor } = person.capture({ nonce: screen.capture_nonce, light: true, attack: "photo" });
        const consent = action === "enroll" ? { consent: { ...HOSTED_CONSENT, accepted: true } } : {};
        const res = await complete(screen, { capture_nonce: screen.capture_nonce, face_template: descriptor, ...consent });
        expect(res.body.state, res.text).toBe("failed");
        expect(PRESENCE_REASONS).toContain(res.body.outcome.reason);
        expect(res.body.outcome.user_message).toEqual(expect.any(String));
        const { result } = await stateOf(m.keys.sk_test, session.session_id);
        expect(result.code).toBe(action === "login" ? "LIVE_CAPTURE_REQUIRED" : "BIOMETRIC_LIVENESS_FAILED");
      }
    });

    it("a sandbox scenario forces a refusal on the screen too (liveness_fail, vrc_coerced)", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      const forced = await booted(m.keys.sk_test);
      const failed = await complete(forced.screen, captureBody(person, forced.screen.capture_nonce), {
        headers: { "x-service-scenario": "liveness_fail" },
      });
      expect(failed.body.outcome).toMatchObject({ approved: false, reason: "liveness_fail" });
      const coerced = await booted(m.keys.sk_test);
      const res = await complete(coerced.screen, captureBody(person, coerced.screen.capture_nonce), {
        headers: { "x-service-scenario": "vrc_coerced" },
      });
      expect(res.body.outcome).toMatchObject({ approved: false, reason: "coercion_detected" });
      expect((await stateOf(m.keys.sk_test, coerced.session.session_id)).result).toMatchObject({
        code: "COERCION_DETECTED",
        subject_ref: person.subject_ref,
      });
    });
  });

  describe("errors leave the session opened", () => {
    it("a capture for another nonce, a missing face_template, an unknown field, consent not accepted: then the right capture completes", async () => {
      const m = await merchantFactory();
      const person = newStranger();
      const { session, screen } = await booted(m.keys.sk_test, { action: "enroll" });
      const consent = { ...HOSTED_CONSENT, accepted: true };
      const other = capture(1);
      const wrongNonce = await complete(screen, { capture_nonce: other.nonce, face_template: other.descriptor, consent });
      expect(wrongNonce.status).toBe(400);
      expect(wrongNonce.body).toMatchObject({ code: "INVALID_INPUT", fields: ["capture_nonce"] });
      expect(errorOf(await complete(screen, { capture_nonce: screen.capture_nonce, consent }))).toEqual({
        status: 422,
        code: "FACE_TEMPLATE_REQUIRED",
      });
      const good = captureBody(person, screen.capture_nonce);
      expect(errorOf(await complete(screen, { ...good, consent, bypass: true }))).toEqual({ status: 400, code: "INVALID_INPUT" });
      for (const refused of [
        { ...HOSTED_CONSENT },
        { ...HOSTED_CONSENT, accepted: true, version: "other" },
        { ...consent, retention_days: 30 },
      ]) {
        const res = await complete(screen, { ...good, consent: refused });
        expect(errorOf(res)).toEqual({ status: 403, code: "CONSENT_REQUIRED" });
        expect(res.body.consent).toEqual(HOSTED_CONSENT);
      }
      expect(errorOf(await complete(screen, "capture"))).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect((await stateOf(m.keys.sk_test, session.session_id)).state).toBe("opened");
      expect((await complete(screen, { ...good, consent })).body.state).toBe("completed");
    });

    it("a descriptor version 1 (no light challenge: not what the screen sends) is 400 naming face_template.version, on enrol and on login", async () => {
      const m = await merchantFactory();
      const known = await enrollStranger(m.keys.pk_test);
      for (const [action, person] of [
        ["enroll", newStranger()],
        ["login", known],
      ] as const) {
        const { session, screen } = await booted(m.keys.sk_test, { action });
        const unlit = person.capture({ nonce: screen.capture_nonce });
        expect(unlit.descriptor.version).toBe(1);
        const consent = action === "enroll" ? { consent: { ...HOSTED_CONSENT, accepted: true } } : {};
        const res = await complete(screen, { capture_nonce: screen.capture_nonce, face_template: unlit.descriptor, ...consent });
        expect(res.status, res.text).toBe(400);
        expect(res.body).toMatchObject({ code: "INVALID_INPUT", fields: ["face_template.version"] });
        expect((await stateOf(m.keys.sk_test, session.session_id)).state).toBe("opened");
        const lit = await complete(screen, { ...captureBody(person, screen.capture_nonce), ...consent });
        expect(lit.body.state, lit.text).toBe("completed");
      }
    });

    it("a live session refuses the sandbox scenario header (400 SCENARIO_NOT_ALLOWED) and stays opened", async () => {
      const m = await merchantFactory();
      const { session, screen } = await booted(m.keys.sk_live);
      const res = await complete(screen, captureBody(newStranger(), screen.capture_nonce), {
        headers: { "x-service-scenario": "success" },
      });
      expect(errorOf(res)).toEqual({ status: 400, code: "SCENARIO_NOT_ALLOWED" });
      expect((await stateOf(m.keys.sk_live, session.session_id)).state).toBe("opened");
    });
  });

  describe("the session's end", () => {
    it("a completed session refuses another complete and a cancel (409 SESSION_ENDED with its state)", async () => {
      const m = await merchantFactory();
      const { screen } = await booted(m.keys.sk_test);
      const body = captureBody(newStranger(), screen.capture_nonce);
      expect((await complete(screen, body)).body.state).toBe("failed");
      for (const res of [await complete(screen, body), await screenCall("cancel", screen.screen_token, {})]) {
        expect(res.status).toBe(409);
        expect(res.body).toMatchObject({ code: "SESSION_ENDED", state: "failed" });
      }
    });

    it("410 SESSION_EXPIRED for complete and cancel from expires_at on (request clock); the read says expired", async () => {
      const m = await merchantFactory();
      const person = await enrollStranger(m.keys.pk_test);
      const t0 = new Date();
      const { session, screen } = await booted(m.keys.sk_test, { action: "login", ttl_seconds: 60 }, { now: t0 });
      const late = at(t0, 60);
      expect(errorOf(await complete(screen, captureBody(person, screen.capture_nonce), { now: late }))).toEqual({
        status: 410,
        code: "SESSION_EXPIRED",
      });
      expect(errorOf(await screenCall("cancel", screen.screen_token, {}, { now: late }))).toEqual({ status: 410, code: "SESSION_EXPIRED" });
      expect(await stateOf(m.keys.sk_test, session.session_id, late)).toMatchObject({ state: "expired", result: null });
    });
  });
});

describe("hosted-capture cancel", () => {
  it("the person cancels: cancelled with the reason; complete is then refused", async () => {
    const m = await merchantFactory();
    const { session, screen } = await booted(m.keys.sk_test, { action: "enroll" });
    const res = await screenCall("cancel", screen.screen_token, {});
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      session_id: session.session_id,
      state: "cancelled",
      action: "enroll",
      ended_at: expect.any(String),
      outcome: { approved: false, reason: "person_cancelled", user_message: "You cancelled. No capture was taken.", receipt_code: null },
    });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect((await stateOf(m.keys.sk_test, session.session_id)).result).toEqual({ approved: false, reason: "person_cancelled" });
    const after = await complete(screen, captureBody(newStranger(), screen.capture_nonce));
    expect(after.body).toMatchObject({ code: "SESSION_ENDED", state: "cancelled" });
  });

  it("names why: permission_denied and camera_unavailable; an unknown reason is 400", async () => {
    const m = await merchantFactory();
    for (const reason of ["permission_denied", "camera_unavailable"]) {
      const { screen } = await booted(m.keys.sk_test);
      const res = await screenCall("cancel", screen.screen_token, { reason }, { locale: "es" });
      expect(res.body.outcome).toMatchObject({ reason, user_message: expect.stringContaining("No se tomó ninguna captura.") });
    }
    const { screen } = await booted(m.keys.sk_test);
    expect(errorOf(await screenCall("cancel", screen.screen_token, { reason: "bored" }))).toEqual({ status: 400, code: "INVALID_INPUT" });
  });
});

describe("hosted-capture security", () => {
  it("the screen credential is required and must be one the exchange issued (before the body is read)", async () => {
    for (const route of ["complete", "cancel"] as const) {
      expect(errorOf(await screenCall(route, null, {}))).toEqual({ status: 401, code: "SCREEN_TOKEN_REQUIRED" });
      expect(errorOf(await screenCall(route, "hsc_short", "not json at all"))).toEqual({ status: 401, code: "SCREEN_TOKEN_INVALID" });
      expect(errorOf(await screenCall(route, `hsc_${"C".repeat(43)}`, {}))).toEqual({ status: 401, code: "SCREEN_TOKEN_INVALID" });
    }
  });

  it("a credential acts only on its own session: another session's capture is refused and that session is untouched", async () => {
    const [m, other] = await Promise.all([merchantFactory(), merchantFactory()]);
    const person = await enrollStranger(other.keys.pk_test);
    const mine = await booted(m.keys.sk_test);
    const theirs = await booted(other.keys.sk_test);
    const res = await complete(mine.screen, captureBody(person, theirs.screen.capture_nonce));
    expect(res.body, res.text).toMatchObject({ code: "INVALID_INPUT", fields: ["capture_nonce"] });
    expect((await stateOf(other.keys.sk_test, theirs.session.session_id)).state).toBe("opened");
    expect((await stateOf(m.keys.sk_test, mine.session.session_id)).state).toBe("opened");
  });

  it("a person enrolled with another merchant is not recognised in this merchant's session", async () => {
    const [m, other] = await Promise.all([merchantFactory(), merchantFactory()]);
    const person = await enrollStranger(other.keys.pk_test);
    const { screen } = await booted(m.keys.sk_test);
    expect((await complete(screen, captureBody(person, screen.capture_nonce))).body.outcome.reason).toBe("not_recognised");
  });

  it("the screen's JSON routes answer only POST", async () => {
    expect(errorOf(await call("hosted-capture/boot"))).toEqual({ status: 405, code: "METHOD_NOT_ALLOWED" });
  });
});
