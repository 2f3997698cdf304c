/**
 * handoff-register-public (spec section 5) over HTTP: a hosted session begun on one device and
 * finished on another through a short-lived, single-use handoff code shown as a QR code; the
 * registrant's poll; every refusal; racing claims (real parallel requests) of which exactly one wins.
 */
import { encode } from "uqr";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, freshIp, inOneWindow } from "../harness/http";
import { boot, openSession } from "../harness/sessions";

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

function register(key: string | null, body: unknown, now?: Date) {
  return call("handoff-register-public", { key, body, now });
}

function claim(code: unknown, now?: Date, ip = freshIp()) {
  // A client address of its own for each claim unless one is given (claims are limited per IP).
  return call("handoff-register-public/claim", { body: { handoff_code: code }, now, from: ip });
}

function status(key: string, handoffId: string, now?: Date) {
  return call("handoff-register-public/status", { key, query: { handoff_id: handoffId }, now });
}

describe("handoff-register-public", () => {
  describe("happy", () => {
    it("the desktop registers with the publishable key; the phone claims the code once and boots the session with it", async () => {
      const m = await merchantFactory();
      const session = await openSession(m.keys.sk_test, { action: "login" });
      const now = new Date();
      const res = await register(m.keys.pk_test, { session_token: session.session_token }, now);
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.body).toMatchObject({
        handoff_id: expect.stringMatching(/^hof_[0-9a-f]{32}$/),
        handoff_code: expect.stringMatching(/^hoc_[A-Za-z0-9_-]{43}$/),
        state: "pending",
        claimed_at: null,
        session: { session_id: session.session_id, state: "open" },
      });
      expect(new Date(res.body.expires_at).getTime()).toBe(now.getTime() + 120_000);
      expect(res.body.url).toMatch(new RegExp(`/functions/v1/hosted-capture/session#handoff=${res.body.handoff_code}$`));
      // the QR code is the URL, drawn by the service: its dark modules are exactly those of the URL's QR matrix
      const svg: string = res.body.qr_svg;
      expect(svg.startsWith("<svg")).toBe(true);
      expect(svg).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
      const drawn = new Set([...svg.matchAll(/M(\d+),(\d+)h/g)].map(([, x, y]) => `${Number(x) / 6},${Number(y) / 6}`));
      const matrix = encode(res.body.url, { ecc: "M", border: 2 }).data.flatMap((row, y) =>
        row.flatMap((dark, x) => (dark ? [`${x},${y}`] : [])),
      );
      expect(drawn).toEqual(new Set(matrix));

      // only hashes and a sealed token are stored
      const [row] =
        await testDb()`select code_hash, sealed_session_token from private.handoffs where id = ${res.body.handoff_id.slice(4)}::uuid`;
      expect(row.code_hash).toBe(await sha256Hex(res.body.handoff_code));
      expect(row.sealed_session_token).not.toContain(session.session_token.slice(4));

      const claimed = await claim(res.body.handoff_code, at(now, 30));
      expect(claimed.status, claimed.text).toBe(200);
      expect(claimed.body).toMatchObject({ session_token: session.session_token, handoff: { state: "claimed" } });
      const [after] = await testDb()`select sealed_session_token from private.handoffs where id = ${res.body.handoff_id.slice(4)}::uuid`;
      expect(after.sealed_session_token).toBeNull();

      expect(errorOf(await claim(res.body.handoff_code, at(now, 31)))).toEqual({ status: 404, code: "HANDOFF_CODE_INVALID" });
      const booted = await boot(claimed.body.session_token);
      expect(booted.status, booted.text).toBe(200);
      const polled = await status(m.keys.pk_test, res.body.handoff_id);
      expect(polled.status, polled.text).toBe(200);
      expect(polled.body).toMatchObject({ state: "claimed", session: { session_id: session.session_id, state: "opened" } });
    });

    it("a new handoff of the same session replaces the old code; ttl_seconds never outlives the session", async () => {
      const m = await merchantFactory();
      const now = new Date();
      const session = await openSession(m.keys.sk_test, { action: "login", ttl_seconds: 60 }, now);
      const first = await register(m.keys.pk_test, { session_token: session.session_token, ttl_seconds: 600 }, now);
      expect(first.status, first.text).toBe(201);
      expect(new Date(first.body.expires_at).getTime()).toBe(new Date(session.expires_at).getTime());
      const second = await register(m.keys.sk_test, { session_token: session.session_token, ttl_seconds: 30 }, at(now, 5));
      expect(second.status, second.text).toBe(201);
      expect((await status(m.keys.pk_test, first.body.handoff_id, at(now, 6))).body.state).toBe("replaced");
      expect(errorOf(await claim(first.body.handoff_code, at(now, 6)))).toEqual({ status: 404, code: "HANDOFF_CODE_INVALID" });
      // expired at 35 s: neither claimable nor pending
      expect((await status(m.keys.pk_test, second.body.handoff_id, at(now, 36))).body.state).toBe("expired");
      expect(errorOf(await claim(second.body.handoff_code, at(now, 36)))).toEqual({ status: 404, code: "HANDOFF_CODE_INVALID" });
    });

    it("of racing claims exactly one gets the session token", async () => {
      const m = await merchantFactory();
      const session = await openSession(m.keys.sk_test, { action: "login" });
      const res = await register(m.keys.pk_test, { session_token: session.session_token });
      const results = await Promise.all(Array.from({ length: 8 }, () => claim(res.body.handoff_code)));
      expect(results.filter((r) => r.status === 200).length).toBe(1);
      expect(results.filter((r) => r.status === 404 && r.body.code === "HANDOFF_CODE_INVALID").length).toBe(7);
    });
  });

  describe("the hosted screen's own routes", () => {
    it("the screen registers with the session token alone and polls with it; another session's token reads nothing", async () => {
      const m = await merchantFactory();
      const session = await openSession(m.keys.sk_test, { action: "login" });
      const other = await openSession(m.keys.sk_test, { action: "login" });
      const res = await call("hosted-capture/handoff", { body: { session_token: session.session_token } });
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.body).toMatchObject({ state: "pending", session: { session_id: session.session_id } });
      const poll = (token: string) =>
        call("hosted-capture/handoff/status", { body: { session_token: token, handoff_id: res.body.handoff_id } });
      expect((await poll(session.session_token)).body).toMatchObject({ handoff_id: res.body.handoff_id, state: "pending" });
      expect(errorOf(await poll(other.session_token))).toEqual({ status: 404, code: "not_found" });
      expect((await claim(res.body.handoff_code)).body.session_token).toBe(session.session_token);
      expect((await poll(session.session_token)).body.state).toBe("claimed");
      expect(errorOf(await call("hosted-capture/handoff", { body: { session_token: "hst_nothing" } }))).toEqual({
        status: 404,
        code: "not_found",
      });
      expect(errorOf(await call("hosted-capture/handoff", { body: { session_token: other.session_token, ttl_seconds: 5 } }))).toEqual({
        status: 400,
        code: "INVALID_HANDOFF_TTL",
      });
    });
  });

  describe("errors", () => {
    it("registering needs a key of the session's merchant and environment, and an unopened, unexpired session", async () => {
      const m = await merchantFactory();
      const other = await merchantFactory();
      const now = new Date();
      const session = await openSession(m.keys.sk_test, { action: "login", ttl_seconds: 60 }, now);
      expect(errorOf(await register(null, { session_token: session.session_token }))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
      expect(errorOf(await register("pk_test_nope", { session_token: session.session_token }))).toEqual({
        status: 401,
        code: "INVALID_API_KEY",
      });
      expect(errorOf(await register(other.keys.pk_test, { session_token: session.session_token }))).toEqual({
        status: 404,
        code: "not_found",
      });
      expect(errorOf(await register(m.keys.pk_live, { session_token: session.session_token }))).toEqual({ status: 404, code: "not_found" });
      expect(errorOf(await register(m.keys.pk_test, { session_token: "hst_unknown" }))).toEqual({ status: 404, code: "not_found" });
      expect(errorOf(await register(m.keys.pk_test, { session_token: session.session_token }, at(now, 61)))).toEqual({
        status: 410,
        code: "SESSION_EXPIRED",
      });
      expect((await boot(session.session_token)).status).toBe(200);
      expect(errorOf(await register(m.keys.pk_test, { session_token: session.session_token }))).toEqual({
        status: 409,
        code: "SESSION_ALREADY_CONSUMED",
      });
    });

    it("answers malformed input with its code", async () => {
      const m = await merchantFactory();
      const session = await openSession(m.keys.sk_test, { action: "login" });
      for (const ttl of [29, 601, 60.5, "60"]) {
        expect(errorOf(await register(m.keys.pk_test, { session_token: session.session_token, ttl_seconds: ttl }))).toEqual({
          status: 400,
          code: "INVALID_HANDOFF_TTL",
        });
      }
      for (const body of [{}, { session_token: 1 }, { session_token: session.session_token, extra: true }]) {
        expect(errorOf(await register(m.keys.pk_test, body)), JSON.stringify(body)).toEqual({ status: 400, code: "INVALID_INPUT" });
      }
      expect(errorOf(await claim(undefined))).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(errorOf(await claim("hoc_short"))).toEqual({ status: 404, code: "HANDOFF_CODE_INVALID" });
      expect(errorOf(await claim(`hoc_${"a".repeat(43)}`))).toEqual({ status: 404, code: "HANDOFF_CODE_INVALID" });
      expect(errorOf(await call("handoff-register-public/status", { key: m.keys.pk_test }))).toEqual({
        status: 400,
        code: "INVALID_INPUT",
      });
      expect(errorOf(await status(m.keys.pk_test, "hof_nothing"))).toEqual({ status: 404, code: "not_found" });
    });

    it("claims are limited to 300 a minute per client address (429 RATE_LIMITED with Retry-After)", { timeout: 90_000 }, async () => {
      const ip = freshIp();
      // 301 claims one after another take seconds on a loaded machine: all in one window of the limiter's clock.
      await inOneWindow(30);
      const answers = [];
      for (let i = 0; i < 301; i++) answers.push(await claim(`hoc_${"c".repeat(43)}`, undefined, ip));
      expect(answers.slice(0, 300).every((r) => r.body.code === "HANDOFF_CODE_INVALID")).toBe(true);
      expect(errorOf(answers[300])).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect(Number(answers[300].headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await claim(`hoc_${"c".repeat(43)}`)).status).toBe(404);
    });

    it("another merchant's handoff is not found", async () => {
      const m = await merchantFactory();
      const other = await merchantFactory();
      const session = await openSession(m.keys.sk_test, { action: "login" });
      const res = await register(m.keys.pk_test, { session_token: session.session_token });
      expect(errorOf(await status(other.keys.pk_test, res.body.handoff_id))).toEqual({ status: 404, code: "not_found" });
    });
  });
});
