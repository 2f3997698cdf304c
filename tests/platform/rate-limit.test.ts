import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startRedisRestBridge } from "../../scripts/local/redis-rest-bridge";
import { InProcessRateLimiter, type RateLimitRule, UpstashRateLimiter } from "../../shared/edge/rate-limit";
import { randomHex } from "../../shared/lib/crypto";

const redisUrl = process.env.REDIS_URL;

describe("in-process rate limiter (sliding window)", () => {
  const rule: RateLimitRule = { name: "probe", limit: 3, windowSeconds: 60 };
  const windowMs = 60_000;
  const base = 28_000_000 * windowMs; // the start of a window

  it("allows N requests in a window, then refuses", async () => {
    const limiter = new InProcessRateLimiter();
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.limit(rule, "id", base + 1_000 + i));
    expect(decisions.map((d) => d.success)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    for (const d of decisions) expect(d).toMatchObject({ limit: 3, reset: base + windowMs });
  });

  it("rolls the window over: the previous window weighs in proportion, then not at all", async () => {
    const limiter = new InProcessRateLimiter();
    for (let i = 0; i < 3; i++) expect((await limiter.limit(rule, "id", base + i)).success).toBe(true);
    // At the start of the next window the previous one still counts in full.
    expect((await limiter.limit(rule, "id", base + windowMs)).success).toBe(false);
    // Half-way through it counts half: floor(3 * 0.5) = 1 used, so two more pass.
    const half = base + windowMs + windowMs / 2;
    const midway = [];
    for (let i = 0; i < 3; i++) midway.push((await limiter.limit(rule, "id", half + i)).success);
    expect(midway).toEqual([true, true, false]);
    // Two windows later nothing is left of either.
    const later = base + 3 * windowMs;
    const fresh = [];
    for (let i = 0; i < 4; i++) fresh.push((await limiter.limit(rule, "id", later + i)).success);
    expect(fresh).toEqual([true, true, true, false]);
  });

  it("counts identifiers and rules independently", async () => {
    const limiter = new InProcessRateLimiter();
    for (let i = 0; i < 3; i++) await limiter.limit(rule, "a", base + i);
    expect((await limiter.limit(rule, "a", base + 10)).success).toBe(false);
    expect((await limiter.limit(rule, "b", base + 10)).success).toBe(true);
    expect((await limiter.limit({ ...rule, name: "other" }, "a", base + 10)).success).toBe(true);
  });
});

describe("in-process rate limiter (token bucket)", () => {
  const rule: RateLimitRule = { name: "bucket", limit: 10, windowSeconds: 1, burst: 20 };
  const base = 1_900_000_000_000;

  it("lets a full bucket's burst through at once, then refills at the rate, never above the burst", async () => {
    const limiter = new InProcessRateLimiter();
    const burst = [];
    for (let i = 0; i < 25; i++) burst.push(await limiter.limit(rule, "id", base));
    expect(burst.filter((d) => d.success)).toHaveLength(20);
    expect(burst.slice(0, 20).map((d) => d.remaining)).toEqual([...Array(20).keys()].reverse());
    expect(burst[24]).toMatchObject({ success: false, limit: 20, remaining: 0, reset: base + 100 });
    // 10 per second: 250 ms later two tokens and a half have come back.
    const later = [];
    for (let i = 0; i < 4; i++) later.push((await limiter.limit(rule, "id", base + 250)).success);
    expect(later).toEqual([true, true, false, false]);
    // An hour idle fills the bucket to its burst, not beyond.
    const rested = [];
    for (let i = 0; i < 22; i++) rested.push((await limiter.limit(rule, "id", base + 3_600_000)).success);
    expect(rested.filter(Boolean)).toHaveLength(20);
  });
});

