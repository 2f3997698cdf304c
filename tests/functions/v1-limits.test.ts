import { describe, expect, it } from "vitest";
import { merchantFactory, testDb } from "../harness/factories";
import { type CallResult, errorOf, freshIp } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { presenceCapture, withGrantProof } from "../harness/mandates";
import { v1, whileInFlight } from "../harness/resource-api";

async function granter() {
  const merchant = await merchantFactory();
  const person = await enrollStranger(merchant.keys.pk_test);
  await presenceCapture(merchant, person, { document: true });
  // A create body with a fresh proof: the person's grant capture of its terms.
  const body = (extra: Record<string, unknown> = {}) =>
    withGrantProof(merchant, person, {
      granted_by: person.subject_ref,
      granted_to: `agent_${crypto.randomUUID()}`,
      scope: ["purchase"],
      ceiling: { amount: 700, currency: "USD", period: "lifetime" },
      until: new Date(Date.now() + 3 * 86_400_000).toISOString(),
      ...extra,
    });
  return { merchant, key: merchant.keys.sk_test, body };
}

async function mandateCount(merchantId: string): Promise<number> {
  const [row] = await testDb().unsafe("select count(*)::int as n from private.mandates where merchant_id = $1", [merchantId]);
  return row.n as number;
}

describe("Idempotency-Key on /v1 writes", () => {
  it("replays the original status and body for the same key and body, refuses another body, and forgets the key after 24 hours", async () => {
    const { merchant, key, body } = await granter();
    const sent = await body();
    const first = await v1("/mandates", { key, body: sent, idempotencyKey: "create-mandate-1" });
    expect(first.status, first.text).toBe(201);
    const again = await v1("/mandates", { key, body: sent, idempotencyKey: "create-mandate-1" });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotency-status")).toBe("replayed");
    expect(await mandateCount(merchant.merchant_id)).toBe(1);

    const other = await v1("/mandates", { key, body: await body(), idempotencyKey: "create-mandate-1" });
    expect(errorOf(other)).toEqual({ status: 422, code: "idempotency_key_reused" });
    expect(errorOf(await v1("/mandates", { key, body: sent, idempotencyKey: "short" }))).toEqual({
      status: 400,
      code: "idempotency_key_invalid",
    });

    // The key is the merchant's and the path's: a check under the same key is another record.
    const checkBody = { operation: "purchase", amount: 100, currency: "USD" };
    const checked = await v1(`/mandates/${first.body.id}/check`, { key, body: checkBody, idempotencyKey: "create-mandate-1" });
    expect(checked.body).toMatchObject({ allowed: true, remaining: { amount: 600 } });
    const replayed = await v1(`/mandates/${first.body.id}/check`, { key, body: checkBody, idempotencyKey: "create-mandate-1" });
    expect(replayed.body).toEqual({ ...checked.body, idempotent_replay: true, mandate_status: "active" });
    expect(replayed.headers.get("idempotency-status")).toBe("replayed");
    expect((await v1(`/mandates/${first.body.id}`, { key })).body.remaining).toBe(600);

    // After 24 hours the key is forgotten and the request runs again: the create is judged anew (its
    // capture is now too old to prove anything) ...
    const later = new Date(Date.now() + 25 * 3_600_000);
    const rerun = await v1("/mandates", { key, body: sent, idempotencyKey: "create-mandate-1", now: later });
    expect(errorOf(rerun)).toEqual({ status: 403, code: "proof_invalid" });
    // ... while the mandate's ledger never forgets a consumption's key: the check answers the first decision.
    const ledger = await v1(`/mandates/${first.body.id}/check`, { key, body: checkBody, idempotencyKey: "create-mandate-1", now: later });
    expect(ledger.body).toMatchObject({ allowed: true, remaining: { amount: 600 }, idempotent_replay: true });
    expect(ledger.headers.get("idempotency-status")).toBe("replayed");
    expect((await v1(`/mandates/${first.body.id}`, { key, now: later })).body.remaining).toBe(600);
  });

  it("answers 409 with Retry-After while the key's first request runs", async () => {
    const { merchant, key, body } = await granter();
    const sent = await body();
    const { sha256Hex } = await import("../../shared/lib/crypto");
    await testDb().unsafe(
      `insert into private.idempotency_keys (merchant_id, environment, function_name, idempotency_key, request_hash, state,
         created_at, lease_expires_at, expires_at)
       values ($1, 'test', 'POST /v1/mandates', 'held-by-another', $2, 'in_flight', now(), now() + interval '1 minute', now() + interval '1 day')`,
      [merchant.merchant_id, await sha256Hex(JSON.stringify(sent))],
    );
    const res = await v1("/mandates", { key, body: sent, idempotencyKey: "held-by-another" });
    expect(errorOf(res)).toEqual({ status: 409, code: "idempotency_in_flight" });
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await mandateCount(merchant.merchant_id)).toBe(0);
  });

  it("issues a mandate and stores its answer in one transaction: an issue whose key was lost meanwhile leaves no mandate", async () => {
    const { merchant, key, body } = await granter();
    const sent = await body();
    const idempotencyKey = `lost-${crypto.randomUUID()}`;
    const ran = await whileInFlight(
      "private.mandates",
      { merchantId: merchant.merchant_id, idempotencyKey },
      () => v1("/mandates", { key, body: sent, idempotencyKey }),
      async () => {
        // The record disappears while the issue waits (as when its lease ran out and a retry took the key over).
        await testDb()`delete from private.idempotency_keys where merchant_id = ${merchant.merchant_id} and idempotency_key = ${idempotencyKey}`;
      },
    );
    expect(errorOf(ran)).toEqual({ status: 409, code: "idempotency_in_flight" });
    expect(await mandateCount(merchant.merchant_id)).toBe(0);
    const retried = await v1("/mandates", { key, body: sent, idempotencyKey });
    expect(retried.status, retried.text).toBe(201);
    const [stored] = await testDb()`select state, response_status, response_body from private.idempotency_keys
      where merchant_id = ${merchant.merchant_id} and idempotency_key = ${idempotencyKey}`;
    expect(stored).toEqual({ state: "done", response_status: 201, response_body: retried.body });
    expect(await mandateCount(merchant.merchant_id)).toBe(1);
  });

  it("runs one of many parallel requests under one key: one mandate, the others replay it or get 409", async () => {
    const { merchant, key, body } = await granter();
    const sent = await body();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => v1("/mandates", { key, body: sent, idempotencyKey: "race-create-1" })),
    );
    expect(await mandateCount(merchant.merchant_id)).toBe(1);
    const created = results.filter((r) => r.status === 201);
    const inFlight = results.filter((r) => r.status === 409);
    expect(created.length + inFlight.length).toBe(8);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of inFlight) {
      expect(r.body.code).toBe("idempotency_in_flight");
      expect(r.headers.get("retry-after")).toBe("1");
    }
  });

  it("consumes once for parallel checks under one key, and exactly the ceiling for parallel checks under distinct keys", async () => {
    const { key, body } = await granter();
    const mandate = (await v1("/mandates", { key, body: await body() })).body;
    const act = { operation: "purchase", amount: 100, currency: "USD" };
    const sameKey = await Promise.all(
      Array.from({ length: 6 }, () => v1(`/mandates/${mandate.id}/check`, { key, body: act, idempotencyKey: "race-check-1" })),
    );
    expect(sameKey.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect((await v1(`/mandates/${mandate.id}`, { key })).body.remaining).toBe(600);

    const distinct = await Promise.all(
      Array.from({ length: 10 }, (_, i) => v1(`/mandates/${mandate.id}/check`, { key, body: act, idempotencyKey: `race-check-d${i}` })),
    );
    expect(distinct.filter((r) => r.body.allowed === true)).toHaveLength(6);
    expect(distinct.filter((r) => r.body.allowed === false).map((r) => r.body.reason)).toEqual(Array(4).fill("mandate_exhausted"));
    expect((await v1(`/mandates/${mandate.id}`, { key })).body).toMatchObject({ remaining: 0, status: "exhausted" });
  });
});

