import { describe, expect, it } from "vitest";
import { checkEndpointUrl, checkEventTypes, isLoopbackHost } from "../../shared/webhooks/endpoints";
import { eventCatalogue, eventTypes, isEventType } from "../../shared/webhooks/events";
import { runPooled } from "../../shared/webhooks/pool";
import {
  MAX_RETRY_DELAY_MS,
  nextAttemptAt,
  nominalRetryDelayMs,
  nominalSchedule,
  parseRetryAfter,
  RETRY_WINDOW_MS,
  retryDelayMs,
} from "../../shared/webhooks/retry";
import { passOptions } from "../../shared/webhooks/run";
import { mintEndpointSecret, openEndpointSecret, openWithKeyring, sealEndpointSecret, secretHint } from "../../shared/webhooks/secret-box";

const MIN = 60_000;
const HOUR = 3_600_000;

describe("retry schedule", () => {
  it("doubles from one minute to a cap of eight hours", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 20].map(nominalRetryDelayMs)).toEqual([
      1 * MIN,
      2 * MIN,
      4 * MIN,
      8 * MIN,
      16 * MIN,
      32 * MIN,
      64 * MIN,
      128 * MIN,
      256 * MIN,
      8 * HOUR,
      8 * HOUR,
      8 * HOUR,
    ]);
  });

  it("is the documented table: 18 attempts, the last at exactly 72 hours", () => {
    const rows = nominalSchedule();
    expect(rows).toHaveLength(18);
    expect(rows.map((r) => r.atMs / MIN)).toEqual([0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 991, 1471, 1951, 2431, 2911, 3391, 3871, 4320]);
    expect(rows.at(-1)!.atMs).toBe(RETRY_WINDOW_MS);
  });

  it("jitters each delay within ±20 %", () => {
    expect(retryDelayMs(3, () => 0)).toBe(0.8 * 4 * MIN);
    expect(retryDelayMs(3, () => 0.5)).toBe(4 * MIN);
    expect(retryDelayMs(3, () => 0.999999)).toBeCloseTo(1.2 * 4 * MIN, -1);
    for (let i = 0; i < 200; i++) {
      const delay = retryDelayMs(12);
      expect(delay).toBeGreaterThanOrEqual(0.8 * MAX_RETRY_DELAY_MS);
      expect(delay).toBeLessThanOrEqual(1.2 * MAX_RETRY_DELAY_MS);
    }
  });

  const windowStart = new Date("2031-01-01T00:00:00Z");
  const after = (ms: number) => new Date(windowStart.getTime() + ms);

  it("schedules after the failure, lets a later Retry-After win, and never past the window", () => {
    expect(nextAttemptAt({ attempt: 1, windowStart, failedAt: after(0), random: () => 0.5 })).toEqual(after(MIN));
    expect(nextAttemptAt({ attempt: 1, windowStart, failedAt: after(0), retryAfter: after(HOUR), random: () => 0.5 })).toEqual(after(HOUR));
    expect(nextAttemptAt({ attempt: 5, windowStart, failedAt: after(0), retryAfter: after(1000), random: () => 0.5 })).toEqual(
      after(16 * MIN),
    );
    expect(nextAttemptAt({ attempt: 17, windowStart, failedAt: after(70 * HOUR), random: () => 0.5 })).toEqual(after(RETRY_WINDOW_MS));
    expect(nextAttemptAt({ attempt: 3, windowStart, failedAt: after(HOUR), retryAfter: after(500 * HOUR), random: () => 0.5 })).toEqual(
      after(RETRY_WINDOW_MS),
    );
  });

  it("gives up once an attempt fails at or after the end of the window", () => {
    expect(nextAttemptAt({ attempt: 18, windowStart, failedAt: after(RETRY_WINDOW_MS) })).toBeNull();
    expect(nextAttemptAt({ attempt: 18, windowStart, failedAt: after(RETRY_WINDOW_MS + 5000) })).toBeNull();
    expect(nextAttemptAt({ attempt: 18, windowStart, failedAt: after(RETRY_WINDOW_MS - 1) })).toEqual(after(RETRY_WINDOW_MS));
  });

  it("reads Retry-After as seconds or an HTTP date; anything else, or a time already past, is ignored", () => {
    const now = new Date("2031-01-01T00:00:00Z");
    expect(parseRetryAfter("120", now)).toEqual(new Date("2031-01-01T00:02:00Z"));
    expect(parseRetryAfter(" 3600 ", now)).toEqual(new Date("2031-01-01T01:00:00Z"));
    expect(parseRetryAfter("Wed, 01 Jan 2031 05:00:00 GMT", now)).toEqual(new Date("2031-01-01T05:00:00Z"));
    for (const value of [null, undefined, "", "0", "-5", "1.5", "soon", "Tue, 31 Dec 2030 23:00:00 GMT"]) {
      expect(parseRetryAfter(value, now), String(value)).toBeNull();
    }
  });
});

