/**
 * hosted-session-create (function API 2.7, 4.12) over HTTP: every request field, every error code
 * of 4.12 but SESSION_WRITE_FAILED (tests/functions/hosted-session-events.test.ts makes the
 * database refuse the write on an instance of its own), the key rules, and what is stored.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { serviceUnderTest } from "../harness/service";
import { authorizeBody, CREATED_KEYS, createSession } from "../harness/sessions";

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

describe("hosted-session-create", () => {
  describe("happy", () => {
    it("201 with the fields of 2.7, merchant_id, state open; the token is 32 random bytes and only its SHA-256 is stored", async () => {
      const m = await merchantFactory();
      const now = new Date();
      const body = authorizeBody({ brand: "Acme Travel", metadata: { order: "A-1", customer: "c-9" }, ttl_seconds: 600 });
      const res = await createSession(m.keys.sk_test, body, { now });
      expect(res.status, res.text).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(CREATED_KEYS);
      expect(res.body).toMatchObject({
        merchant_id: m.merchant_id,
        action: "authorize",
        external_txn_ref: body.external_txn_ref,
        amount_cents: 1299,
        currency: "EUR",
        brand: "Acme Travel",
        metadata: { order: "A-1", customer: "c-9" },
        ttl_seconds: 600,
        expires_at: at(now, 600).toISOString(),
        created_at: now.toISOString(),
        single_use: true,
        state: "open",
        opened_at: null,
        ended_at: null,
        result: null,
      });
      expect(res.body.session_id).toMatch(/^hs_[0-9a-f]{32}$/);
      const token: string = res.body.session_token;
      expect(token).toMatch(/^hst_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), "base64url")).toHaveLength(32);
      expect(res.body.url).toBe(`${serviceUnderTest().baseUrl}/functions/v1/hosted-capture/session#${token}`);
      expect(res.headers.get("cache-control")).toBe("no-store");

      const rows = await testDb()`select * from private.hosted_sessions where merchant_id = ${m.merchant_id}::uuid`;
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).toBe(await sha256Hex(token));
      expect(JSON.stringify(rows[0])).not.toContain(token.slice(4));
      expect(rows[0].environment).toBe("test");
    });

    it("defaults: ttl 300, metadata {}, absent fields null; null is absent; each action", async () => {
      const m = await merchantFactory();
      for (const action of ["enroll", "login", "sign"]) {
        const now = new Date();
        const res = await createSession(m.keys.sk_test, { action, brand: null, ttl_seconds: null, metadata: null }, { now });
        expect(res.status, res.text).toBe(201);
        expect(res.body).toMatchObject({
          action,
          ttl_seconds: 300,
          expires_at: at(now, 300).toISOString(),
          metadata: {},
          external_txn_ref: null,
          amount_cents: null,
          currency: null,
          brand: null,
        });
      }
      const signed = await createSession(m.keys.sk_test, { action: "sign", external_txn_ref: "contract:2026-11.v2" });
      expect(signed.body.external_txn_ref).toBe("contract:2026-11.v2");
    });

    it("ttl_seconds 60 and 900 are the bounds; amount 0 and a 3-decimal currency are money", async () => {
      const m = await merchantFactory();
      for (const ttl of [60, 900]) {
        expect((await createSession(m.keys.sk_test, { action: "login", ttl_seconds: ttl })).body.ttl_seconds).toBe(ttl);
      }
      const res = await createSession(m.keys.sk_test, authorizeBody({ amount_cents: 0, currency: "BHD" }));
      expect([res.status, res.body.amount_cents, res.body.currency]).toEqual([201, 0, "BHD"]);
    });

    it("merchant_id equal to the key's merchant is accepted (any case); live keys make live sessions", async () => {
      const m = await merchantFactory();
      const res = await createSession(m.keys.sk_live, { action: "login", merchant_id: m.merchant_id.toUpperCase() });
      expect(res.status, res.text).toBe(201);
      const [row] = await testDb()`select environment from private.hosted_sessions where merchant_id = ${m.merchant_id}::uuid`;
      expect(row.environment).toBe("live");
    });

    it("every session gets its own token and id", async () => {
      const m = await merchantFactory();
      const made = await Promise.all(Array.from({ length: 5 }, () => createSession(m.keys.sk_test, { action: "login" })));
      expect(new Set(made.map((r) => r.body.session_token)).size).toBe(5);
      expect(new Set(made.map((r) => r.body.session_id)).size).toBe(5);
    });
  });

  describe("errors (4.12)", () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["action missing", {}, "INVALID_ACTION"],
      ["action null", { action: null }, "INVALID_ACTION"],
      ["action unknown", { action: "pay" }, "INVALID_ACTION"],
      ["action not a string", { action: 1 }, "INVALID_ACTION"],
      ["external_txn_ref too short", { action: "login", external_txn_ref: "abc" }, "INVALID_EXTERNAL_TXN_REF"],
      ["external_txn_ref with a space", { action: "login", external_txn_ref: "order 12345" }, "INVALID_EXTERNAL_TXN_REF"],
      ["external_txn_ref too long", { action: "login", external_txn_ref: "x".repeat(129) }, "INVALID_EXTERNAL_TXN_REF"],
      ["external_txn_ref a number", { action: "login", external_txn_ref: 12345678 }, "INVALID_EXTERNAL_TXN_REF"],
      ["amount_cents negative", authorizeBody({ amount_cents: -1 }), "INVALID_AMOUNT_CENTS"],
      ["amount_cents a string", authorizeBody({ amount_cents: "1299" }), "INVALID_AMOUNT_CENTS"],
      ["amount_cents a fraction", authorizeBody({ amount_cents: 12.5 }), "INVALID_AMOUNT_CENTS"],
      ["amount_cents beyond 2^53", authorizeBody({ amount_cents: 2 ** 53 }), "INVALID_AMOUNT_CENTS"],
      ["amount_cents on login", { action: "login", amount_cents: 100 }, "INVALID_AMOUNT_CENTS"],
      ["currency lowercase", authorizeBody({ currency: "eur" }), "INVALID_CURRENCY"],
      ["currency unknown", authorizeBody({ currency: "XXX" }), "INVALID_CURRENCY"],
      ["currency on sign", { action: "sign", currency: "EUR" }, "INVALID_CURRENCY"],
      ["authorize without amount", authorizeBody({ amount_cents: undefined }), "AMOUNT_AND_REF_REQUIRED"],
      ["authorize without currency", authorizeBody({ currency: undefined }), "AMOUNT_AND_REF_REQUIRED"],
      ["authorize without reference", authorizeBody({ external_txn_ref: undefined }), "AMOUNT_AND_REF_REQUIRED"],
      ["authorize with the amount null", authorizeBody({ amount_cents: null }), "AMOUNT_AND_REF_REQUIRED"],
      ["ttl 59", { action: "login", ttl_seconds: 59 }, "INVALID_TTL"],
      ["ttl 901", { action: "login", ttl_seconds: 901 }, "INVALID_TTL"],
      ["ttl fractional", { action: "login", ttl_seconds: 120.5 }, "INVALID_TTL"],
      ["ttl a string", { action: "login", ttl_seconds: "300" }, "INVALID_TTL"],
      ["brand empty", { action: "login", brand: "" }, "INVALID_BRAND"],
      ["brand with surrounding spaces", { action: "login", brand: " Acme " }, "INVALID_BRAND"],
      ["brand over 80 characters", { action: "login", brand: "A".repeat(81) }, "INVALID_BRAND"],
      ["brand with a control character", { action: "login", brand: "Acme\nTravel" }, "INVALID_BRAND"],
      ["brand not a string", { action: "login", brand: 7 }, "INVALID_BRAND"],
      ["metadata an array", { action: "login", metadata: ["a"] }, "INVALID_METADATA"],
      ["metadata a string", { action: "login", metadata: "a=b" }, "INVALID_METADATA"],
      ["metadata with a number", { action: "login", metadata: { n: 1 } }, "INVALID_METADATA"],
      ["metadata nested", { action: "login", metadata: { a: { b: "c" } } }, "INVALID_METADATA"],
      ["metadata with an empty key", { action: "login", metadata: { "": "x" } }, "INVALID_METADATA"],
      [
        "metadata with 51 keys",
        { action: "login", metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) },
        "METADATA_TOO_LARGE",
      ],
      ["metadata key over 40 characters", { action: "login", metadata: { ["k".repeat(41)]: "v" } }, "METADATA_TOO_LARGE"],
      ["metadata value over 500 characters", { action: "login", metadata: { note: "v".repeat(501) } }, "METADATA_TOO_LARGE"],
    ];
    for (const [name, body, code] of cases) {
      it(`400 ${code}: ${name}`, async () => {
        const m = await merchantFactory();
        expect(errorOf(await createSession(m.keys.sk_test, body))).toEqual({ status: 400, code });
        expect(
          (await testDb()`select count(*)::int as n from private.hosted_sessions where merchant_id = ${m.merchant_id}::uuid`)[0].n,
        ).toBe(0);
      });
    }

    it("limits at the edge: 50 keys of 40 characters and 500-character values are accepted", async () => {
      const m = await merchantFactory();
      const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padStart(40, "k"), "v".repeat(500)]));
      const res = await createSession(m.keys.sk_test, { action: "login", metadata });
      expect(res.status, res.text).toBe(201);
      expect(res.body.metadata).toEqual(metadata);
    });

    it("money as written: 1299.0 and 1e3 are floats (INVALID_AMOUNT_CENTS)", async () => {
      const m = await merchantFactory();
      for (const literal of ["1299.0", "1e3", "-0"]) {
        const rawBody = `{"action":"authorize","amount_cents":${literal},"currency":"EUR","external_txn_ref":"order-12345"}`;
        const res = await createSession(m.keys.sk_test, undefined, { rawBody, headers: { "content-type": "application/json" } });
        expect(errorOf(res), literal).toEqual({ status: 400, code: "INVALID_AMOUNT_CENTS" });
      }
    });

    it("400 INVALID_INPUT for an unknown field (a misspelt one is never ignored) and for a body that is not an object", async () => {
      const m = await merchantFactory();
      const res = await createSession(m.keys.sk_test, { action: "login", ammount_cents: 5 });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "INVALID_INPUT", fields: ["ammount_cents"] });
      expect(errorOf(await createSession(m.keys.sk_test, ["login"]))).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(errorOf(await createSession(m.keys.sk_test, { action: "login", merchant_id: 5 }))).toEqual({
        status: 400,
        code: "INVALID_INPUT",
      });
    });

    it("403 MERCHANT_MISMATCH when merchant_id is another merchant's (or anything but the key's)", async () => {
      const [m, other] = await Promise.all([merchantFactory(), merchantFactory()]);
      for (const merchantId of [other.merchant_id, "not-a-merchant"]) {
        expect(errorOf(await createSession(m.keys.sk_test, { action: "login", merchant_id: merchantId }))).toEqual({
          status: 403,
          code: "MERCHANT_MISMATCH",
        });
      }
    });
  });

  describe("security", () => {
    it("401 API_KEY_REQUIRED without a key, INVALID_API_KEY for an unknown or malformed one, before the body", async () => {
      expect(errorOf(await createSession(null, { action: "login" }))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
      expect(errorOf(await createSession(null, {}))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
      expect(errorOf(await createSession(`sk_test_${"A".repeat(40)}`, { action: "login" }))).toEqual({
        status: 401,
        code: "INVALID_API_KEY",
      });
      expect(errorOf(await createSession("sk_test_short", { action: "nope" }))).toEqual({ status: 401, code: "INVALID_API_KEY" });
    });

    it("a publishable key is rejected (401 AUTH_REQUIRED, section 5 rule 1), test or live", async () => {
      const m = await merchantFactory();
      for (const key of [m.keys.pk_test, m.keys.pk_live]) {
        expect(errorOf(await createSession(key, { action: "login" }))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
      }
      expect((await testDb()`select count(*)::int as n from private.hosted_sessions where merchant_id = ${m.merchant_id}::uuid`)[0].n).toBe(
        0,
      );
    });

    it("405 on GET", async () => {
      const m = await merchantFactory();
      expect(errorOf(await createSession(m.keys.sk_test, undefined, { method: "GET" }))).toEqual({
        status: 405,
        code: "METHOD_NOT_ALLOWED",
      });
    });
  });
});
