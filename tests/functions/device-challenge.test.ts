/**
 * device-challenge over HTTP: a publishable or secret key gets a challenge for a purpose, two minutes
 * from the request's clock, stored only as its hash, bound to the key's merchant and environment and
 * the purpose (what the domain tests consume: tests/domain/devices.test.ts); an unknown purpose and
 * missing replay headers are coded errors; every answer is no-store; the publishable per-IP limit.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, freshIp, replayHeaders } from "../harness/http";

const FN = "device-challenge";
const T0 = new Date(Date.UTC(2027, 5, 1, 9, 0, 0));

function challenge(key: string | null, body: unknown, options: { now?: Date; headers?: Record<string, string>; from?: string } = {}) {
  const now = options.now ?? T0;
  return call(FN, {
    method: "POST",
    key,
    body,
    now,
    from: options.from ?? freshIp(),
    headers: options.headers ?? replayHeaders(now),
  });
}

describe("device-challenge", () => {
  it("issues a challenge for the purpose to a publishable or secret key, two minutes from the request's clock, stored as its hash", async () => {
    const m = await merchantFactory();
    for (const [key, purpose, environment] of [
      [m.keys.pk_test, "payment", "test"],
      [m.keys.sk_live, "enroll", "live"],
    ] as const) {
      const res = await challenge(key, { purpose });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.body).toEqual({
        challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        purpose,
        expires_at: new Date(T0.getTime() + 120_000).toISOString(),
        ttl_seconds: 120,
      });
      const rows = await testDb()`
        select merchant_id, environment, purpose, created_at, consumed_at from private.device_challenges
        where challenge_hash = ${await sha256Hex(res.body.challenge)}`;
      expect(rows).toEqual([{ merchant_id: m.merchant_id, environment, purpose, created_at: T0, consumed_at: null }]);
    }
  });

  it("refuses an unknown or missing purpose, a missing key and missing replay headers, each with its code", async () => {
    const m = await merchantFactory();
    for (const body of [{}, { purpose: "transfer" }, { purpose: 1 }]) {
      const res = await challenge(m.keys.pk_test, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: "INVALID_INPUT" });
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    expect(errorOf(await challenge(null, { purpose: "login" }))).toMatchObject({ code: "API_KEY_REQUIRED" });
    expect(errorOf(await challenge(m.keys.pk_test, { purpose: "login" }, { headers: {} }))).toMatchObject({
      code: "TIMESTAMP_REQUIRED",
    });
    const headers = replayHeaders(T0);
    expect((await challenge(m.keys.pk_test, { purpose: "login" }, { headers })).status).toBe(200);
    expect(errorOf(await challenge(m.keys.pk_test, { purpose: "login" }, { headers }))).toMatchObject({ code: "NONCE_REUSED" });
  });

  it("limits a publishable key to 30 a minute per client IP", async () => {
    const m = await merchantFactory();
    const from = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await challenge(m.keys.pk_test, { purpose: "login" }, { from })).status);
    expect(statuses.slice(0, 30).every((status) => status === 200)).toBe(true);
    expect(statuses[30]).toBe(429);
    expect((await challenge(m.keys.pk_test, { purpose: "login" })).status).toBe(200);
  });
});