describe("endpoint URLs and subscriptions", () => {
  it("accepts https anywhere and http only on loopback where local development is allowed", () => {
    const strict = { allowLoopbackHttp: false };
    const local = { allowLoopbackHttp: true };
    expect(checkEndpointUrl("https://hooks.example.com/in?x=1", strict)).toBeNull();
    expect(checkEndpointUrl("http://hooks.example.com/in", local)).toMatch(/loopback/);
    expect(checkEndpointUrl("http://127.0.0.1:9000/in", strict)).toMatch(/WEBHOOK_ALLOW_LOOPBACK_HTTP/);
    for (const url of ["http://127.0.0.1:9000/in", "http://localhost/in", "http://[::1]:8080/"])
      expect(checkEndpointUrl(url, local), url).toBeNull();
    expect(checkEndpointUrl("ftp://example.com/", local)).toMatch(/https/);
    expect(checkEndpointUrl("/relative", local)).toMatch(/absolute/);
    expect(checkEndpointUrl("https://user:pw@example.com/", local)).toMatch(/credentials/);
    expect(checkEndpointUrl("https://example.com/#x", local)).toMatch(/fragment/);
    expect(checkEndpointUrl(`https://example.com/${"a".repeat(2048)}`, local)).toMatch(/2048/);
    expect(isLoopbackHost("127.8.9.10")).toBe(true);
    expect(isLoopbackHost("128.0.0.1")).toBe(false);
    expect(isLoopbackHost("localhost.example.com")).toBe(false);
  });

  it("knows the catalogue and refuses unknown or empty subscriptions", () => {
    expect(eventTypes).toEqual([
      "mandate.granted",
      "mandate.consumed",
      "mandate.at_limit",
      "mandate.revoked",
      "device.registered",
      "device.revoked",
      "consent.withdrawn",
      "identity.erased",
      "session.completed",
      "session.expired",
      "webhook.test",
    ]);
    expect(eventCatalogue["mandate.revoked"].data).toContain("granted_to");
    expect(eventCatalogue["mandate.consumed"].data).toContain("remaining");
    expect(isEventType("mandate.consumed")).toBe(true);
    expect(isEventType("toString")).toBe(false);
    expect(checkEventTypes(null)).toBeNull();
    expect(checkEventTypes(["mandate.revoked"])).toBeNull();
    expect(checkEventTypes([])).toMatch(/at least one/);
    expect(checkEventTypes(["mandate.revoked", "mandate.exploded"])).toMatch(/unknown event type mandate\.exploded/);
  });
});

