import { beforeAll, describe, expect, inject, it } from "vitest";
import { createFunctionApp } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import type { Bindings } from "../../shared/kernel/config";
import { rpc } from "../../shared/kernel/db/rpc";
import { randomBase62, sha256Hex } from "../../shared/lib/crypto";
import type { CreatedMerchant } from "../../shared/merchants/accounts";
import { merchantFactory, testDb } from "../harness/factories";

/** No function uses every key policy yet, so a probe app exercises the middleware in this process. */
function probeApp() {
  const app = createFunctionApp("auth-probe");
  app.get("/secret", apiKeyAuth("secret"), (c) => c.json({ principal: c.var.principal }));
  app.get("/publishable", apiKeyAuth("publishable"), (c) => c.json({ principal: c.var.principal }));
  app.get("/anonymous", apiKeyAuth("anonymous"), (c) => c.json({ principal: c.var.principal }));
  return app;
}

const app = probeApp();
// readConfig caches per bindings object: one object per configuration.
const bindings = { DATABASE_URL: inject("databaseUrl") };
const customLegacy = { DATABASE_URL: inject("databaseUrl"), LEGACY_API_KEY_HEADER: "X-Merchant-Token" };

async function probe(policy: "secret" | "publishable" | "anonymous", headers: Record<string, string> = {}, env: Bindings = bindings) {
  const res = await app.request(`/functions/v1/auth-probe/${policy}`, { headers }, env);
  return { status: res.status, body: (await res.json()) as any };
}

const failure = (status: number, code: string) => ({ status, body: { error: expect.any(String), code } });
const wellFormedUnknown = (prefix: string) => `${prefix}_${randomBase62(40)}`;

