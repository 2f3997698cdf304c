/**
 * hosted-session-consume (function API 4.13) and hosted-session-get over HTTP: the single-use
 * exchange by the service role or the merchant's own secret key, what it issues, every refusal,
 * and the merchant's read of the state, expiry derived from the request clock with nothing running.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { consumeSession, openSession, readSession } from "../harness/sessions";

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

async function storedRow(sessionId: string) {
  const [row] = await testDb()`select * from private.hosted_sessions where id = ${sessionId.slice(3)}::uuid`;
  return row;
}

describe("hosted-session-consume", () => {
  describe("happy", () => {
    it("the service role exchanges the token for the session, a capture nonce and a screen credential (stored as its hash)", async () => {
      const m = await merchantFactory();
      const created = await openSession(m.keys.sk_test, { action: "login", metadata: { cart: "7" } });
      const now = new Date();
      const res = await consumeSession(created.session_token, { now });
      expect(res.status, res.text).toBe(200);
      const { session_token: _token, url: _url, ...fields } = created;
      expect(res.body).toMatchObject({ ...fields, state: "opened", opened_at: now.toISOString(), metadata: { cart: "7" } });
      expect(res.body).not.toHaveProperty("session_token");
      // The capture nonce is the session's device challenge: 32 random bytes in base64url (docs/decisions.md, D-348).
      expect(res.body.capture_nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(res.body.screen_token).toMatch(/^hsc_[A-Za-z0-9_-]{43}$/);
      expect(res.headers.get("cache-control")).toBe("no-store");

      const row = await storedRow(created.session_id);
      expect(row).toMatchObject({ state: "opened", opened_by: "service", capture_nonce: res.body.capture_nonce });
      expect(row.screen_token_hash).toBe(await sha256Hex(res.body.screen_token));
    });

    it("the merchant's own secret key exchanges its own session", async () => {
      const m = await merchantFactory();
      const created = await openSession(m.keys.sk_test, { action: "enroll" });
      const res = await consumeSession(created.session_token, { key: m.keys.sk_test });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ session_id: created.session_id, state: "opened", action: "enroll" });
      expect((await storedRow(created.session_id)).opened_by).toBe("merchant");
    });
  });

  describe("single use and expiry", () => {
    it("a token consumed twice: 409 SESSION_ALREADY_CONSUMED, whoever asks second", async () => {
      const m = await merchantFactory();
      for (const [first, second] of [
        [{}, {}],
        [{ key: m.keys.sk_test }, {}],
        [{}, { key: m.keys.sk_test }],
      ] as const) {
        const created = await openSession(m.keys.sk_test);
        expect((await consumeSession(created.session_token, first)).status).toBe(200);
        const again = await consumeSession(created.session_token, second);
        expect(errorOf(again)).toEqual({ status: 409, code: "SESSION_ALREADY_CONSUMED" });
        expect(again.body).not.toHaveProperty("screen_token");
      }
    });

    it("410 SESSION_EXPIRED from expires_at on, by the request clock; a second before, it works", async () => {
      const m = await merchantFactory();
      const t0 = new Date();
      const late = await openSession(m.keys.sk_test, { action: "login", ttl_seconds: 60 }, t0);
      expect(errorOf(await consumeSession(late.session_token, { now: at(t0, 60) }))).toEqual({ status: 410, code: "SESSION_EXPIRED" });
      expect(errorOf(await consumeSession(late.session_token, { now: at(t0, 3600) }))).toEqual({ status: 410, code: "SESSION_EXPIRED" });
      expect((await storedRow(late.session_id)).state).toBe("open");

      const inTime = await openSession(m.keys.sk_test, { action: "login", ttl_seconds: 60 }, t0);
      expect((await consumeSession(inTime.session_token, { now: at(t0, 59) })).status).toBe(200);
      // consumed, then expired: the expiry is what it is now
      expect(errorOf(await consumeSession(inTime.session_token, { now: at(t0, 61) }))).toEqual({ status: 410, code: "SESSION_EXPIRED" });
    });
  });

  describe("errors", () => {
    it("404 not_found for an unknown or malformed token; 400 INVALID_INPUT without one", async () => {
      expect(errorOf(await consumeSession(`hst_${"A".repeat(43)}`))).toEqual({ status: 404, code: "not_found" });
      expect(errorOf(await consumeSession("not-a-token"))).toEqual({ status: 404, code: "not_found" });
      expect(errorOf(await consumeSession(undefined))).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(errorOf(await consumeSession(42))).toEqual({ status: 400, code: "INVALID_INPUT" });
    });
  });

  describe("security", () => {
    it("another merchant's key (or the merchant's other environment) gets 404 and the token stays unused", async () => {
      const [m, other] = await Promise.all([merchantFactory(), merchantFactory()]);
      const created = await openSession(m.keys.sk_test);
      expect(errorOf(await consumeSession(created.session_token, { key: other.keys.sk_test }))).toEqual({ status: 404, code: "not_found" });
      expect(errorOf(await consumeSession(created.session_token, { key: m.keys.sk_live }))).toEqual({ status: 404, code: "not_found" });
      expect((await storedRow(created.session_id)).state).toBe("open");
      expect((await consumeSession(created.session_token, { key: m.keys.sk_test })).status).toBe(200);
    });

    it("publishable keys are rejected (401 AUTH_REQUIRED); no credential is 401 API_KEY_REQUIRED; a wrong service key is no service role", async () => {
      const m = await merchantFactory();
      const created = await openSession(m.keys.sk_test);
      expect(errorOf(await consumeSession(created.session_token, { key: m.keys.pk_test }))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
      const bogus = { authorization: `Bearer svc_${"0".repeat(64)}` };
      expect(errorOf(await consumeSession(created.session_token, { key: undefined, headers: bogus }))).toEqual({
        status: 401,
        code: "API_KEY_REQUIRED",
      });
      expect((await storedRow(created.session_id)).state).toBe("open");
    });
  });
});

describe("hosted-session-get", () => {
  it("reads open, opened and expired (derived at read: nothing ran), by hs_ id or bare uuid", async () => {
    const m = await merchantFactory();
    const t0 = new Date();
    const created = await openSession(m.keys.sk_test, { action: "sign", metadata: { doc: "d-1" } }, t0);
    const read = await readSession(m.keys.sk_test, created.session_id, t0);
    expect(read.status, read.text).toBe(200);
    const { session_token: _token, url: _url, ...fields } = created;
    expect(read.body).toEqual(fields);
    expect(read.headers.get("cache-control")).toBe("no-store");

    await consumeSession(created.session_token, { now: at(t0, 10) });
    const uuid = created.session_id.slice(3).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
    expect((await readSession(m.keys.sk_test, uuid, at(t0, 11))).body).toMatchObject({
      state: "opened",
      opened_at: at(t0, 10).toISOString(),
      ended_at: null,
    });
    const expired = await readSession(m.keys.sk_test, created.session_id, at(t0, 300));
    expect(expired.body).toMatchObject({ state: "expired", ended_at: at(t0, 300).toISOString(), result: null });
    expect((await storedRow(created.session_id)).state).toBe("opened");
  });

  it("another merchant's session, the other environment, an unknown and a malformed id: the same 404", async () => {
    const [m, other] = await Promise.all([merchantFactory(), merchantFactory()]);
    const created = await openSession(m.keys.sk_test);
    const answers = await Promise.all([
      readSession(other.keys.sk_test, created.session_id),
      readSession(m.keys.sk_live, created.session_id),
      readSession(m.keys.sk_test, `hs_${"0".repeat(32)}`),
      readSession(m.keys.sk_test, "hs_nope"),
    ]);
    for (const answer of answers) expect(errorOf(answer)).toEqual({ status: 404, code: "not_found" });
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
  });

  it("secret keys only: 401 AUTH_REQUIRED for a publishable key; 400 without session_id", async () => {
    const m = await merchantFactory();
    const created = await openSession(m.keys.sk_test);
    expect(errorOf(await readSession(m.keys.pk_test, created.session_id))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
    const missing = await readSession(m.keys.sk_test, "");
    expect(missing.status).toBe(400);
  });
});