describe("rate limits on /v1", () => {
  it("announces a budget on every response: a 401, the document, an unknown route (the client address's unkeyed budget)", async () => {
    const from = freshIp();
    const answers = {
      noKey: await v1("/mandates", { from }),
      malformedKey: await v1("/mandates", { key: "sk_test_short", from }),
      document: await v1("/openapi.json", { from }),
      unknownRoute: await v1("/nothing-here", { from }),
    };
    expect(Object.values(answers).map((r) => r.status)).toEqual([401, 401, 200, 404]);
    const remaining = Object.values(answers).map((r) => Number(r.headers.get("service-ratelimit-remaining")));
    for (const r of Object.values(answers)) {
      expect(r.headers.get("service-ratelimit-limit")).toBe("100");
      expect(Number(r.headers.get("service-ratelimit-reset"))).toBeGreaterThanOrEqual(1);
    }
    // One budget, spent by each in turn.
    expect(remaining[0]).toBeLessThanOrEqual(99);
    expect(remaining[3]).toBeLessThan(remaining[0]);
  });

  it("announces the budget on every keyed response, and lets a sandbox key's burst (60 reads) through before 429 rate_limited", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const first = await v1("/mandates", { key });
    expect(first.headers.get("service-ratelimit-limit")).toBe("60");
    expect(first.headers.get("service-ratelimit-remaining")).toBe("59");
    expect(Number(first.headers.get("service-ratelimit-reset"))).toBeGreaterThanOrEqual(1);
    const notFound = await v1("/mandates/mdt_00000000000000000000000000000000", { key });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("service-ratelimit-remaining")).toEqual(expect.any(String));

    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 150 }, () => v1("/mandates", { key, query: { limit: "1" } })));
    const seconds = (Date.now() - started) / 1000;
    const passed = burst.filter((r) => r.status === 200).length;
    const limited = burst.filter((r) => r.status === 429);
    expect(passed + limited.length).toBe(150);
    // 58 tokens were left, and 30 come back per second while the burst runs.
    expect(passed).toBeGreaterThanOrEqual(58);
    expect(passed).toBeLessThanOrEqual(58 + Math.ceil(30 * seconds) + 1);
    for (const r of limited) {
      expect(r.body.code).toBe("rate_limited");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get("service-ratelimit-remaining")).toBe("0");
      expect(r.headers.get("service-version")).toBe("2026-09-14");
    }
    // Another merchant's budget is untouched.
    const other = await merchantFactory();
    expect((await v1("/mandates", { key: other.keys.sk_test })).headers.get("service-ratelimit-remaining")).toBe("59");
  });
});