describe("API key auth", () => {
  let a: CreatedMerchant;
  let b: CreatedMerchant;
  beforeAll(async () => {
    [a, b] = await Promise.all([merchantFactory(), merchantFactory()]);
  });

  describe("happy", () => {
    it.each([
      ["pk_test", "publishable", "test"],
      ["sk_test", "secret", "test"],
      ["pk_live", "publishable", "live"],
      ["sk_live", "secret", "live"],
    ] as const)("%s fixes kind %s and environment %s on the principal", async (name, keyKind, environment) => {
      const res = await probe("publishable", { "x-service-api-key": a.keys[name] });
      expect(res.status).toBe(200);
      expect(res.body.principal).toEqual({
        kind: "merchant_key",
        merchantId: a.merchant_id,
        environment,
        keyKind,
        keyId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    });

    it("accepts secret keys on secret endpoints and both kinds on publishable ones", async () => {
      for (const key of [a.keys.sk_test, a.keys.sk_live]) expect((await probe("secret", { "x-service-api-key": key })).status).toBe(200);
      for (const key of Object.values(a.keys)) expect((await probe("publishable", { "x-service-api-key": key })).status).toBe(200);
    });

    it("lets an anonymous endpoint through without a key, with no principal", async () => {
      expect(await probe("anonymous")).toEqual({ status: 200, body: { principal: null } });
      const keyed = await probe("anonymous", { "x-service-api-key": a.keys.pk_test });
      expect(keyed.body.principal.merchantId).toBe(a.merchant_id);
    });

    it("accepts the default legacy header x-api-key", async () => {
      const res = await probe("secret", { "x-api-key": a.keys.sk_test });
      expect(res.status).toBe(200);
      expect(res.body.principal).toMatchObject({ merchantId: a.merchant_id, keyKind: "secret", environment: "test" });
    });

    it("accepts a legacy header renamed through LEGACY_API_KEY_HEADER, and then not x-api-key", async () => {
      const res = await probe("secret", { "x-merchant-token": a.keys.sk_live }, customLegacy);
      expect(res.status).toBe(200);
      expect(res.body.principal).toMatchObject({ merchantId: a.merchant_id, environment: "live" });
      expect(await probe("secret", { "x-api-key": a.keys.sk_live }, customLegacy)).toEqual(failure(401, "API_KEY_REQUIRED"));
    });
  });

  describe("errors", () => {
    it.each(["secret", "publishable"] as const)("answers a missing key on a %s endpoint with 401 API_KEY_REQUIRED", async (policy) => {
      expect(await probe(policy)).toEqual(failure(401, "API_KEY_REQUIRED"));
    });

    it.each(["sk_test", "pk_test", "sk_live", "pk_live"])(
      "answers an unknown well-formed %s key with 401 INVALID_API_KEY",
      async (prefix) => {
        expect(await probe("publishable", { "x-service-api-key": wellFormedUnknown(prefix) })).toEqual(failure(401, "INVALID_API_KEY"));
      },
    );

    it.each([
      ["too short", "sk_test_abc123"],
      ["unknown prefix", `rk_test_${randomBase62(40)}`],
      ["unknown environment", `sk_prod_${randomBase62(40)}`],
      ["not base62", `sk_test_${randomBase62(39)}!`],
      ["surrounding text", `Bearer sk_test_${randomBase62(40)}`],
    ])("answers a malformed key (%s) with 401 INVALID_API_KEY, on every policy", async (_, key) => {
      for (const policy of ["secret", "publishable", "anonymous"] as const) {
        expect(await probe(policy, { "x-service-api-key": key })).toEqual(failure(401, "INVALID_API_KEY"));
      }
    });

    it("answers a revoked key with 401 INVALID_API_KEY", async () => {
      const merchant = await merchantFactory();
      expect((await probe("secret", { "x-service-api-key": merchant.keys.sk_test })).status).toBe(200);
      await rpc(testDb(), "api_key_revoke", { key_hash: await sha256Hex(merchant.keys.sk_test) });
      expect(await probe("secret", { "x-service-api-key": merchant.keys.sk_test })).toEqual(failure(401, "INVALID_API_KEY"));
      expect(await probe("anonymous", { "x-service-api-key": merchant.keys.sk_test })).toEqual(failure(401, "INVALID_API_KEY"));
      // The merchant's other keys still work.
      expect((await probe("secret", { "x-service-api-key": merchant.keys.sk_live })).status).toBe(200);
    });

    it.each(["pk_test", "pk_live"] as const)("answers a publishable key (%s) on a secret endpoint with 401 AUTH_REQUIRED", async (name) => {
      expect(await probe("secret", { "x-service-api-key": a.keys[name] })).toEqual(failure(401, "AUTH_REQUIRED"));
      expect(await probe("secret", { "x-api-key": a.keys[name] })).toEqual(failure(401, "AUTH_REQUIRED"));
    });
  });

  describe("security", () => {
    it("resolves each merchant's keys to that merchant only", async () => {
      for (const [merchant, other] of [
        [a, b],
        [b, a],
      ]) {
        for (const key of Object.values(merchant.keys)) {
          const { body } = await probe("publishable", { "x-service-api-key": key });
          expect(body.principal.merchantId).toBe(merchant.merchant_id);
          expect(body.principal.merchantId).not.toBe(other.merchant_id);
        }
      }
    });

    it("does not accept a key whose prefix was changed to another environment or kind", async () => {
      const random = a.keys.sk_test.slice("sk_test_".length);
      for (const forged of [`sk_live_${random}`, `pk_test_${random}`, `pk_live_${random}`]) {
        expect(await probe("publishable", { "x-service-api-key": forged })).toEqual(failure(401, "INVALID_API_KEY"));
      }
    });

    it("judges by x-service-api-key when the legacy header is present too, with no fallback", async () => {
      const both = (primary: string, legacy: string, env: Bindings = bindings, legacyName = "x-api-key") =>
        probe("secret", { "x-service-api-key": primary, [legacyName]: legacy }, env);
      const wins = await both(a.keys.sk_test, b.keys.sk_test);
      expect(wins.body.principal.merchantId).toBe(a.merchant_id);
      expect(await both(wellFormedUnknown("sk_test"), a.keys.sk_test)).toEqual(failure(401, "INVALID_API_KEY"));
      expect(await both(a.keys.pk_test, a.keys.sk_test)).toEqual(failure(401, "AUTH_REQUIRED"));
      const custom = await both(b.keys.sk_live, a.keys.sk_live, customLegacy, "x-merchant-token");
      expect(custom.body.principal.merchantId).toBe(b.merchant_id);
    });
  });
});
