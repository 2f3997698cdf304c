import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../scripts/local/server";
import { randomHex } from "../../shared/lib/crypto";
import { createKey } from "../../shared/merchants/accounts";
import { ownedMerchant } from "../harness/agents";
import { merchantFactory, testDb } from "../harness/factories";
import { type CallResult, call, errorOf, freshIp, inOneWindow, replayHeaders } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { boot, openSession, readSession } from "../harness/sessions";
import { startVariantServer } from "../harness/variant-server";
import { requestCard } from "../harness/verifications";

/**
 * Rate limits count per merchant and environment, whichever key a request comes through
 * (docs/decisions.md, D-022); face-identify also per client IP for publishable keys; the
 * transaction sink has its own limit; the hosted screen's endpoints count per session secret and
 * per client IP. The figures are the documented ones: the tests spend them.
 */

/** Sends `requests` in waves of `width` concurrent requests; answers in order. */
async function inWaves(requests: (() => Promise<CallResult>)[], width = 16): Promise<CallResult[]> {
  const results: CallResult[] = [];
  for (let i = 0; i < requests.length; i += width) results.push(...(await Promise.all(requests.slice(i, i + width).map((r) => r()))));
  return results;
}

function statuses(results: CallResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** face-identify with a body that is refused after the limit is counted (no descriptor). */
function identifyMalformed(key: string, ip: string) {
  return call("face-identify", { key, body: { capture_nonce: "x" }, headers: replayHeaders(), from: ip });
}

// A test may wait up to 20 s for a fresh window (inOneWindow) before it spends its budget.
describe("rate limits", { timeout: 60_000 }, () => {
  describe("face-identify", () => {
    it("limits a publishable key to 60 a minute per client IP; another IP and the secret key go on", async () => {
      await inOneWindow(20);
      const merchant = await merchantFactory();
      const ip = freshIp();
      const spent = await inWaves(Array.from({ length: 60 }, () => () => identifyMalformed(merchant.keys.pk_test, ip)));
      expect(statuses(spent)).toEqual({ 400: 60 });
      const refused = await identifyMalformed(merchant.keys.pk_test, ip);
      expect(errorOf(refused)).toEqual({ status: 429, code: "RATE_LIMITED" });
      // The address is the connection's: a CF-Connecting-IP the client makes up changes nothing (issue 25).
      const spoofed = await call("face-identify", {
        key: merchant.keys.pk_test,
        body: { capture_nonce: "x" },
        headers: { ...replayHeaders(), "cf-connecting-ip": freshIp(), "x-real-ip": freshIp() },
        from: ip,
      });
      expect(errorOf(spoofed)).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(refused.body.retry_after_seconds).toBeGreaterThan(0);
      expect((await identifyMalformed(merchant.keys.pk_test, freshIp())).status).toBe(400);
      expect((await identifyMalformed(merchant.keys.sk_test, ip)).status).toBe(400);
    });

    it("limits a merchant to 600 a minute per environment, counted over all of its keys", async () => {
      await inOneWindow(20);
      const merchant = await merchantFactory();
      const second = await createKey(testDb(), merchant.merchant_id, "secret", "test");
      const keys = [merchant.keys.pk_test, merchant.keys.sk_test, second.key];
      // Publishable calls from 20 addresses, so no address reaches its own limit of 60.
      const addresses = Array.from({ length: 20 }, freshIp);
      const spent = await inWaves(Array.from({ length: 600 }, (_, i) => () => identifyMalformed(keys[i % 3], addresses[i % 20])));
      expect(statuses(spent)).toEqual({ 400: 600 });
      for (const key of keys) expect(errorOf(await identifyMalformed(key, freshIp()))).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect((await identifyMalformed(merchant.keys.sk_live, freshIp())).status).toBe(400);
    });

    it("answers an unmatched face with confidence 0, however close it came (no similarity oracle)", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      // A face at cosine 0.6 from the enrolled one: below the 0.75 gate, far above chance.
      const other = person.capture({ similarity: 0.6 });
      const res = await call("face-identify", {
        key: merchant.keys.pk_test,
        body: { face_template: other.descriptor, capture_nonce: other.nonce },
        headers: replayHeaders(),
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ matched: false, subject_ref: null, confidence: 0 });
      const same = person.capture();
      const matched = await call("face-identify", {
        key: merchant.keys.pk_test,
        body: { face_template: same.descriptor, capture_nonce: same.nonce },
        headers: replayHeaders(),
      });
      expect(matched.body.matched).toBe(true);
      expect(matched.body.confidence).toBeGreaterThanOrEqual(0.75);
    });
  });

  describe("process-biovital-transaction", () => {
    it("limits a merchant to 1200 a minute per environment, counted over all of its keys", { timeout: 180_000 }, async () => {
      const send = (key: string) => call("process-biovital-transaction", { key, body: {}, headers: replayHeaders() });
      // The 1,200 requests and the refusals must land in one minute of the limiter's windows. On a
      // busy machine they can outlast the 20 s inOneWindow leaves (seen at a run's start); then the
      // window has moved on and the answers prove nothing either way, so the spend is made once more,
      // in a fresh minute with a fresh merchant. Within one minute, every assertion holds as before.
      for (let attempt = 1; ; attempt++) {
        await inOneWindow(20);
        const minute = Math.floor(Date.now() / 60_000);
        const merchant = await merchantFactory();
        const second = await createKey(testDb(), merchant.merchant_id, "secret", "test");
        const keys = [merchant.keys.sk_test, second.key];
        const spent = await inWaves(Array.from({ length: 1200 }, (_, i) => () => send(keys[i % 2])));
        expect(statuses(spent)).toEqual({ 400: 1200 });
        const refusals = [];
        for (const key of keys) refusals.push(await send(key));
        if (Math.floor(Date.now() / 60_000) !== minute && attempt < 2) continue;
        for (const refused of refusals) {
          expect(errorOf(refused)).toEqual({ status: 429, code: "RATE_LIMITED" });
          expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
        }
        expect((await send(merchant.keys.sk_live)).status).toBe(400);
        return;
      }
    });
  });

  describe("the hosted screen (hosted-capture): per session secret and per client IP", () => {
    const unknownToken = () => `hst_${randomHex(21)}a`;
    const bootAs = (token: string, ip: string) => call("hosted-capture/boot", { body: { session_token: token }, from: ip });
    const screenAs = (route: "complete" | "cancel", credential: string | null, body: unknown, ip: string) =>
      call(`hosted-capture/${route}`, {
        body,
        headers: credential ? { authorization: `Bearer ${credential}` } : {},
        from: ip,
      });

    it("boot: 10 a minute per session token (then 429 with Retry-After), 600 per client IP", async () => {
      await inOneWindow(20);
      const token = unknownToken();
      const ips = Array.from({ length: 11 }, freshIp);
      const spent = await inWaves(ips.slice(0, 10).map((ip) => () => bootAs(token, ip)));
      expect(statuses(spent)).toEqual({ 404: 10 });
      const refused = await bootAs(token, ips[10]);
      expect(errorOf(refused)).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await bootAs(unknownToken(), ips[10])).status).toBe(404);

      const ip = freshIp();
      expect(statuses(await inWaves(Array.from({ length: 600 }, () => () => bootAs(unknownToken(), ip))))).toEqual({ 404: 600 });
      expect(errorOf(await bootAs(unknownToken(), ip))).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect((await bootAs(unknownToken(), freshIp())).status).toBe(404);
    });

    it("complete and cancel: 10 a minute per screen credential, counted before the body is read; 300 and 600 per client IP", async () => {
      await inOneWindow(20);
      const merchant = await merchantFactory();
      const session = await openSession(merchant.keys.sk_test);
      const { screen_token: credential } = (await boot(session.session_token)).body;
      // One at a time: a completion holds its session, so concurrent ones would be 409s.
      const completes = Array.from({ length: 10 }, () => () => screenAs("complete", credential, { capture_nonce: "x" }, freshIp()));
      expect(statuses(await inWaves(completes, 1))).toEqual({ 422: 10 });
      expect(errorOf(await screenAs("complete", credential, { capture_nonce: "x" }, freshIp()))).toEqual({
        status: 429,
        code: "RATE_LIMITED",
      });
      const cancels = await inWaves(Array.from({ length: 10 }, () => () => screenAs("cancel", credential, { reason: "x" }, freshIp())));
      expect(statuses(cancels)).toEqual({ 400: 10 });
      expect(errorOf(await screenAs("cancel", credential, {}, freshIp()))).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect((await readSession(merchant.keys.sk_test, session.session_id)).body.state, "refused requests left it opened").toBe("opened");

      for (const [route, limit] of [
        ["complete", 300],
        ["cancel", 600],
      ] as const) {
        const ip = freshIp();
        expect(statuses(await inWaves(Array.from({ length: limit }, () => () => screenAs(route, null, {}, ip))))).toEqual({ 401: limit });
        expect(errorOf(await screenAs(route, null, {}, ip))).toEqual({ status: 429, code: "RATE_LIMITED" });
        expect((await screenAs(route, null, {}, freshIp())).status).toBe(401);
      }
    });
  });

  describe("per merchant, not per key", () => {
    it("alias-availability: four keys of one merchant share the reserve budget of 10 a minute", async () => {
      const merchant = await merchantFactory();
      const extra = await Promise.all([
        createKey(testDb(), merchant.merchant_id, "publishable", "test"),
        createKey(testDb(), merchant.merchant_id, "secret", "test"),
      ]);
      const keys = [merchant.keys.pk_test, merchant.keys.sk_test, ...extra.map((k) => k.key)];
      const reserve = (key: string) => call("alias-availability", { key, body: { action: "reserve", alias: `rl_${randomHex(6)}` } });
      const spent = await inWaves(Array.from({ length: 10 }, (_, i) => () => reserve(keys[i % 4])));
      expect(statuses(spent)).toEqual({ 200: 10 });
      for (const key of keys) expect(errorOf(await reserve(key))).toEqual({ status: 429, code: "RATE_LIMITED" });
      // The live environment is another budget.
      expect((await reserve(merchant.keys.sk_live)).status).toBe(200);
    });

    it("mandate-check: two keys of one merchant share the budget of 600 a minute", async () => {
      await inOneWindow(20);
      const merchant = await merchantFactory();
      const second = await createKey(testDb(), merchant.merchant_id, "secret", "test");
      const keys = [merchant.keys.sk_test, second.key];
      const check = (key: string) =>
        call("mandate-check", { key, body: { mandate_id: crypto.randomUUID(), scope: "payment" }, headers: replayHeaders() });
      // A key's first request is counted against the key itself: the isolate learns its merchant from it.
      for (const key of keys) expect((await check(key)).body).toMatchObject({ allowed: false, reason: "mandate_not_found" });
      const spent = await inWaves(Array.from({ length: 600 }, (_, i) => () => check(keys[i % 2])));
      expect(statuses(spent)).toEqual({ 200: 600 });
      for (const key of keys) {
        const refused = await check(key);
        expect(errorOf(refused)).toEqual({ status: 429, code: "RATE_LIMITED" });
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    });
  });

  describe("per merchant and environment: cards, disclosures and consent", () => {
    /** Each route's budget, spent with bodies refused after the limit is counted (400), through the credential it takes. */
    const budgets = [
      { name: "agent-verification-request", limit: 60, credential: "owner" },
      { name: "disclose-claims", limit: 300, credential: "secret" },
      { name: "disclose-claims/fetch", limit: 600, credential: "secret" },
      { name: "revoke-consent", limit: 600, credential: "secret" },
    ] as const;

    it.each(budgets)(
      "$name: $limit a minute, then 429 with Retry-After; the live environment is another budget",
      async ({ name, limit, credential }) => {
        await inOneWindow(20);
        const { merchant, owner } = await ownedMerchant();
        const send = (environment: "test" | "live") =>
          credential === "owner"
            ? requestCard(owner.session_token, { unknown_field: true })
            : call(name, { key: environment === "test" ? merchant.keys.sk_test : merchant.keys.sk_live, body: { unknown_field: true } });
        expect(statuses(await inWaves(Array.from({ length: limit }, () => () => send("test"))))).toEqual({ 400: limit });
        const refused = await send("test");
        expect(errorOf(refused)).toEqual({ status: 429, code: "RATE_LIMITED" });
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
        if (credential === "secret") expect((await send("live")).status).toBe(400);
      },
    );
  });

  describe("without Upstash, one set of counters for every worker of a local run", () => {
    const noUpstash = { UPSTASH_REDIS_REST_URL: undefined, UPSTASH_REDIS_REST_TOKEN: undefined, LOCAL_RATE_LIMIT_URL: undefined };
    let first: RunningServer;
    let second: RunningServer;

    beforeAll(async () => {
      // A run of its own with the default limiter (whatever this test run uses), and a second
      // instance of the same function on its counters: two isolates of alias-availability, as a
      // deployment has many.
      first = await startVariantServer(["alias-availability"], noUpstash);
      second = await startVariantServer(["alias-availability"], {
        ...noUpstash,
        LOCAL_RATE_LIMIT_URL: first.bindings.LOCAL_RATE_LIMIT_URL,
      });
    }, 120_000);
    afterAll(async () => {
      await second?.stop();
      await first?.stop();
    });

    it("the local server hands its workers the shared counters", () => {
      expect(first.bindings.UPSTASH_REDIS_REST_URL).toBeUndefined();
      expect(first.bindings.LOCAL_RATE_LIMIT_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}$/);
    });

    it("counts concurrent requests spread over two isolates exactly: 10 of 24 reserves pass", async () => {
      const merchant = await merchantFactory();
      const reserve = (server: RunningServer, key: string) =>
        fetch(`${server.url}/functions/v1/alias-availability`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-service-api-key": key },
          body: JSON.stringify({ action: "reserve", alias: `rl_${randomHex(6)}` }),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
      const keys = [merchant.keys.pk_test, merchant.keys.sk_test];
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => reserve(i % 2 ? first : second, keys[(i >> 1) % 2])));
      const counts: Record<number, number> = {};
      for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
      expect(counts).toEqual({ 200: 10, 429: 14 });
      for (const answer of answers) if (answer.status === 429) expect(answer.body.code).toBe("RATE_LIMITED");
    });
  });
});