/**
 * Every limit of resource API section 8 driven to 429 (issue 29). Production's figures are announced
 * by a live key's first answer (`Service-RateLimit-Limit` is the bucket's burst); each bucket is then
 * emptied with a sandbox key, whose figures are a tenth of production's (docs/resource-api.md): a
 * live bucket of 2,000 cannot be emptied faster than it refills by one test process on a shared
 * machine, and the code path is the same (`ruleOf`). Each request is one the bucket counts before
 * anything else is read (an empty body, an unknown id), so what passes is the bucket's figure. The
 * check's sandbox bucket (100/s, burst 200) refills faster than this machine's front serves one
 * client (about 40 requests a second measured; 500 at once were answered 502 by the local front), so
 * its test asserts both figures and the spending, not the 429 (docs/spec-coverage.md says so).
 */
/**
 * At least `count` requests, `wave` at a time (the local front answers 502 when hundreds arrive at
 * once), and more waves while none was limited, up to five times `count`: on a loaded machine one
 * client's pace can fall near a bucket's refill, and the bucket is emptied only when it is outrun.
 */
async function inWaves(count: number, wave: number, request: () => Promise<CallResult>): Promise<CallResult[]> {
  const answers: CallResult[] = [];
  while (answers.length < count || (!answers.some((r) => r.status === 429) && answers.length < 5 * count)) {
    answers.push(...(await Promise.all(Array.from({ length: wave }, request))));
  }
  return answers;
}