describe("endpoint secrets at rest", () => {
  const key = "k".repeat(64);

  it("mints whsec_ secrets and seals them so that only the same key and endpoint open them", async () => {
    const secret = mintEndpointSecret();
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    expect(secretHint(secret)).toBe(`whsec_…${secret.slice(-4)}`);
    const endpoint = crypto.randomUUID();
    const sealed = await sealEndpointSecret(key, endpoint, secret);
    expect(sealed).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(await sealEndpointSecret(key, endpoint, secret)).not.toBe(sealed); // fresh IV each time
    expect(await openEndpointSecret([key], endpoint, sealed)).toBe(secret);
    await expect(openEndpointSecret(["x".repeat(64)], endpoint, sealed)).rejects.toThrow();
    await expect(openEndpointSecret([key], crypto.randomUUID(), sealed)).rejects.toThrow();
    await expect(openEndpointSecret([key], endpoint, sealed.slice(0, -2))).rejects.toThrow();
    await expect(openEndpointSecret([key], endpoint, "plain")).rejects.toThrow();
    await expect(openEndpointSecret([], endpoint, sealed)).rejects.toThrow();
  });

  it("opens with the first key of the keyring that fits, and says which one", async () => {
    const previous = "p".repeat(40);
    const endpoint = crypto.randomUUID();
    const secret = mintEndpointSecret();
    const underPrevious = await sealEndpointSecret(previous, endpoint, secret);
    const underCurrent = await sealEndpointSecret(key, endpoint, secret);
    expect(await openWithKeyring([key, previous], endpoint, underPrevious)).toEqual({ secret, keyIndex: 1 });
    expect(await openWithKeyring([key, previous], endpoint, underCurrent)).toEqual({ secret, keyIndex: 0 });
    await expect(openEndpointSecret([key], endpoint, underPrevious)).rejects.toThrow();
    await expect(openEndpointSecret([key, previous], crypto.randomUUID(), underPrevious)).rejects.toThrow();
  });
});

describe("passOptions", () => {
  const base = { WEBHOOK_TIMEOUT_MS: 15_000, WEBHOOK_ALLOW_LOOPBACK_HTTP: "0" as const };
  const clock = () => new Date(0);

  it("opens secrets with the current key, then with the previous one during a key rotation", () => {
    expect(passOptions({ ...base, WEBHOOK_SECRET_KEY: "c".repeat(32) }, clock).keyring).toEqual(["c".repeat(32)]);
    expect(
      passOptions({ ...base, WEBHOOK_SECRET_KEY: "c".repeat(32), WEBHOOK_SECRET_KEY_PREVIOUS: "p".repeat(32) }, clock).keyring,
    ).toEqual(["c".repeat(32), "p".repeat(32)]);
    expect(() => passOptions({ ...base, WEBHOOK_SECRET_KEY_PREVIOUS: "p".repeat(32) }, clock)).toThrow(/WEBHOOK_SECRET_KEY/);
  });
});

describe("runPooled", () => {
  it("caps work in flight overall and per key, and returns what it never started", async () => {
    const active = new Map<string, number>();
    let total = 0;
    let peak = 0;
    const peakPerKey = new Map<string, number>();
    const items = Array.from({ length: 40 }, (_, i) => ({ i, key: `k${i % 4}` }));
    const done: number[] = [];
    const unstarted = await runPooled(
      items,
      (item) => item.key,
      async (item) => {
        total += 1;
        active.set(item.key, (active.get(item.key) ?? 0) + 1);
        peak = Math.max(peak, total);
        peakPerKey.set(item.key, Math.max(peakPerKey.get(item.key) ?? 0, active.get(item.key)!));
        await new Promise((resolve) => setTimeout(resolve, 2));
        active.set(item.key, active.get(item.key)! - 1);
        total -= 1;
        done.push(item.i);
      },
      { total: 6, perKey: 2 },
    );
    expect(unstarted).toEqual([]);
    expect(done.sort((a, b) => a - b)).toEqual(items.map((item) => item.i));
    expect(peak).toBe(6);
    expect(Math.max(...peakPerKey.values())).toBe(2);
  });

  it("stops starting work when told, and lets a failing task not stop the others", async () => {
    let started = 0;
    const unstarted = await runPooled(
      Array.from({ length: 10 }, (_, i) => i),
      () => "one",
      async (i) => {
        started += 1;
        if (i === 0) throw new Error("boom");
      },
      { total: 1, perKey: 1, stop: () => started >= 4 },
    );
    expect(started).toBe(4);
    expect(unstarted).toEqual([4, 5, 6, 7, 8, 9]);
  });
});
