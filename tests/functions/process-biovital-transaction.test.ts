import { decodeJwt } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../scripts/local/server";
import { capture } from "../harness/captures";
import { type DatabaseProxy, startDatabaseProxy } from "../harness/database-proxy";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { CONSENT, enrollPerson, enrollStranger, randomFace, transact } from "../harness/identity";
import { issue, mandateBody, mandateFixture, standInRequest } from "../harness/mandates";
import { serviceUnderTest } from "../harness/service";
import { callOn, startVariantServer } from "../harness/variant-server";

function body(
  subjectRef: string,
  shot: { descriptor: unknown; nonce: string; device_assertion?: unknown },
  extra: Record<string, unknown> = {},
) {
  return {
    action: "ACTION_LOGIN",
    service_hash: `svc:${crypto.randomUUID()}`,
    user_id: subjectRef,
    capture_nonce: shot.nonce,
    face_template: shot.descriptor,
    ...(shot.device_assertion ? { device_assertion: shot.device_assertion } : {}),
    ...extra,
  };
}

/**
 * The function on a server of its own behind a proxy to the service's database, which reads every statement the
 * function sends (one per round trip) and can take the database away at any instant; set up once for the describe
 * block it is called in. `deployment` names its circuit breakers.
 */
function functionBehindProxy(name: string) {
  const wire = { deployment: `${name}-${crypto.randomUUID().slice(0, 8)}` } as {
    deployment: string;
    proxy: DatabaseProxy;
    server: RunningServer;
  };
  beforeAll(async () => {
    wire.proxy = await startDatabaseProxy(serviceUnderTest().databaseUrl);
    wire.server = await startVariantServer(["process-biovital-transaction"], {
      DATABASE_URL: wire.proxy.url,
      DB_POOLER: "0",
      DEPLOYMENT_ID: wire.deployment,
    });
  }, 120_000);
  afterAll(async () => {
    await wire.server?.stop();
    await wire.proxy?.stop();
  });
  return wire;
}