describe.skipIf(!redisUrl)("Upstash rate limiter through the Redis REST bridge (REDIS_URL)", () => {
  let bridge: RunningBridge;
  const prefix = `bridge-test:${randomHex(6)}`;

  beforeAll(async () => {
    bridge = await startRedisRestBridge({ redisUrl, token: randomHex(16) });
  });
  afterAll(async () => {
    if (!bridge) return;
    const keys = await command(["KEYS", `${prefix}*`]);
    if (Array.isArray(keys.body.result) && keys.body.result.length) await command(["DEL", ...keys.body.result]);
    await bridge.stop();
  });

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${bridge.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  const command = (cmd: (string | number)[], headers?: Record<string, string>) => post("/", cmd, headers);

  describe("UpstashRateLimiter with @upstash/redis", () => {
    it("allows N requests, then refuses; identifiers are independent", async () => {
      const limiter = new UpstashRateLimiter(new Redis({ url: bridge.url, token: bridge.token }));
      const rule: RateLimitRule = { name: `test-${randomHex(6)}`, limit: 5, windowSeconds: 60 };
      const decisions = [];
      for (let i = 0; i < 7; i++) decisions.push(await limiter.limit(rule, "merchant-a"));
      expect(decisions.map((d) => d.success)).toEqual([true, true, true, true, true, false, false]);
      expect(decisions[0]).toMatchObject({ limit: 5, remaining: 4 });
      expect(decisions[5].remaining).toBe(0);
      expect(decisions[5].reset).toBeGreaterThan(Date.now());
      expect((await limiter.limit(rule, "merchant-b")).success).toBe(true);
      expect((await limiter.limit({ ...rule, name: `${rule.name}-other` }, "merchant-a")).success).toBe(true);
      // A second limiter on the same Redis shares the counters (what several workers see).
      const second = new UpstashRateLimiter(new Redis({ url: bridge.url, token: bridge.token }));
      expect((await second.limit(rule, "merchant-a")).success).toBe(false);
    });

    it("counts concurrent requests exactly", async () => {
      const limiter = new UpstashRateLimiter(new Redis({ url: bridge.url, token: bridge.token }));
      const rule: RateLimitRule = { name: `test-${randomHex(6)}`, limit: 10, windowSeconds: 60 };
      const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.limit(rule, "burst")));
      expect(decisions.filter((d) => d.success)).toHaveLength(10);
    });
    it("holds a token bucket's burst with concurrent requests (a slow refill keeps the count exact)", async () => {
      const limiter = new UpstashRateLimiter(new Redis({ url: bridge.url, token: bridge.token }));
      const rule: RateLimitRule = { name: `test-${randomHex(6)}`, limit: 1, windowSeconds: 3600, burst: 12 };
      const decisions = await Promise.all(Array.from({ length: 30 }, () => limiter.limit(rule, "burst")));
      expect(decisions.filter((d) => d.success)).toHaveLength(12);
      expect(decisions[0].limit).toBe(12);
    });
  });

  describe("bridge protocol", () => {
    it("runs a single command posted as a JSON array", async () => {
      const key = `${prefix}:single`;
      expect(await command(["SET", key, "hello", "EX", 60])).toEqual({ status: 200, body: { result: "OK" } });
      expect(await command(["GET", key])).toEqual({ status: 200, body: { result: "hello" } });
      expect(await command(["GET", `${prefix}:missing`])).toEqual({ status: 200, body: { result: null } });
    });

    it("runs a command given in the path", async () => {
      const key = `${prefix}:path`;
      await command(["SET", key, "via-path"]);
      const res = await fetch(`${bridge.url}/get/${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${bridge.token}` } });
      expect(await res.json()).toEqual({ result: "via-path" });
    });

    it("answers a failing command with 400 and the Redis error", async () => {
      const key = `${prefix}:not-a-number`;
      await command(["SET", key, "abc"]);
      const res = await command(["INCR", key]);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^ERR /);
    });

    it("runs /pipeline in order, one entry per command, errors in place", async () => {
      const key = `${prefix}:pipeline`;
      const res = await post("/pipeline", [
        ["SET", key, "1"],
        ["INCR", key],
        ["HGET", key, "field"],
        ["GET", key],
      ]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([{ result: "OK" }, { result: 2 }, { error: expect.stringMatching(/^WRONGTYPE/) }, { result: "2" }]);
    });

    it("runs /multi-exec as one transaction", async () => {
      const key = `${prefix}:multi`;
      const res = await post("/multi-exec", [
        ["INCR", key],
        ["INCRBY", key, 5],
        ["GET", key],
      ]);
      expect(res).toEqual({ status: 200, body: [{ result: 1 }, { result: 6 }, { result: "6" }] });
    });

    it("encodes string results in base64 on Upstash-Encoding: base64, numbers untouched", async () => {
      const key = `${prefix}:base64`;
      const value = "olá, mundo";
      await command(["SET", key, value]);
      const b64 = { "upstash-encoding": "base64" };
      expect((await command(["GET", key], b64)).body).toEqual({ result: Buffer.from(value).toString("base64") });
      const piped = await post(
        "/pipeline",
        [
          ["GET", key],
          ["STRLEN", key],
          ["MGET", key, `${prefix}:none`],
        ],
        b64,
      );
      expect(piped.body).toEqual([
        { result: Buffer.from(value).toString("base64") },
        { result: Buffer.byteLength(value) },
        { result: [Buffer.from(value).toString("base64"), null] },
      ]);
    });

    it("refuses a wrong or missing bearer token with 401", async () => {
      for (const authorization of [`Bearer ${bridge.token}x`, "Bearer ", bridge.token]) {
        const res = await fetch(bridge.url, { method: "POST", headers: { authorization }, body: JSON.stringify(["PING"]) });
        expect(res.status).toBe(401);
      }
      expect((await fetch(bridge.url, { method: "POST", body: JSON.stringify(["PING"]) })).status).toBe(401);
    });

    it("refuses a body that is not a command with 400", async () => {
      expect((await post("/", { not: "a command" })).status).toBe(400);
      expect((await post("/pipeline", ["GET", "x"])).status).toBe(400);
    });
  });
});