describe("every rate limit of resource API 8 reaches 429 with its figure", () => {
  const unknownMandate = "mdt_00000000000000000000000000000000";
  const limits = [
    { scope: "POST /identity/recognitions", perSecond: 200, burst: 400, send: 120, path: "/identity/recognitions", body: {} },
    { scope: "POST /identity/claims", perSecond: 50, burst: 100, send: 40, path: "/identity/claims", body: {} },
    { scope: "POST /sessions", perSecond: 100, burst: 200, send: 60, path: "/sessions", body: {} },
    { scope: "All GET endpoints", perSecond: 300, burst: 600, send: 180, path: "/mandates", body: undefined },
  ];

  it.each(limits)("$scope: $perSecond req/s per key, burst $burst (sandbox a tenth)", async ({ perSecond, burst, send, path, body }) => {
    const merchant = await merchantFactory();
    const live = await v1(path, { key: merchant.keys.sk_live, body });
    expect(live.status).not.toBe(429);
    expect(live.headers.get("service-ratelimit-limit")).toBe(String(burst));
    expect(live.headers.get("service-ratelimit-remaining")).toBe(String(burst - 1));

    const started = Date.now();
    const answers = await inWaves(send, 60, () => v1(path, { key: merchant.keys.sk_test, body }));
    const seconds = (Date.now() - started) / 1000;
    const limited = answers.filter((r) => r.status === 429);
    const passed = answers.length - limited.length;
    const seen = [...new Set(answers.map((r) => `${r.status} ${r.headers.get("service-ratelimit-limit")}`))];
    for (const r of answers) expect(r.headers.get("service-ratelimit-limit"), seen.join(", ")).toBe(String(burst / 10));
    expect(limited.length, `${passed} passed in ${seconds} s`).toBeGreaterThan(0);
    expect(passed).toBeGreaterThanOrEqual(burst / 10);
    expect(passed).toBeLessThanOrEqual(burst / 10 + Math.ceil((perSecond / 10) * seconds) + 1);
    for (const r of limited) {
      expect(r.body.code).toBe("rate_limited");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get("service-ratelimit-remaining")).toBe("0");
    }
  });

  it("POST /mandates/{id}/check: 1000 req/s per key, burst 2000 (sandbox a tenth), each request spending one token", async () => {
    const merchant = await merchantFactory();
    const path = `/mandates/${unknownMandate}/check`;
    const live = await v1(path, { key: merchant.keys.sk_live, body: {} });
    expect([live.headers.get("service-ratelimit-limit"), live.headers.get("service-ratelimit-remaining")]).toEqual(["2000", "1999"]);
    const answers = await Promise.all(Array.from({ length: 20 }, () => v1(path, { key: merchant.keys.sk_test, body: {} })));
    for (const r of answers) expect(r.headers.get("service-ratelimit-limit")).toBe("200");
    const lowest = Math.min(...answers.map((r) => Number(r.headers.get("service-ratelimit-remaining"))));
    expect(lowest).toBeLessThanOrEqual(180 + 5);
  });

  it("GET /receipts/{id}/verify: no account limit, fair use per client address (20/s, burst 100)", async () => {
    const from = freshIp();
    const started = Date.now();
    const answers = await inWaves(250, 60, () => v1("/receipts/rcp_unknown/verify", { key: null, from }));
    const seconds = (Date.now() - started) / 1000;
    const limited = answers.filter((r) => r.status === 429);
    const passed = answers.length - limited.length;
    for (const r of answers) expect(r.headers.get("service-ratelimit-limit")).toBe("100");
    expect(limited.length, `${passed} passed in ${seconds} s`).toBeGreaterThan(0);
    expect(passed).toBeGreaterThanOrEqual(100);
    expect(passed).toBeLessThanOrEqual(100 + Math.ceil(20 * seconds) + 1);
    for (const r of limited) expect([r.body.code, Number(r.headers.get("retry-after")) >= 1]).toEqual(["rate_limited", true]);
    // Another address is untouched: the limit is per address, not per account.
    expect((await v1("/receipts/rcp_unknown/verify", { key: null, from: freshIp() })).status).not.toBe(429);
  });
});