describe("process-biovital-transaction", () => {
  describe("happy", () => {
    it("approves a live capture of the named person and records a capture with a verifiable receipt", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const request = body(person.subject_ref, person.capture());
      const res = await transact(merchant.keys.sk_test, request);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        status: "approved",
        service_hash: request.service_hash,
        assurance_level: "face_voice",
      });
      expect(res.body.transaction_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.immutability_seal).toMatch(/^[0-9a-f]{64}$/);
      const [row] =
        await testDb()`select liveness_passed, coercion_signal, assurance_level, action from private.captures where id = ${res.body.transaction_id}`;
      expect(row).toEqual({ liveness_passed: true, coercion_signal: false, assurance_level: "face_voice", action: "ACTION_LOGIN" });
      const verified = await call("receipt-verify", { query: { code: res.body.receipt_code } });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({
        valid: true,
        transaction_id: res.body.transaction_id,
        assurance_level: "face_voice",
        immutability_seal: res.body.immutability_seal,
      });
      expect(JSON.stringify(verified.body)).not.toContain(person.subject_ref);
    });

    it("recognises sandbox person 7 and refuses person 8 as person 7", async () => {
      const merchant = await merchantFactory();
      const seven = await enrollPerson(merchant.keys.pk_test, 7);
      await enrollPerson(merchant.keys.pk_test, 8);
      expect((await transact(merchant.keys.sk_test, body(seven.subject_ref, capture(7)))).status).toBe(200);
      expect(errorOf(await transact(merchant.keys.sk_test, body(seven.subject_ref, capture(8))))).toEqual({
        status: 403,
        code: "IDENTITY_MISMATCH",
      });
    });

    it("accepts the person's own first-party session JWT and refuses it for anyone else", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const userId = decodeJwt(person.session_token).sub!;
      const ok = await transact("", body(userId, person.capture()), { bearer: person.session_token });
      expect(ok.status, ok.text).toBe(200);
      const other = await transact("", body(crypto.randomUUID(), person.capture()), { bearer: person.session_token });
      expect(errorOf(other)).toEqual({ status: 403, code: "UNAUTHORIZED_DEVICE" });
      await testDb()`update private.sessions set revoked_at = now() where token_hash = encode(sha256(${person.session_token}::bytea), 'hex')`;
      const revoked = await transact("", body(userId, person.capture()), { bearer: person.session_token });
      expect(errorOf(revoked)).toEqual({ status: 403, code: "ACCESS_REVOKED" });
      const forged = await transact("", body(userId, person.capture()), { bearer: `${person.session_token}x` });
      expect(errorOf(forged)).toEqual({ status: 401, code: "INVALID_USER_TOKEN" });
    });
  });

  describe("ACTION_SIGNUP", () => {
    it("approves a sign-up with a live capture and no document, and its receipt names ACTION_SIGNUP", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const res = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture(), { action: "ACTION_SIGNUP" }));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: "approved", assurance_level: "face_voice" });
      const [row] = await testDb()`select action, assurance_level from private.captures where id = ${res.body.transaction_id}`;
      expect(row).toEqual({ action: "ACTION_SIGNUP", assurance_level: "face_voice" });
      const verified = await call("receipt-verify", { query: { code: res.body.receipt_code } });
      expect(verified.body).toMatchObject({ valid: true, action: "ACTION_SIGNUP", assurance_level: "face_voice", mandate: null });
      // A sign-up is judged like any act: another face is refused.
      const stranger = await enrollStranger(merchant.keys.pk_test);
      const refused = await transact(merchant.keys.sk_test, body(person.subject_ref, stranger.capture(), { action: "ACTION_SIGNUP" }));
      expect(errorOf(refused)).toEqual({ status: 403, code: "IDENTITY_MISMATCH" });
    });

    it("through a mandate consumes the login scope, and the receipt says a mandate stood in for the sign-up", async () => {
      const { merchant, person, mandate } = await mandateFixture({
        scopes: ["login"],
        ceiling: { kind: "count", count: 1, period: "lifetime" },
      });
      const signup = {
        action: "ACTION_SIGNUP",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: person.subject_ref,
        mandate_id: mandate.mandate_id,
      };
      const res = await transact(merchant.keys.sk_test, signup, { headers: { "idempotency-key": `idem-${crypto.randomUUID()}` } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.mandate).toMatchObject({ scope_used: "login", at_limit: true });
      const verified = await call("receipt-verify", { query: { code: res.body.receipt_code } });
      expect(verified.body).toMatchObject({ valid: true, action: "ACTION_MANDATE", mandate: { action: "ACTION_SIGNUP" } });
    });
  });

  describe("documents and assurance", () => {
    it("requires a verified document for payments and signatures; a valid passport yields face_voice_doc and a record of its capture", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const pay = { action: "ACTION_PAYMENT", amount: 1999, currency: "BRL" };
      const refused = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture(), pay));
      expect(errorOf(refused)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
      expect(refused.body).toMatchObject({ action: "ACTION_PAYMENT", accepted_documents: ["passport", "national_id", "residence_permit"] });
      const sign = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture(), { action: "ACTION_SIGN" }));
      expect(errorOf(sign)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });

      const withDocument = await transact(
        merchant.keys.sk_test,
        body(person.subject_ref, person.capture(), { ...pay, document: await passport({ expiresOn: "2031-01-31" }) }),
      );
      expect(withDocument.status, withDocument.text).toBe(200);
      expect(withDocument.body.assurance_level).toBe("face_voice_doc");
      const [record] = await testDb()`select d.capture_id::text, d.document_type, d.issuing_country, d.expires_on::text,
          d.date_of_birth::text, d.portrait_similarity, d.csca_fingerprint = a.fingerprint as chained
        from private.identity_documents d join private.document_trust_anchors a on a.environment = 'test'
          and a.fingerprint = d.csca_fingerprint
        join private.subject_refs s on s.identity_id = d.identity_id where s.subject_ref = ${person.subject_ref}`;
      expect(record).toEqual({
        capture_id: withDocument.body.transaction_id,
        document_type: "passport",
        issuing_country: "UTO",
        expires_on: "2031-01-31",
        date_of_birth: "1990-04-12",
        portrait_similarity: 0.91,
        chained: true,
      });
      const later = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture(), { action: "ACTION_SIGN" }));
      expect(later.status).toBe(200);
      expect(later.body.assurance_level).toBe("face_voice_doc");
    });

    it("refuses each passport that fails passive authentication with 403 DOCUMENT_REQUIRED, the cause in reason, before anything is written", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const pay = { action: "ACTION_PAYMENT", amount: 1999, currency: "BRL" };
      const valid = await passport();
      const cases: [string, object, string, Record<string, unknown>?][] = [
        ["tampered", await passport({ case: "tampered" }), "document_data_group_mismatch", { data_group: 1 }],
        ["another portrait", { ...valid, dg2_hash: btoa("x".repeat(32)) }, "document_data_group_mismatch", { data_group: 2 }],
        ["wrong signer", await passport({ case: "wrong-signer" }), "document_signature_invalid"],
        ["expired certificate", await passport({ case: "expired" }), "document_certificate_expired", { certificate: "document_signer" }],
        ["unknown CSCA", await passport({ case: "unknown-csca" }), "document_issuer_untrusted"],
        ["expired document", await passport({ expiresOn: "2025-12-31" }), "document_expired"],
        ["portrait below the gate", await passport({ portraitSimilarity: 0.6 }), "document_portrait_mismatch"],
        ["not an EF.SOD", { ...valid, sod: btoa("not a security object") }, "document_unreadable", { detail: "sod_not_ef_sod" }],
        ["not a DG1", { ...valid, dg1: btoa("\x61\x03\x5f\x1f\x00") }, "document_data_group_mismatch", { data_group: 1 }],
      ];
      for (const [name, document, reason, extra] of cases) {
        const shot = person.capture();
        const res = await transact(merchant.keys.sk_test, body(person.subject_ref, shot, { ...pay, document }));
        // Spec 4.4 rule 3: one envelope whatever was wrong; the cause in reason (D-427).
        expect(errorOf(res), `${name}: ${res.text}`).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
        expect(res.body, name).toMatchObject({ reason, accepted_documents: expect.any(Array), ...extra });
        const [{ captures }] = await testDb()`select count(*)::int as captures from private.captures where capture_nonce = ${shot.nonce}`;
        expect(captures, name).toBe(0);
      }
      const [{ count }] = await testDb()`select count(*)::int as count from private.identity_documents d
        join private.subject_refs s on s.identity_id = d.identity_id where s.subject_ref = ${person.subject_ref}`;
      expect(count).toBe(0);
      const none = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture(), pay));
      expect(errorOf(none)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
      expect(none.body).toMatchObject({ reason: "document_missing", action: "ACTION_PAYMENT" });
      // Nor does a money-scope mandate see a document: refused evidence left none.
      const { granted_by: _, proof: __, ...terms } = mandateBody(person, crypto.randomUUID());
      const login = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture(), { grant: terms }));
      expect(login.body.assurance_level).toBe("face_voice");
      const granted = { ...terms, granted_by: person.subject_ref, proof: { capture_id: login.body.transaction_id } };
      expect(errorOf(await issue(merchant.keys.sk_test, granted))).toEqual({
        status: 403,
        code: "DOCUMENT_REQUIRED",
      });
    });

    it("binds a document to one identity: another person presenting the same chip data is refused, its holder is not", async () => {
      const merchant = await merchantFactory();
      const holder = await enrollStranger(merchant.keys.pk_test);
      const other = await enrollStranger(merchant.keys.pk_test);
      const document = await passport();
      const first = await transact(merchant.keys.sk_test, body(holder.subject_ref, holder.capture(), { action: "ACTION_SIGN", document }));
      expect(first.status, first.text).toBe(200);
      const shot = other.capture();
      const taken = await transact(merchant.keys.sk_test, body(other.subject_ref, shot, { action: "ACTION_SIGN", document }));
      expect(errorOf(taken)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
      expect(taken.body).toMatchObject({ reason: "document_already_bound", accepted_documents: expect.any(Array) });
      const [{ captures }] = await testDb()`select count(*)::int as captures from private.captures where capture_nonce = ${shot.nonce}`;
      expect(captures).toBe(0);
      const again = await transact(merchant.keys.sk_test, body(holder.subject_ref, holder.capture(), { action: "ACTION_SIGN", document }));
      expect(again.status, again.text).toBe(200);
      expect(errorOf(await transact(merchant.keys.sk_test, body(other.subject_ref, other.capture(), { action: "ACTION_SIGN" })))).toEqual({
        status: 403,
        code: "DOCUMENT_REQUIRED",
      });
    });

    it("refuses self-attested documents (the former shape) with either key", async () => {
      const merchant = await merchantFactory();
      const attested = { type: "passport", issuing_country: "BR", expires_on: "2031-01-31", face_embedding: randomFace() };
      for (const environment of ["test", "live"] as const) {
        const person = await enrollStranger(merchant.keys[`pk_${environment}`]);
        const res = await transact(merchant.keys[`sk_${environment}`], body(person.subject_ref, person.capture(), { document: attested }));
        expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_INPUT" });
        expect(res.body.fields.every((field: string) => field.startsWith("document."))).toBe(true);
      }
    });

    it("verifies live documents against the live trust list only, and then unlocks money scopes", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_live);
      const pay = { action: "ACTION_PAYMENT", amount: 1999, currency: "BRL" };
      const signed = (purpose: string) => person.signedCapture(merchant.keys.sk_live, purpose);
      const sandboxPassport = await transact(
        merchant.keys.sk_live,
        body(person.subject_ref, await signed("payment"), { ...pay, document: await passport() }),
      );
      expect(errorOf(sandboxPassport)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
      expect(sandboxPassport.body.reason).toBe("document_issuer_untrusted");
      // Grants are made with grant captures showing their terms (mandate-issue's proof): one before the document.
      const paymentTerms = (agent: string) => {
        const { granted_by: _, proof: __, ...terms } = mandateBody(person, crypto.randomUUID(), { granted_to: agent, scopes: ["payment"] });
        return terms;
      };
      const olderTerms = paymentTerms("agent_older");
      const login = await transact(merchant.keys.sk_live, body(person.subject_ref, await signed("grant"), { grant: olderTerms }));
      expect(login.body.assurance_level).toBe("face_voice");

      const paid = await transact(
        merchant.keys.sk_live,
        body(person.subject_ref, await signed("payment"), { ...pay, document: await passport({ environment: "live" }) }),
      );
      expect(paid.status, paid.text).toBe(200);
      expect(paid.body.assurance_level).toBe("face_voice_doc");
      const grant = (captureId: string, terms: Record<string, unknown>) =>
        issue(merchant.keys.sk_live, { ...terms, granted_by: person.subject_ref, proof: { capture_id: captureId } });
      // A payment proves no grant; a grant capture made now, with the document on record, proves one at face_voice_doc.
      expect(errorOf(await grant(paid.body.transaction_id, paymentTerms("agent_payment")))).toEqual({ status: 403, code: "PROOF_INVALID" });
      const newerTerms = paymentTerms("agent_newer");
      const granting = await transact(merchant.keys.sk_live, body(person.subject_ref, await signed("grant"), { grant: newerTerms }));
      expect(granting.body.assurance_level).toBe("face_voice_doc");
      const issued = await grant(granting.body.transaction_id, newerTerms);
      expect(issued.status, issued.text).toBe(201);
      expect(issued.body.assurance_level).toBe("face_voice_doc");
      // The older grant capture came before the document: it never infers one (4.7 rule 2).
      const older = await grant(login.body.transaction_id, olderTerms);
      expect(older.status, older.text).toBe(201);
      expect(older.body.assurance_level).toBe("face_voice");
    });

    it("stops deriving face_voice_doc once the document on record has expired", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const first = await transact(
        merchant.keys.sk_test,
        body(person.subject_ref, person.capture(), { document: await passport({ expiresOn: "2027-06-30" }) }),
      );
      expect(first.body.assurance_level).toBe("face_voice_doc");
      const after = new Date("2027-07-01T12:00:00Z");
      const late = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture({ at: after })), { now: after });
      expect(late.status, late.text).toBe(200);
      expect(late.body.assurance_level).toBe("face_voice");
    });

    it("never accepts a client-sent assurance_level", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const res = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture(), { assurance_level: "face_voice_doc" }));
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(res.body.fields).toContain("assurance_level");
    });
  });

  describe("refusals", () => {
    it.each(["photo", "replay", "lipsync", "screen"] as const)("refuses a %s attack with the liveness refusal", async (attack) => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const res = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture({ attack })));
      expect(errorOf(res)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
      expect(typeof res.body.reason).toBe("string");
    });

    it("refuses a coerced person (arousal against their baseline) with COERCION_DETECTED", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const shot = person.capture({ state: "coerced" });
      const res = await transact(merchant.keys.sk_test, body(person.subject_ref, shot));
      expect(errorOf(res)).toEqual({ status: 403, code: "COERCION_DETECTED" });
      const [row] =
        await testDb()`select liveness_passed, coercion_signal, assurance_level from private.captures where capture_nonce = ${shot.nonce}`;
      expect(row).toEqual({ liveness_passed: true, coercion_signal: true, assurance_level: null });
    });

    it("refuses a face that is nobody's with FACE_MATCH_BELOW_THRESHOLD", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const shot = capture(1);
      shot.descriptor.face.embedding = randomFace();
      const res = await transact(merchant.keys.sk_test, body(person.subject_ref, shot));
      expect(errorOf(res)).toEqual({ status: 403, code: "FACE_MATCH_BELOW_THRESHOLD" });
      // the refusal is no similarity oracle: it says below the gate, never how far
      expect(Object.keys(res.body).sort()).toEqual(["code", "error"]);
    });

    it("refuses another real person as the enrolled one: cosine 0.894 is two persons under face-api (D-385)", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      for (const similarity of [0.894, 0.959]) {
        const res = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture({ similarity })));
        expect(errorOf(res)).toEqual({ status: 403, code: "FACE_MATCH_BELOW_THRESHOLD" });
      }
      expect((await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture({ similarity: 0.975 })))).status).toBe(200);
    });

    it("refuses an unknown user_id and another merchant's subject_ref", async () => {
      const a = await merchantFactory();
      const b = await merchantFactory();
      const person = await enrollStranger(a.keys.pk_test);
      expect(errorOf(await transact(a.keys.sk_test, body(`sub_${"0".repeat(48)}`, person.capture())))).toEqual({
        status: 403,
        code: "IDENTITY_MISMATCH",
      });
      expect(errorOf(await transact(b.keys.sk_test, body(person.subject_ref, person.capture())))).toEqual({
        status: 403,
        code: "IDENTITY_MISMATCH",
      });
      expect(errorOf(await transact(a.keys.sk_live, body(person.subject_ref, person.capture())))).toEqual({
        status: 403,
        code: "IDENTITY_MISMATCH",
      });
    });

    it("sandbox scenarios force refusals, never approvals", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const forced = (scenario: string, key = merchant.keys.sk_test) =>
        transact(key, body(person.subject_ref, person.capture()), { headers: { "x-service-scenario": scenario } });
      expect(errorOf(await forced("liveness_fail"))).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
      expect(errorOf(await forced("vrc_coerced"))).toEqual({ status: 403, code: "COERCION_DETECTED" });
      expect(errorOf(await forced("subject_mismatch"))).toEqual({ status: 403, code: "IDENTITY_MISMATCH" });
      expect(errorOf(await forced("liveness_fail", merchant.keys.sk_live))).toEqual({ status: 400, code: "SCENARIO_NOT_ALLOWED" });
      const photo = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture({ attack: "photo" })), {
        headers: { "x-service-scenario": "success" },
      });
      expect(errorOf(photo)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
    });
  });

  describe("input", () => {
    it.each([
      ["a float", 10.5],
      ["a string", "1000"],
      ["a negative", -1],
      ["beyond 2^53", 2 ** 60],
    ])("400 AMOUNT_INVALID for %s", async (_label, amount) => {
      const merchant = await merchantFactory();
      const res = await transact(merchant.keys.sk_test, body("sub_x", capture(1), { amount, currency: "USD" }));
      expect(errorOf(res)).toEqual({ status: 400, code: "AMOUNT_INVALID" });
    });

    it("400 AMOUNT_INVALID for a payment without an amount", async () => {
      const merchant = await merchantFactory();
      expect(errorOf(await transact(merchant.keys.sk_test, body("sub_x", capture(1), { action: "ACTION_PAYMENT" })))).toEqual({
        status: 400,
        code: "AMOUNT_INVALID",
      });
    });

    it("400 when service_hash or user_id is missing, naming the field", async () => {
      const merchant = await merchantFactory();
      const { service_hash: _s, ...noHash } = body("sub_x", capture(1));
      const res = await transact(merchant.keys.sk_test, noHash);
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(res.body.fields).toContain("service_hash");
      const { user_id: _u, ...noUser } = body("sub_x", capture(1));
      const res2 = await transact(merchant.keys.sk_test, noUser);
      expect(res2.body.fields).toContain("user_id");
      const badCurrency = await transact(merchant.keys.sk_test, body("sub_x", capture(1), { amount: 100, currency: "XYZ" }));
      expect(badCurrency.body.fields).toContain("currency");
    });

    it("refuses publishable keys and missing keys", async () => {
      const merchant = await merchantFactory();
      expect(errorOf(await transact(merchant.keys.pk_test, body("sub_x", capture(1))))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
      expect(errorOf(await call("process-biovital-transaction", { body: body("sub_x", capture(1)), headers: replayHeaders() }))).toEqual({
        status: 401,
        code: "API_KEY_REQUIRED",
      });
    });
  });

  describe("replay and idempotency", () => {
    it("a capture refused as another person's (IDENTITY_MISMATCH) is used up and recorded: the right person's act with it is CAPTURE_REPLAYED", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const other = await enrollStranger(merchant.keys.pk_test);
      const shot = person.capture();
      const refused = await transact(merchant.keys.sk_test, body(other.subject_ref, shot));
      expect(errorOf(refused)).toEqual({ status: 403, code: "IDENTITY_MISMATCH" });
      const [row] =
        await testDb()`select action, refusal_code, assurance_level, purpose from private.captures where capture_nonce = ${shot.nonce}`;
      expect(row).toEqual({ action: "ACTION_LOGIN", refusal_code: "IDENTITY_MISMATCH", assurance_level: null, purpose: "login" });
      expect(errorOf(await transact(merchant.keys.sk_test, body(person.subject_ref, shot)))).toEqual({
        status: 409,
        code: "CAPTURE_REPLAYED",
      });
      expect(
        await testDb()`select 1 from private.receipts r join private.captures c on c.id = r.capture_id where c.capture_nonce = ${shot.nonce}`,
      ).toHaveLength(0);
    });

    it("a capture refused below the gate (FACE_MATCH_BELOW_THRESHOLD) is used up and recorded: once the person is known it is still CAPTURE_REPLAYED", async () => {
      const merchant = await merchantFactory();
      const elsewhere = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      // Known to another merchant only: at this one the face is nobody's.
      const newcomer = await enrollStranger(elsewhere.keys.pk_test);
      const shot = newcomer.capture();
      expect(errorOf(await transact(merchant.keys.sk_test, body(person.subject_ref, shot)))).toEqual({
        status: 403,
        code: "FACE_MATCH_BELOW_THRESHOLD",
      });
      const [row] = await testDb()`select refusal_code, assurance_level from private.captures where capture_nonce = ${shot.nonce}`;
      expect(row).toEqual({ refusal_code: "FACE_MATCH_BELOW_THRESHOLD", assurance_level: null });
      const again = newcomer.capture();
      const enrolled = await call("process-biovital-enrollment", {
        key: merchant.keys.pk_test,
        body: { capture_nonce: again.nonce, face_template: again.descriptor, consent: CONSENT },
      });
      expect(enrolled.status, enrolled.text).toBe(200);
      expect(errorOf(await transact(merchant.keys.sk_test, body(enrolled.body.subject_ref, shot)))).toEqual({
        status: 409,
        code: "CAPTURE_REPLAYED",
      });
    });

    it("409 on x-service-nonce reuse and on a replayed capture", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const request = body(person.subject_ref, person.capture());
      const headers = replayHeaders();
      expect((await transact(merchant.keys.sk_test, request, { headers })).status).toBe(200);
      expect(errorOf(await transact(merchant.keys.sk_test, request, { headers }))).toEqual({ status: 409, code: "NONCE_REUSED" });
      expect(errorOf(await transact(merchant.keys.sk_test, request))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    });

    it("replays the original body byte for byte for the same Idempotency-Key and body, and refuses a different body", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const request = body(person.subject_ref, person.capture());
      const key = `idem-${crypto.randomUUID()}`;
      const first = await transact(merchant.keys.sk_test, request, { headers: { "idempotency-key": key } });
      expect(first.status).toBe(200);
      expect(first.headers.get("idempotency-status")).toBeNull();
      const again = await transact(merchant.keys.sk_test, request, { headers: { "idempotency-key": key } });
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotency-status")).toBe("replayed");
      // The same bytes, not only the same JSON (issue 25): the store keeps jsonb, whose key order is its own.
      expect(again.text).toBe(first.text);
      const [{ count }] = await testDb()`select count(*)::int as count from private.captures where service_hash = ${request.service_hash}`;
      expect(count).toBe(1);
      const different = await transact(
        merchant.keys.sk_test,
        { ...request, service_hash: "svc:other-body" },
        { headers: { "idempotency-key": key } },
      );
      expect(errorOf(different)).toEqual({ status: 422, code: "IDEMPOTENCY_KEY_REUSED" });
    });

    it("answers an exact retry (same nonce, key and body) with the original body; the nonce stays spent for any other request", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const request = body(person.subject_ref, person.capture());
      const nonce = replayHeaders();
      const key = `idem-${crypto.randomUUID()}`;
      const send = (headers: Record<string, string>, payload: Record<string, unknown> = request) =>
        transact(merchant.keys.sk_test, payload, { headers });
      const first = await send({ ...nonce, "idempotency-key": key });
      expect(first.status, first.text).toBe(200);
      // Spec 4.4 rule 7: the retry of a lost answer is answered, with its nonce as it was or a new one.
      for (const headers of [{ ...nonce, "idempotency-key": key }, { "idempotency-key": key }]) {
        const retry = await send(headers);
        expect([retry.status, retry.headers.get("idempotency-status")], retry.text).toEqual([200, "replayed"]);
        expect(retry.body).toEqual(first.body);
      }
      // The nonce was spent by the first request: another key, or none, is a new request under a used nonce.
      expect(errorOf(await send({ ...nonce, "idempotency-key": `idem-${crypto.randomUUID()}` }))).toEqual({
        status: 409,
        code: "NONCE_REUSED",
      });
      expect(errorOf(await send(nonce))).toEqual({ status: 409, code: "NONCE_REUSED" });
      // The same key with another body is the key reused, whatever the nonce.
      expect(errorOf(await send({ ...nonce, "idempotency-key": key }, { ...request, service_hash: "svc:another-body" }))).toEqual({
        status: 422,
        code: "IDEMPOTENCY_KEY_REUSED",
      });
      const [{ count }] = await testDb()`select count(*)::int as count from private.captures where service_hash = ${request.service_hash}`;
      expect(count).toBe(1);
    });

    it("answers an exact retry of a first-party session's request too; its nonce stays spent for another key", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const request = body(decodeJwt(person.session_token).sub!, person.capture());
      const headers = { ...replayHeaders(), "idempotency-key": `idem-${crypto.randomUUID()}` };
      const first = await transact("", request, { bearer: person.session_token, headers });
      expect(first.status, first.text).toBe(200);
      const retry = await transact("", request, { bearer: person.session_token, headers });
      expect([retry.status, retry.headers.get("idempotency-status")]).toEqual([200, "replayed"]);
      expect(retry.body).toEqual(first.body);
      const otherKey = { ...headers, "idempotency-key": `idem-${crypto.randomUUID()}` };
      expect(errorOf(await transact("", request, { bearer: person.session_token, headers: otherKey }))).toEqual({
        status: 409,
        code: "NONCE_REUSED",
      });
    });

    it("400 IDEMPOTENCY_KEY_INVALID for a key that is present but malformed (spaces, too short), never run as keyless", async () => {
      const merchant = await merchantFactory();
      const request = body("sub_x", capture(1));
      for (const key of ["a key with spaces", "short", `k${"x".repeat(200)}`]) {
        const res = await transact(merchant.keys.sk_test, request, { headers: { "idempotency-key": key } });
        expect({ key, ...errorOf(res) }).toEqual({ key, status: 400, code: "IDEMPOTENCY_KEY_INVALID" });
      }
    });

    it("409 IDEMPOTENCY_IN_FLIGHT while the first request with the key still runs, with Retry-After: 1 s, or its lease's end once it ran long", async () => {
      const merchant = await merchantFactory();
      const request = body("sub_x", capture(1));
      const { sha256Hex } = await import("../../shared/lib/crypto");
      const requestHash = await sha256Hex(JSON.stringify(request));
      const now = new Date();
      now.setUTCMilliseconds(0);
      /** The answer to the request while another, started `ranSeconds` ago with 42 s left on its lease, holds its key. */
      const whileHeld = async (ranSeconds: number) => {
        const key = `idem-${crypto.randomUUID()}`;
        await testDb()`insert into private.idempotency_keys (merchant_id, environment, function_name, idempotency_key, request_hash, state, created_at, lease_expires_at, expires_at)
          values (${merchant.merchant_id}, 'test', 'process-biovital-transaction', ${key}, ${requestHash}, 'in_flight',
            ${new Date(now.getTime() - ranSeconds * 1000)}, ${new Date(now.getTime() + 42_000)}, now() + interval '1 day')`;
        const running = await transact(merchant.keys.sk_test, request, { headers: { "idempotency-key": key }, now });
        expect(errorOf(running)).toEqual({ status: 409, code: "IDEMPOTENCY_IN_FLIGHT" });
        expect(running.body.retry_after_seconds).toBe(Number(running.headers.get("retry-after")));
        return running.headers.get("retry-after");
      };
      // Just started: it is about to finish. Running for 18 s: it most likely died, and its lease ends in 42 s.
      expect(await whileHeld(0)).toBe("1");
      expect(await whileHeld(18)).toBe("42");
    });
  });

  describe("real failures: 5xx never stored, circuit breaker", () => {
    let brokenSigning: RunningServer;
    const deployment = `canary-${crypto.randomUUID().slice(0, 8)}`;

    beforeAll(async () => {
      brokenSigning = await startVariantServer(["process-biovital-transaction"], {
        DEPLOYMENT_ID: deployment,
        SIGNING_KEYS_JWK: JSON.stringify([{ kty: "OKP", crv: "Ed25519", x: "AAAA", d: "AAAA", kid: "broken" }]),
      });
    }, 120_000);
    afterAll(async () => brokenSigning?.stop());

    const send = (server: RunningServer, key: string, request: unknown, headers: Record<string, string> = {}) =>
      callOn(server, "process-biovital-transaction", { key, body: request, headers: { ...replayHeaders(), ...headers } });

    it("a 5xx is not stored under its Idempotency-Key: the retry executes", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const request = body(person.subject_ref, person.capture());
      const key = `idem-${crypto.randomUUID()}`;
      const failed = await send(brokenSigning, merchant.keys.sk_test, request, { "idempotency-key": key });
      expect(failed.status).toBe(500);
      const retried = await transact(merchant.keys.sk_test, request, { headers: { "idempotency-key": key } });
      expect(retried.status, retried.text).toBe(200);
      expect(retried.headers.get("idempotency-status")).toBeNull();
    });

    it("opens after 10 failures in a minute: 503 SLO_BREACH_PAUSED with Retry-After, per deployment", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      // The breaker counts per merchant: this merchant starts with none.
      for (let i = 0; i < 10; i++) {
        expect((await send(brokenSigning, merchant.keys.sk_test, body(person.subject_ref, person.capture()))).status).toBe(500);
      }
      const paused = await send(brokenSigning, merchant.keys.sk_test, body(person.subject_ref, person.capture()));
      expect([paused.status, paused.body.code]).toEqual([503, "SLO_BREACH_PAUSED"]);
      expect(paused.body.retry_after_seconds).toBeGreaterThan(0);
      const stable = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture()));
      expect(stable.status).toBe(200);
      const later = new Date(Date.now() + 31_000);
      const halfOpen = await send(brokenSigning, merchant.keys.sk_test, body(person.subject_ref, person.capture({ at: later })), {
        ...replayHeaders(later),
        "x-test-now": later.toISOString(),
      });
      expect(halfOpen.status).toBe(500);
    });

    it("pauses only the merchant whose requests failed: another merchant on the same deployment is still served", async () => {
      const failing = await merchantFactory();
      const other = await merchantFactory();
      const person = await enrollStranger(failing.keys.pk_test);
      const stranger = await enrollStranger(other.keys.pk_test);
      for (let i = 0; i < 10; i++) {
        expect((await send(brokenSigning, failing.keys.sk_test, body(person.subject_ref, person.capture()))).status).toBe(500);
      }
      const paused = await send(brokenSigning, failing.keys.sk_test, body(person.subject_ref, person.capture()));
      expect([paused.status, paused.body.code]).toEqual([503, "SLO_BREACH_PAUSED"]);
      // Same deployment, same function, same environment, another tenant: not paused (its own failure is a 500).
      const served = await send(brokenSigning, other.keys.sk_test, body(stranger.subject_ref, stranger.capture()));
      expect(served.status).toBe(500);
      // The failing merchant's live environment is not paused either.
      const live = await send(brokenSigning, failing.keys.sk_live, body(person.subject_ref, person.capture()));
      expect(live.body.code).not.toBe("SLO_BREACH_PAUSED");
    });
  });

  describe("round trips on the wire: a mandate standing in (issue 28, D-690, D-740)", () => {
    const wire = functionBehindProxy("trips");

    /** The request's answer and the RPCs it called, in order (one statement is one round trip). */
    async function tripsOf(key: string, request: unknown, headers: Record<string, string> = {}) {
      wire.proxy.takeStatements();
      const answer = await callOn(wire.server, "process-biovital-transaction", {
        key,
        body: request,
        headers: { ...replayHeaders(), ...headers },
      });
      const rpcs = wire.proxy.takeStatements().map((text) => /public\.([a-z_]+)\(/.exec(text)?.[1] ?? text);
      return { answer, rpcs };
    }

    /** A mandate and its merchant, whose key the function behind the proxy has seen authenticate once (D-740). */
    async function knownMerchantFixture() {
      const fixture = await mandateFixture({ scopes: ["login", "payment"], ceiling: { kind: "count", count: 5, period: "lifetime" } });
      const first = await tripsOf(fixture.merchant.keys.sk_test, standInRequest(fixture.person, fixture.mandate.mandate_id));
      expect(first.answer.status, JSON.stringify(first.answer.body)).toBe(200);
      return fixture;
    }

    it("the act is one round trip, with or without an Idempotency-Key: the key, the nonce, the breaker, the response store and the act", async () => {
      const { merchant, person, mandate } = await knownMerchantFixture();
      const bare = await tripsOf(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id));
      expect(bare.answer.status, JSON.stringify(bare.answer.body)).toBe(200);
      expect(bare.answer.body.assurance_level).toBe("mandate");
      expect(bare.rpcs).toEqual(["stand_in_request"]);

      const keyed = await tripsOf(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id), {
        "idempotency-key": `idem-${crypto.randomUUID()}`,
      });
      expect(keyed.answer.status, JSON.stringify(keyed.answer.body)).toBe(200);
      expect(keyed.rpcs).toEqual(["stand_in_request"]);
      const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
      expect(got.body.consumptions).toHaveLength(3);
    });

    it("a key this isolate has never seen authenticate takes the two calls: its merchant, which the receipt names, is not known before", async () => {
      const { merchant, person, mandate } = await mandateFixture({
        scopes: ["login"],
        ceiling: { kind: "count", count: 5, period: "lifetime" },
      });
      const cold = await tripsOf(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id));
      expect(cold.answer.status, JSON.stringify(cold.answer.body)).toBe(200);
      expect(cold.rpcs).toEqual(["request_authenticate", "stand_in_transaction"]);
    });

    it("a replayed nonce is 409 NONCE_REUSED in the same call, and nothing is acted", async () => {
      const { merchant, person, mandate } = await knownMerchantFixture();
      const headers = replayHeaders();
      const request = standInRequest(person, mandate.mandate_id);
      expect((await tripsOf(merchant.keys.sk_test, request, headers)).answer.status).toBe(200);
      const again = await tripsOf(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id), headers);
      expect([again.answer.status, again.answer.body.code]).toEqual([409, "NONCE_REUSED"]);
      expect(again.rpcs).toEqual(["stand_in_request"]);
      const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
      expect(got.body.consumptions).toHaveLength(2);
    });

    it("a key revoked since this isolate learnt it is 401 INVALID_API_KEY in the same call, before its nonce, its body or the breaker", async () => {
      const { merchant, person, mandate } = await knownMerchantFixture();
      await testDb()`update private.api_keys set revoked_at = now() where merchant_id = ${merchant.merchant_id} and kind = 'secret'`;
      const revoked = await tripsOf(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id), {
        "idempotency-key": `idem-${crypto.randomUUID()}`,
      });
      expect([revoked.answer.status, revoked.answer.body.code]).toEqual([401, "INVALID_API_KEY"]);
      expect(revoked.rpcs).toEqual(["stand_in_request"]);
    });

    it("an idempotent retry answers the first act from the mandate's ledger in one call, with Idempotency-Status: replayed", async () => {
      const { merchant, person, mandate } = await knownMerchantFixture();
      const request = standInRequest(person, mandate.mandate_id);
      const idempotencyKey = `idem-${crypto.randomUUID()}`;
      const first = await tripsOf(merchant.keys.sk_test, request, { "idempotency-key": idempotencyKey });
      expect(first.answer.status, JSON.stringify(first.answer.body)).toBe(200);
      const retried = await tripsOf(merchant.keys.sk_test, request, { "idempotency-key": idempotencyKey });
      expect([retried.answer.status, retried.answer.headers.get("idempotency-status")]).toEqual([200, "replayed"]);
      expect(retried.answer.body).toEqual({
        ...first.answer.body,
        mandate: { ...(first.answer.body.mandate as object), idempotent_replay: true, mandate_status: "active" },
      });
      expect(retried.rpcs).toEqual(["stand_in_request"]);
      // Another body under the key is refused in the same call.
      const other = await tripsOf(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id), { "idempotency-key": idempotencyKey });
      expect([other.answer.status, other.answer.body.code]).toEqual([422, "IDEMPOTENCY_KEY_REUSED"]);
      expect(other.rpcs).toEqual(["stand_in_request"]);
      const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
      expect(got.body.consumptions).toHaveLength(2);
    });

    it("an open breaker is 503 SLO_BREACH_PAUSED from the same call, with nothing acted", async () => {
      const { merchant, person, mandate } = await knownMerchantFixture();
      await testDb()`insert into private.circuit_breakers (deployment, function_name, merchant_id, environment, window_started_at, breaches, open_until)
        values (${wire.deployment}, 'process-biovital-transaction', ${merchant.merchant_id}, 'test', now(), 10, now() + interval '30 seconds')`;
      const paused = await tripsOf(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id));
      expect([paused.answer.status, paused.answer.body.code]).toEqual([503, "SLO_BREACH_PAUSED"]);
      expect(Number(paused.answer.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(paused.rpcs).toEqual(["stand_in_request"]);
      const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
      expect(got.body.consumptions).toHaveLength(1);
    });

    it("a person's own session is one call from its first request; naming another is 403 UNAUTHORIZED_DEVICE after authentication, as before", async () => {
      const { person, mandate } = await mandateFixture({ scopes: ["login"], ceiling: { kind: "count", count: 5, period: "lifetime" } });
      const session = { authorization: `Bearer ${person.session_token}` };
      const own = standInRequest(person, mandate.mandate_id, { user_id: decodeJwt(person.session_token).sub });
      const acted = await tripsOf("", own, session);
      expect([acted.answer.status, acted.answer.body.assurance_level], JSON.stringify(acted.answer.body)).toEqual([200, "mandate"]);
      expect(acted.rpcs).toEqual(["stand_in_request"]);
      const other = await tripsOf("", standInRequest(person, mandate.mandate_id, { user_id: crypto.randomUUID() }), session);
      expect([other.answer.status, other.answer.body.code]).toEqual([403, "UNAUTHORIZED_DEVICE"]);
      expect(other.rpcs).toEqual(["request_authenticate"]);
      await testDb()`update private.sessions set revoked_at = now() where token_hash = encode(sha256(${person.session_token}::bytea), 'hex')`;
      const revoked = await tripsOf("", { ...own, service_hash: `svc:${crypto.randomUUID()}` }, session);
      expect([revoked.answer.status, revoked.answer.body.code]).toEqual([403, "ACCESS_REVOKED"]);
      expect(revoked.rpcs).toEqual(["stand_in_request"]);
    });

    it("refusals are decided in the same call: another merchant's mandate (200) and a person this merchant does not know (403)", async () => {
      const { merchant, person, mandate } = await knownMerchantFixture();
      const other = await mandateFixture({ scopes: ["login"], ceiling: { kind: "count", count: 5, period: "lifetime" } });
      const foreign = await tripsOf(merchant.keys.sk_test, standInRequest(person, other.mandate.mandate_id));
      expect([foreign.answer.status, foreign.answer.body.allowed, foreign.answer.body.reason]).toEqual([200, false, "mandate_not_found"]);
      expect(foreign.rpcs).toEqual(["stand_in_request"]);
      const stranger = await tripsOf(merchant.keys.sk_test, standInRequest(other.person, mandate.mandate_id));
      expect([stranger.answer.status, stranger.answer.body.code]).toEqual([403, "IDENTITY_MISMATCH"]);
      expect(stranger.rpcs).toEqual(["stand_in_request"]);
      // Under an Idempotency-Key a refusal, which the act stores nothing for, is stored after it: one call more.
      const idempotencyKey = `idem-${crypto.randomUUID()}`;
      const keyed = await tripsOf(merchant.keys.sk_test, standInRequest(other.person, mandate.mandate_id), {
        "idempotency-key": idempotencyKey,
      });
      expect([keyed.answer.status, keyed.answer.body.code]).toEqual([403, "IDENTITY_MISMATCH"]);
      expect(keyed.rpcs).toEqual(["stand_in_request", "idempotency_finish"]);
    });
  });

  describe("a database outage (issue 11): the act and its stored answer commit together", () => {
    const wire = functionBehindProxy("outage");
    afterEach(() => wire.proxy.accept());

    const send = (key: string, request: unknown, headers: Record<string, string>) =>
      callOn(wire.server, "process-biovital-transaction", { key, body: request, headers: { ...replayHeaders(), ...headers } });

    /** The act through the proxy, with the database gone right after `statement` answered; then the retry on the service. */
    async function actThenOutage(key: string, request: Record<string, unknown>, statement: string) {
      const idempotencyKey = `idem-${crypto.randomUUID()}`;
      wire.proxy.refuseAfter(statement);
      const acted = await send(key, request, { "idempotency-key": idempotencyKey });
      await wire.proxy.accept();
      const retried = await transact(key, request, { headers: { "idempotency-key": idempotencyKey } });
      return { acted, retried };
    }

    it("a live act that committed is answered, and its retry right after is the replay, never 409 IDEMPOTENCY_IN_FLIGHT", async () => {
      const merchant = await merchantFactory();
      const person = await enrollStranger(merchant.keys.pk_test);
      const request = body(person.subject_ref, person.capture());
      const { acted, retried } = await actThenOutage(merchant.keys.sk_test, request, "public.capture_record(");
      expect(acted.status, JSON.stringify(acted.body)).toBe(200);
      expect([retried.status, retried.headers.get("idempotency-status")], retried.text).toEqual([200, "replayed"]);
      expect(retried.body).toEqual(acted.body);
    });

    it("so does an act a mandate stood in for (where the outage was measured), in two calls and in one", async () => {
      const { merchant, person, mandate } = await mandateFixture({
        scopes: ["login"],
        ceiling: { kind: "count", count: 5, period: "lifetime" },
      });
      // The key's first request in the function's isolate acts in the call after authentication; later ones in one (D-740).
      for (const statement of ["public.stand_in_transaction(", "public.stand_in_request("]) {
        const { acted, retried } = await actThenOutage(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id), statement);
        expect(acted.status, JSON.stringify(acted.body)).toBe(200);
        expect([retried.status, retried.headers.get("idempotency-status")], retried.text).toEqual([200, "replayed"]);
        expect(retried.body).toEqual({
          ...acted.body,
          mandate: { ...(acted.body.mandate as object), idempotent_replay: true, mandate_status: "active" },
        });
      }
      const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
      expect(got.body.consumptions).toHaveLength(2);
    });

    it("503 DATABASE_UNAVAILABLE carries Retry-After while the database is away", async () => {
      const merchant = await merchantFactory();
      wire.proxy.refuse();
      const withAndWithoutKey: Record<string, string>[] = [{}, { "idempotency-key": `idem-${crypto.randomUUID()}` }];
      for (const headers of withAndWithoutKey) {
        const away = await send(merchant.keys.sk_test, body("sub_x", capture(1)), headers);
        expect([away.status, away.body.code]).toEqual([503, "DATABASE_UNAVAILABLE"]);
        expect(away.headers.get("retry-after")).toBe("5");
        expect(away.body.retry_after_seconds).toBe(5);
      }
    });
  });

  describe("circuit breaker: a caller's bad input never counts", () => {
    it("eighteen bad-input requests in a burst pause nobody: the same merchant's next genuine request is approved", async () => {
      const { merchant, person, mandate } = await mandateFixture({
        scopes: ["login"],
        ceiling: { kind: "count", count: 100, period: "lifetime" },
      });
      const standIn = (context: Record<string, unknown>) => ({
        action: "ACTION_LOGIN",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: person.subject_ref,
        mandate_id: mandate.mandate_id,
        context,
      });
      const bad = [
        // JSON.stringify writes both as escapes (\u0000, \ud800), as a hostile client sends them; the
        // database refuses such text (a 500 until the body reader refuses it first).
        ...Array.from({ length: 6 }, () => standIn({ merchant: "nul\u0000" })),
        ...Array.from({ length: 6 }, () => standIn({ merchant: "half\ud800" })),
        ...Array.from({ length: 6 }, () => ({ action: "ACTION_LOGIN" })),
      ];
      const answers = await Promise.all(bad.map((request) => transact(merchant.keys.sk_test, request)));
      for (const answer of answers) expect(answer.body.code).not.toBe("SLO_BREACH_PAUSED");
      const genuine = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture()));
      expect(genuine.status, genuine.text).toBe(200);
      const standing = await transact(merchant.keys.sk_test, standIn({ merchant: "shop" }), {
        headers: { "idempotency-key": `idem-${crypto.randomUUID()}` },
      });
      expect(standing.status, standing.text).toBe(200);
    });

    it("eleven 500s from a value the database refuses (SQLSTATE class 22) pause nobody; the next genuine request is approved", async () => {
      const { merchant, person, mandate } = await mandateFixture({
        scopes: ["login"],
        ceiling: { kind: "count", count: 5, period: "lifetime" },
      });
      // A copy of the mandate whose stored ceiling is bigint's largest value (the table takes it; the API
      // refuses any amount above 2^53 - 1). With an at-limit threshold set, consuming it overflows in the
      // database's own arithmetic: 22003 numeric_value_out_of_range, a real value error, answered 500.
      const copy = crypto.randomUUID();
      await testDb()`
        insert into private.mandates (id, merchant_id, environment, granted_by, granted_by_ref, granted_to, granted_to_kind, scopes,
          constraints, ceiling_kind, ceiling_amount, ceiling_currency, ceiling_count, ceiling_period, assurance_level, capture_id,
          expires_at, created_at, updated_at)
        select ${copy}::uuid, merchant_id, environment, granted_by, granted_by_ref, granted_to, granted_to_kind, scopes,
          constraints, 'amount', 9223372036854775807, 'USD', null, ceiling_period, assurance_level, capture_id,
          expires_at, created_at, updated_at
        from private.mandates where id = ${mandate.mandate_id.slice(4)}::uuid`;
      await testDb()`update private.merchants set at_limit_threshold_percent = 80 where id = ${merchant.merchant_id}::uuid`;
      const overflowing = {
        action: "ACTION_LOGIN",
        user_id: person.subject_ref,
        mandate_id: `mdt_${copy.replace(/-/g, "")}`,
        amount: 1,
        currency: "USD",
      };
      // One more than the breaker's threshold (10 in a minute), one after another.
      for (let i = 0; i < 11; i++) {
        const failed = await transact(
          merchant.keys.sk_test,
          { ...overflowing, service_hash: `svc:${crypto.randomUUID()}` },
          { headers: { "idempotency-key": `idem-${crypto.randomUUID()}` } },
        );
        expect(errorOf(failed), failed.text).toEqual({ status: 500, code: "INTERNAL_ERROR" });
      }
      const genuine = await transact(merchant.keys.sk_test, body(person.subject_ref, person.capture()));
      expect(genuine.status, genuine.text).toBe(200);
    });
  });
});
