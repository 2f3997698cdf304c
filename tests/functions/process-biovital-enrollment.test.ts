import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedDatabase, startEmbeddedDatabase } from "../../scripts/local/embedded-db";
import { freePort } from "../../scripts/local/ports";
import type { RunningServer } from "../../scripts/local/server";
import { sha256Hex } from "../../shared/lib/crypto";
import { capture } from "../harness/captures";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { CONSENT, enrollPerson, strangerCapture } from "../harness/identity";
import { callOn, startVariantServer } from "../harness/variant-server";

function enroll(key: string, body: unknown, headers: Record<string, string> = {}) {
  return call("process-biovital-enrollment", { key, body, headers });
}

function stranger() {
  const { descriptor, nonce } = strangerCapture();
  return { capture_nonce: nonce, face_template: descriptor, consent: CONSENT };
}

describe("process-biovital-enrollment", () => {
  describe("happy", () => {
    it("creates an identity and hands the session token to the device once", async () => {
      const merchant = await merchantFactory();
      const res = await enroll(merchant.keys.pk_test, stranger());
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: "enrolled", consent: CONSENT });
      expect(res.body.subject_ref).toMatch(/^sub_[0-9a-f]{48}$/);
      const token = res.headers.get("x-session-token")!;
      expect(token.split(".")).toHaveLength(3);
      expect(res.body.session_token_hash).toBe(await sha256Hex(token));
      expect(res.text).not.toContain(token);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(JSON.stringify(res.body)).not.toMatch(/user_id|identity_id/);
    });

    it("recognises an already-enrolled face and answers the existing subject_ref", async () => {
      const merchant = await merchantFactory();
      const first = await enrollPerson(merchant.keys.pk_test, 21);
      const again = await enrollPerson(merchant.keys.pk_test, 21);
      expect(again.subject_ref).toBe(first.subject_ref);
      expect(again.session_token).not.toBe(first.session_token);
      const other = await enrollPerson(merchant.keys.pk_test, 22);
      expect(other.subject_ref).not.toBe(first.subject_ref);
    });

    it("stores no embedding in the clear: a search code and the protected embedding sealed, not the raw one (D-680)", async () => {
      const merchant = await merchantFactory();
      const body = stranger();
      const res = await enroll(merchant.keys.pk_test, body);
      const [{ identity_id }] = await testDb()`select identity_id from private.subject_refs where subject_ref = ${res.body.subject_ref}`;
      const raw = body.face_template.face.embedding;
      const [row] = await testDb()`select length(code) as bits, encode(sealed, 'escape') as sealed,
          private.template_similarity(sealed, seal_key_id, ${`{${raw.join(",")}}`}::real[]) as cosine
        from private.face_templates where identity_id = ${identity_id}`;
      expect(row.bits).toBe(2048);
      // No component of the raw embedding is in the stored bytes, and what the seal holds is the
      // protected (rotated) embedding: unsealed with the store's key, still far from the raw one.
      for (const x of raw.slice(0, 8)) expect(row.sealed.includes(String(Math.fround(x)).slice(0, 7))).toBe(false);
      expect(Math.abs(row.cosine)).toBeLessThan(0.5);
    });
  });

  describe("errors", () => {
    it("answers a consent without its version or retention_days as missing consent (403), a malformed one as 400", async () => {
      const merchant = await merchantFactory();
      for (const consent of [{}, { accepted: true }, { version: CONSENT.version }, { retention_days: 30 }, { ...CONSENT, version: null }]) {
        const res = await enroll(merchant.keys.pk_test, { ...stranger(), consent });
        expect({ consent, ...errorOf(res) }).toEqual({ consent, status: 403, code: "CONSENT_REQUIRED" });
      }
      const malformed = await enroll(merchant.keys.pk_test, { ...stranger(), consent: { ...CONSENT, retention_days: "365" } });
      expect(errorOf(malformed)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(malformed.body.fields).toEqual(["consent.retention_days"]);
    });

    it("requires consent before anything else, with no bypass", async () => {
      const merchant = await merchantFactory();
      const { consent: _consent, ...withoutConsent } = stranger();
      expect(errorOf(await enroll(merchant.keys.pk_test, withoutConsent))).toEqual({ status: 403, code: "CONSENT_REQUIRED" });
      expect(errorOf(await enroll(merchant.keys.pk_test, { ...stranger(), consent: { ...CONSENT, accepted: false } }))).toEqual({
        status: 403,
        code: "CONSENT_REQUIRED",
      });
      expect(errorOf(await enroll(merchant.keys.pk_test, { ...withoutConsent, face_template: undefined }))).toEqual({
        status: 403,
        code: "CONSENT_REQUIRED",
      });
      const bypass = await enroll(merchant.keys.pk_test, { ...stranger(), skip_consent: true });
      expect(errorOf(bypass)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(bypass.body.fields).toContain("skip_consent");
    });

    it("422 FACE_TEMPLATE_REQUIRED without a descriptor", async () => {
      const merchant = await merchantFactory();
      const { face_template: _t, ...body } = stranger();
      expect(errorOf(await enroll(merchant.keys.pk_test, body))).toEqual({ status: 422, code: "FACE_TEMPLATE_REQUIRED" });
      expect(errorOf(await enroll(merchant.keys.pk_test, { ...body, face_template: null }))).toEqual({
        status: 422,
        code: "FACE_TEMPLATE_REQUIRED",
      });
    });

    it("takes no document, even a valid passport: the account is born with face and voice (spec 4.3)", async () => {
      const merchant = await merchantFactory();
      const body = stranger();
      const res = await enroll(merchant.keys.pk_test, { ...body, document: await passport() });
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(res.body.fields).toEqual(["document"]);
      const [{ count }] =
        await testDb()`select count(*)::int as count from private.capture_nonces where capture_nonce = ${body.capture_nonce}`;
      expect(count).toBe(0);
    });

    it("400 INVALID_INPUT names the fields", async () => {
      const merchant = await merchantFactory();
      const bad = await enroll(merchant.keys.pk_test, { ...stranger(), consent: { version: "v1", retention_days: 0 } });
      expect(errorOf(bad)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(bad.body.fields).toContain("consent.retention_days");
      const body = stranger();
      const broken = await enroll(merchant.keys.pk_test, {
        ...body,
        face_template: { ...body.face_template, face: { ...body.face_template.face, embedding: [1, 2] } },
      });
      expect(errorOf(broken)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(broken.body.fields.some((f: string) => f.startsWith("face_template.face"))).toBe(true);
      expect(
        errorOf(
          await call("process-biovital-enrollment", {
            key: merchant.keys.pk_test,
            rawBody: "[1,2]",
            headers: { "content-type": "application/json" },
          }),
        ),
      ).toEqual({ status: 400, code: "INVALID_INPUT" });
    });

    it.each(["photo", "replay", "lipsync", "screen"] as const)(
      "403 BIOMETRIC_LIVENESS_FAILED for a %s attack, with the engine's reason",
      async (attack) => {
        const merchant = await merchantFactory();
        const { descriptor, nonce } = capture(31, { attack });
        const res = await enroll(merchant.keys.pk_test, { capture_nonce: nonce, face_template: descriptor, consent: CONSENT });
        expect(errorOf(res)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
        expect(["no_pulse", "av_desync", "pulse_speech_uncoupled", "no_speech", "low_quality"]).toContain(res.body.reason);
      },
    );

    it("409 SESSION_PRESENT when the device already holds a live session", async () => {
      const merchant = await merchantFactory();
      const first = await enroll(merchant.keys.pk_test, stranger());
      const token = first.headers.get("x-session-token")!;
      const res = await enroll(merchant.keys.pk_test, stranger(), { authorization: `Bearer ${token}` });
      expect(errorOf(res)).toEqual({ status: 409, code: "SESSION_PRESENT" });
    });

    it("409 IDENTITY_UNREACHABLE when the face belongs to an erased identity", async () => {
      const merchant = await merchantFactory();
      const body = stranger();
      const first = await enroll(merchant.keys.pk_test, body);
      await testDb()`update private.identities set erased_at = now()
        where id = (select identity_id from private.subject_refs where subject_ref = ${first.body.subject_ref})`;
      const { descriptor, nonce } = capture(1, {});
      const again = { capture_nonce: nonce, face_template: { ...descriptor, face: body.face_template.face }, consent: CONSENT };
      expect(errorOf(await enroll(merchant.keys.pk_test, again))).toEqual({ status: 409, code: "IDENTITY_UNREACHABLE" });
    });

    it("409 CAPTURE_REPLAYED when a descriptor is submitted twice", async () => {
      const merchant = await merchantFactory();
      const body = stranger();
      expect((await enroll(merchant.keys.pk_test, body)).status).toBe(200);
      expect(errorOf(await enroll(merchant.keys.pk_test, body))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    });

    it("sandbox scenarios force failure paths only with sandbox keys", async () => {
      const merchant = await merchantFactory();
      const forced = await enroll(merchant.keys.pk_test, stranger(), { "x-service-scenario": "liveness_fail" });
      expect(errorOf(forced)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
      expect(errorOf(await enroll(merchant.keys.pk_test, stranger(), { "x-service-scenario": "duplicate_enroll" }))).toEqual({
        status: 409,
        code: "IDENTITY_UNREACHABLE",
      });
      expect(errorOf(await enroll(merchant.keys.pk_live, stranger(), { "x-service-scenario": "liveness_fail" }))).toEqual({
        status: 400,
        code: "SCENARIO_NOT_ALLOWED",
      });
      expect(errorOf(await enroll(merchant.keys.pk_test, stranger(), { "x-service-scenario": "approve_everything" }))).toEqual({
        status: 400,
        code: "INVALID_SCENARIO",
      });
      const { descriptor, nonce } = capture(32, { attack: "photo" });
      const success = await enroll(
        merchant.keys.pk_test,
        { capture_nonce: nonce, face_template: descriptor, consent: CONSENT },
        { "x-service-scenario": "success" },
      );
      expect(errorOf(success)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
    });

    it("401 for a missing or unknown key", async () => {
      expect(errorOf(await call("process-biovital-enrollment", { body: stranger() }))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
      expect(errorOf(await enroll(`pk_live_${"Z".repeat(40)}`, stranger()))).toEqual({ status: 401, code: "INVALID_API_KEY" });
    });
  });

  describe("real failures (500) and an unreachable template store", () => {
    let unreachableStore: RunningServer;
    let schemalessStore: RunningServer;
    let brokenSigning: RunningServer;
    let emptyDatabase: EmbeddedDatabase;

    beforeAll(async () => {
      const closedPort = await freePort();
      emptyDatabase = await startEmbeddedDatabase({ dataDir: "memory://", port: await freePort() });
      const functions = ["process-biovital-enrollment", "face-identify"];
      [unreachableStore, schemalessStore, brokenSigning] = await Promise.all([
        startVariantServer(functions, { TEMPLATE_STORE_URL: `postgres://postgres@127.0.0.1:${closedPort}/postgres` }),
        startVariantServer(functions, { TEMPLATE_STORE_URL: emptyDatabase.url }),
        startVariantServer(functions, {
          SIGNING_KEYS_JWK: JSON.stringify([{ kty: "OKP", crv: "Ed25519", x: "AAAA", d: "AAAA", kid: "broken" }]),
        }),
      ]);
    }, 120_000);

    afterAll(async () => {
      await Promise.all([unreachableStore?.stop(), schemalessStore?.stop(), brokenSigning?.stop()]);
      await emptyDatabase?.stop();
    });

    it("500 TEMPLATE_STORE_FAILED when the template store cannot be reached", async () => {
      const merchant = await merchantFactory();
      const res = await callOn(unreachableStore, "process-biovital-enrollment", { key: merchant.keys.pk_test, body: stranger() });
      expect([res.status, res.body.code]).toEqual([500, "TEMPLATE_STORE_FAILED"]);
    });

    it("500 IDENTITY_CREATE_FAILED when the store refuses the identity", async () => {
      const merchant = await merchantFactory();
      const res = await callOn(schemalessStore, "process-biovital-enrollment", { key: merchant.keys.pk_test, body: stranger() });
      expect([res.status, res.body.code]).toEqual([500, "IDENTITY_CREATE_FAILED"]);
      expect(JSON.stringify(res.body)).not.toMatch(/stack|private\.|function/);
    });

    it("500 SESSION_MINT_FAILED when the session cannot be signed", async () => {
      const merchant = await merchantFactory();
      const res = await callOn(brokenSigning, "process-biovital-enrollment", { key: merchant.keys.pk_test, body: stranger() });
      expect([res.status, res.body.code]).toEqual([500, "SESSION_MINT_FAILED"]);
    });

    it("face-identify answers 503 TEMPLATE_STORE_UNAVAILABLE when the store cannot be reached", async () => {
      const merchant = await merchantFactory();
      const { descriptor, nonce } = capture(7);
      const res = await callOn(unreachableStore, "face-identify", {
        key: merchant.keys.pk_test,
        body: { face_template: descriptor, capture_nonce: nonce },
        headers: { "x-service-timestamp": String(Math.floor(Date.now() / 1000)), "x-service-nonce": `n-${crypto.randomUUID()}` },
      });
      expect([res.status, res.body.code]).toEqual([503, "TEMPLATE_STORE_UNAVAILABLE"]);
    });
  });
});
