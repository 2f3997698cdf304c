/**
 * disclose-claims (spec 4.5), its fetch and revoke-consent over HTTP: claims resolved as values,
 * derived predicates and documents behind the consent token; the SD-JWT verified offline with the
 * @sd-jwt packages' verifier against the JWKS the service publishes; revocation and withdrawal
 * turning the fetch into 403; every rule and error; the consent ledger written with each disclosure
 * and its chain intact after concurrent disclosures.
 */
import { describe, expect, it } from "vitest";
import { verifyConsentLedger } from "../../shared/consent/ledger";
import { canonicalJson } from "../../shared/lib/json";
import { contentDigest } from "../../shared/lib/sd-jwt";
import { SoftwareCredential } from "../harness/authenticator";
import {
  disclose,
  discloseBody,
  disclosureFixture,
  fetchDisclosure,
  presentWithKeyBinding,
  publishedJwks,
  revokeConsent,
  verifyPresentation,
  verifySdJwtOffline,
} from "../harness/consent";
import { seedDevice } from "../harness/devices";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { enrollStranger, transact } from "../harness/identity";
import { presenceCapture } from "../harness/mandates";

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

const everyKind = [
  { key: "subject_ref", disclosure_type: "value" },
  { key: "issuing_country", disclosure_type: "value", requires_kyc: true },
  { key: "age_over_18", disclosure_type: "zk_proof", circuit_id: "age_over", public_input: { threshold: 18 } },
  { key: "age_over_65", disclosure_type: "zk_proof" },
  { key: "issuing_country_in", disclosure_type: "zk_proof", public_input: { countries: ["PRT", "UTO"] } },
  { key: "identity_document", disclosure_type: "document" },
];

async function ledgerOf(identityId: string) {
  return testDb()`select seq, kind, merchant_id::text, refers_to::text, consent_token_hash, payload
                  from private.consent_ledger where identity_id = ${identityId} order by seq`;
}

async function verifyChain(identityId: string) {
  return verifyConsentLedger(testDb(), identityId);
}

/**
 * Every scalar in `value`, found by walking it. The birth date is looked for among values, never in
 * the answer's text, where a hash or a salt holds "1990" by chance about one run in three hundred.
 */
function valuesOf(value: unknown): unknown[] {
  if (value === null || typeof value !== "object") return [value];
  return Object.values(value).flatMap(valuesOf);
}

/** The fixture's birth date (1990-06-15) or its year, in any form a value could carry them. */
function isBirthDateOrYear(value: unknown): boolean {
  return value === 1990 || (typeof value === "string" && /^(1990|1990-06-15|15\/06\/1990|06\/15\/1990)$|1990-06-15/.test(value));
}

describe("disclose-claims", () => {
  describe("happy", () => {
    it("resolves values, derived predicates and a document into an SD-JWT a merchant verifies offline against the published JWKS", async () => {
      const { merchant, person, captureId, identityId } = await disclosureFixture({ birthDate: "1990-06-15" });
      const res = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, everyKind));
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const body = res.body;
      expect(body.disclosure_id).toMatch(/^dsc_[0-9a-f]{32}$/);
      expect(body.consent_token).toMatch(/^cst_[A-Za-z0-9_-]{43}$/);
      expect(body.claims).toEqual([
        { key: "subject_ref", disclosure_type: "value", status: "disclosed", value: person.subject_ref },
        { key: "issuing_country", disclosure_type: "value", status: "disclosed", value: "UTO" },
        {
          key: "age_over_18",
          disclosure_type: "zk_proof",
          status: "disclosed",
          zk_proof: { circuit_id: "age_over", public_input: { threshold: 18 }, result: true },
        },
        {
          key: "age_over_65",
          disclosure_type: "zk_proof",
          status: "disclosed",
          zk_proof: { circuit_id: "age_over", public_input: { threshold: 65 }, result: false },
        },
        {
          key: "issuing_country_in",
          disclosure_type: "zk_proof",
          status: "disclosed",
          zk_proof: { circuit_id: "issuing_country_in", public_input: { countries: ["PRT", "UTO"] }, result: true },
        },
        {
          key: "identity_document",
          disclosure_type: "document",
          status: "disclosed",
          document: {
            digest: expect.stringMatching(/^sha-256:[A-Za-z0-9_-]{43}$/),
            fetch_url: expect.stringMatching(/\/functions\/v1\/disclose-claims\/fetch$/),
          },
        },
      ]);
      // the source of a derived claim never leaves the service; a document only behind the token
      expect(res.text).not.toContain("1990-06-15");
      expect(valuesOf(body).filter(isBirthDateOrYear)).toEqual([]);
      expect(res.text).not.toContain("passport");

      const jwks = await publishedJwks();
      const verified = await verifySdJwtOffline(body.sd_jwt, jwks);
      expect(verified.header).toMatchObject({ alg: "EdDSA", typ: "disclosure+sd-jwt", kid: jwks.keys[0].kid });
      expect(verified.payload).toMatchObject({
        iss: body.verification.issuer,
        aud: merchant.merchant_id,
        jti: body.disclosure_id,
        zk_proof_audit_id: body.zk_proof_audit_id,
        transaction_type: "account_opening",
        subject_ref: person.subject_ref,
        issuing_country: "UTO",
        age_over_18: true,
        age_over_65: false,
        issuing_country_in: true,
        identity_document: { digest: body.claims[5].document.digest },
      });
      expect(valuesOf(verified.payload).filter(isBirthDateOrYear)).toEqual([]);
      expect(body.verification.jwks_uri).toBe(`${body.verification.issuer}/functions/v1/receipt-verify/jwks`);

      // the documents behind the token, whose digest the SD-JWT signed
      const fetched = await fetchDisclosure(merchant.keys.sk_test, body.consent_token);
      expect(fetched.status, fetched.text).toBe(200);
      expect(fetched.body).toMatchObject({ disclosure_id: body.disclosure_id, zk_proof_audit_id: body.zk_proof_audit_id });
      const [document] = fetched.body.documents;
      expect(document).toMatchObject({ key: "identity_document", document: { document_type: "passport", issuing_country: "UTO" } });
      expect(await contentDigest(canonicalJson(document.document))).toBe(body.claims[5].document.digest);

      // the disclosure is a ledger entry: what was asked and how, never a value
      const ledger = await ledgerOf(identityId);
      const entry = ledger.at(-1)!;
      expect(entry).toMatchObject({ kind: "disclosure", merchant_id: merchant.merchant_id });
      expect(Number(entry.seq)).toBe(body.consent.ledger_seq);
      expect(entry.payload.claims).toEqual(everyKind.map(({ key, disclosure_type }) => ({ key, disclosure_type, status: "disclosed" })));
      expect(entry.payload.attestation).toEqual({ capture_id: expect.any(String), liveness_passed: true, vrc_confidence: 0.97 });
      expect(JSON.stringify(entry.payload)).not.toContain(person.subject_ref);
      expect(entry.consent_token_hash).not.toBe(body.consent_token);
      expect((await verifyChain(identityId)).ok).toBe(true);
    });

    it("a holder presents a subset: the verifier sees only the disclosures presented, still signed", async () => {
      const { merchant, captureId } = await disclosureFixture({ birthDate: "2001-01-01" });
      const res = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, everyKind));
      expect(res.status, res.text).toBe(200);
      const [issuerJwt, ...disclosures] = (res.body.sd_jwt as string).split("~");
      const ageOnly = disclosures.filter((d) => d && JSON.parse(Buffer.from(d, "base64url").toString())[1] === "age_over_18");
      const verified = await verifySdJwtOffline(`${issuerJwt}~${ageOnly.join("~")}~`, await publishedJwks());
      expect(verified.payload).toMatchObject({ age_over_18: true });
      expect(verified.payload).not.toHaveProperty("subject_ref");
      expect(verified.payload).not.toHaveProperty("identity_document");
    });

    it("a person without a verified document: document claims unavailable, document_valid false, requires_kyc 403 DOCUMENT_REQUIRED", async () => {
      const { merchant, captureId } = await disclosureFixture({ document: false });
      const fields = [
        { key: "document_valid", disclosure_type: "zk_proof" },
        { key: "age_over_18", disclosure_type: "zk_proof" },
        { key: "identity_document", disclosure_type: "document" },
        { key: "assurance_level", disclosure_type: "value" },
      ];
      const res = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, fields));
      expect(res.status, res.text).toBe(200);
      expect(res.body.claims).toEqual([
        {
          key: "document_valid",
          disclosure_type: "zk_proof",
          status: "disclosed",
          zk_proof: { circuit_id: "document_valid", public_input: {}, result: false },
        },
        { key: "age_over_18", disclosure_type: "zk_proof", status: "unavailable", reason: "no_document" },
        { key: "identity_document", disclosure_type: "document", status: "unavailable", reason: "no_document" },
        { key: "assurance_level", disclosure_type: "value", status: "disclosed", value: "face_voice" },
      ]);
      const verified = await verifySdJwtOffline(res.body.sd_jwt, await publishedJwks());
      expect(verified.payload).not.toHaveProperty("age_over_18");

      const kyc = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, [{ ...fields[3], requires_kyc: true }]));
      expect(errorOf(kyc)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
    });

    it("a document without a birth date answers age claims as unavailable", async () => {
      const { merchant, captureId } = await disclosureFixture({ birthDate: null });
      const res = await disclose(
        merchant.keys.sk_test,
        discloseBody(merchant, captureId, [{ key: "age_over_21", disclosure_type: "zk_proof" }]),
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body.claims[0]).toEqual({
        key: "age_over_21",
        disclosure_type: "zk_proof",
        status: "unavailable",
        reason: "no_birth_date",
      });
    });

    it("age is counted in whole years on the server's day: 18 on the 18th birthday, not the day before", async () => {
      const { merchant, captureId, identityId } = await disclosureFixture();
      const [capture] = await testDb()`select created_at from private.captures where id = ${captureId}::uuid`;
      const now = at(new Date(capture.created_at), 1);
      const day = now.toISOString().slice(0, 10);
      const yearsBefore = (date: string, years: number) => `${Number(date.slice(0, 4)) - years}${date.slice(4)}`;
      const tomorrow = at(new Date(`${day}T00:00:00Z`), 86_400)
        .toISOString()
        .slice(0, 10);
      const asked = [{ key: "age_over_18", disclosure_type: "zk_proof" }];
      for (const [birthDate, expected] of [
        [yearsBefore(day, 18), true],
        [yearsBefore(tomorrow, 18), false],
      ] as const) {
        await testDb()`update private.identity_documents set date_of_birth = ${birthDate} where identity_id = ${identityId}`;
        const res = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, asked), now);
        expect(res.status, res.text).toBe(200);
        expect(res.body.claims[0].zk_proof.result, birthDate).toBe(expected);
      }
    });

    it("binds the SD-JWT to the registered device key of the attestation (cnf.jwk); a key no device registered is refused", async () => {
      const { merchant, captureId, identityId } = await disclosureFixture();
      const { credential } = await seedDevice(merchant.merchant_id, "test", identityId);
      const body = discloseBody(merchant, captureId, [{ key: "document_valid", disclosure_type: "zk_proof" }], {
        biometric_attestation: { capture_id: captureId, device_pubkey_pem: credential.publicKeyPem },
      });
      const res = await disclose(merchant.keys.sk_test, body);
      expect(res.status, res.text).toBe(200);
      const verified = await verifySdJwtOffline(res.body.sd_jwt, await publishedJwks());
      expect(verified.payload).toMatchObject({ cnf: { jwk: credential.publicJwk } });

      const bad = discloseBody(merchant, captureId, [{ key: "document_valid", disclosure_type: "zk_proof" }], {
        biometric_attestation: { capture_id: captureId, device_pubkey_pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----" },
      });
      const refused = await disclose(merchant.keys.sk_test, bad);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: "INVALID_INPUT", fields: ["biometric_attestation.device_pubkey_pem"] });

      // A well-formed key that no device of this environment registered proves nothing about the person.
      const stranger = new SoftwareCredential();
      const unknown = await disclose(
        merchant.keys.sk_test,
        discloseBody(merchant, captureId, [{ key: "document_valid", disclosure_type: "zk_proof" }], {
          biometric_attestation: { capture_id: captureId, device_pubkey_pem: stranger.publicKeyPem },
        }),
      );
      expect(unknown.status, unknown.text).toBe(403);
      expect(unknown.body).toMatchObject({ code: "ATTESTATION_INVALID", reason: "device_unknown" });
    });
  });

  describe("the spec's biometric_attestation (liveness_passed, vrc_confidence, device_pubkey_pem), no capture id", () => {
    const fields = [
      { key: "subject_ref", disclosure_type: "value" },
      { key: "age_over_18", disclosure_type: "zk_proof" },
    ];
    const specShape = (merchant: { merchant_id: string }, pem: string) => ({
      ...discloseBody(merchant as never, "", fields),
      biometric_attestation: { liveness_passed: true, vrc_confidence: 0.93, device_pubkey_pem: pem },
    });

    it("finds the person's fresh capture from their device key, binds cnf to it, and the holder presents with a key-binding JWT", async () => {
      const { merchant, person, captureId, identityId } = await disclosureFixture({ birthDate: "1990-06-15" });
      const { credential, device } = await seedDevice(merchant.merchant_id, "test", identityId);
      const res = await disclose(merchant.keys.sk_test, specShape(merchant, credential.publicKeyPem));
      expect(res.status, res.text).toBe(200);
      expect(res.body.claims[0]).toMatchObject({ key: "subject_ref", value: person.subject_ref });
      const jwks = await publishedJwks();
      const verified = await verifySdJwtOffline(res.body.sd_jwt, jwks);
      expect(verified.payload).toMatchObject({ aud: merchant.merchant_id, cnf: { jwk: credential.publicJwk } });
      // The ledger names the capture it found and the device.
      const [entry] = await testDb()`select payload from private.consent_ledger where id = ${res.body.disclosure_id.slice(4)}::uuid`;
      expect(entry.payload.attestation).toMatchObject({
        capture_id: captureId,
        device_id: device.device_id,
        liveness_passed: true,
        vrc_confidence: 0.93,
      });

      // RFC 9901 presentation: the holder discloses subject_ref only, with a KB-JWT its device key signs.
      const nonce = `n-${crypto.randomUUID()}`;
      const presentation = await presentWithKeyBinding(res.body.sd_jwt, { subject_ref: true }, credential, merchant.merchant_id, nonce);
      const presented = await verifyPresentation(presentation, jwks, nonce);
      expect(presented.payload).toMatchObject({ subject_ref: person.subject_ref });
      expect(presented.payload).not.toHaveProperty("age_over_18");
      expect(presented.kb?.payload).toMatchObject({ aud: merchant.merchant_id, nonce });
      // Another key's KB-JWT, or another nonce, is refused.
      const forged = await presentWithKeyBinding(
        res.body.sd_jwt,
        { subject_ref: true },
        new SoftwareCredential(),
        merchant.merchant_id,
        nonce,
      );
      await expect(verifyPresentation(forged, jwks, nonce)).rejects.toThrow();
      await expect(verifyPresentation(presentation, jwks, "another-nonce")).rejects.toThrow();
    });

    it("refuses a key of another person's device with a capture, a revoked device, no capture in five minutes, and neither capture nor key", async () => {
      const { merchant, captureId, identityId } = await disclosureFixture();
      const other = await disclosureFixture({ merchant });
      const theirs = await seedDevice(merchant.merchant_id, "test", other.identityId);
      const mine = await seedDevice(merchant.merchant_id, "test", identityId);
      const refusedWith = async (body: unknown, now?: Date) => {
        const res = await disclose(merchant.keys.sk_test, body, now);
        expect(res.status, res.text).toBe(403);
        return res.body.reason ?? res.body.code;
      };
      expect(
        await refusedWith({
          ...specShape(merchant, theirs.credential.publicKeyPem),
          biometric_attestation: { capture_id: captureId, device_pubkey_pem: theirs.credential.publicKeyPem },
        }),
      ).toBe("device_not_the_persons");
      expect(await refusedWith({ ...specShape(merchant, ""), biometric_attestation: { liveness_passed: true, vrc_confidence: 0.9 } })).toBe(
        "capture_unidentified",
      );
      expect(await refusedWith(specShape(merchant, mine.credential.publicKeyPem), at(new Date(), 301))).toBe("capture_not_found");
      await testDb()`update private.device_credentials set revoked_at = created_at where id = ${mine.device.device_id.slice(4)}::uuid`;
      expect(await refusedWith(specShape(merchant, mine.credential.publicKeyPem))).toBe("device_revoked");
    });

    it("works over plain HTTP as the spec writes it: the body's JSON, nothing else", async () => {
      const { merchant, identityId } = await disclosureFixture();
      const { credential } = await seedDevice(merchant.merchant_id, "test", identityId);
      const raw = JSON.stringify(specShape(merchant, credential.publicKeyPem));
      const res = await call("disclose-claims", {
        key: merchant.keys.sk_test,
        rawBody: raw,
        headers: { "content-type": "application/json" },
      });
      expect(res.status, res.text).toBe(200);
    });
  });

  describe("consent token", () => {
    it("revoke-consent kills the token: the fetch becomes 403 CONSENT_REVOKED at once; a repeat says already_revoked", async () => {
      const { merchant, captureId, identityId } = await disclosureFixture();
      const res = await disclose(
        merchant.keys.sk_test,
        discloseBody(merchant, captureId, [{ key: "identity_document", disclosure_type: "document" }]),
      );
      expect(res.status, res.text).toBe(200);
      expect((await fetchDisclosure(merchant.keys.sk_test, res.body.consent_token)).status).toBe(200);

      const now = new Date();
      const revoked = await revokeConsent(merchant.keys.sk_test, { consent_token: res.body.consent_token, reason: "customer asked" }, now);
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body).toMatchObject({ revoked: true, already_revoked: false, disclosure_id: res.body.disclosure_id });
      expect(new Date(revoked.body.revoked_at).getTime()).toBe(now.getTime());
      expect(errorOf(await fetchDisclosure(merchant.keys.sk_test, res.body.consent_token))).toEqual({
        status: 403,
        code: "CONSENT_REVOKED",
      });
      const again = await revokeConsent(merchant.keys.sk_test, { consent_token: res.body.consent_token });
      expect(again.body).toMatchObject({ revoked: true, already_revoked: true, revoked_at: expect.any(String) });

      // the documents behind it are gone; the ledger says who revoked what, chained
      const [{ count }] =
        await testDb()`select count(*)::int from private.disclosed_documents where disclosure_id = ${res.body.disclosure_id.slice(4)}::uuid`;
      expect(count).toBe(0);
      const ledger = await ledgerOf(identityId);
      const disclosureUuid = res.body.disclosure_id.slice(4).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
      expect(ledger.at(-1)).toMatchObject({ kind: "disclosure_revoked", refers_to: disclosureUuid, payload: { reason: "customer asked" } });
      expect((await verifyChain(identityId)).ok).toBe(true);
    });

    it("the token opens nothing after expires_at (403 CONSENT_EXPIRED), and nothing of another merchant's (403 CONSENT_MISSING)", async () => {
      const { merchant, captureId } = await disclosureFixture();
      const now = new Date();
      const res = await disclose(
        merchant.keys.sk_test,
        discloseBody(merchant, captureId, [{ key: "document_valid", disclosure_type: "zk_proof" }], { ttl_seconds: 60 }),
        now,
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body.expires_at).toBe(new Date(Math.floor(now.getTime() / 1000) * 1000 + 60_000).toISOString());
      expect((await fetchDisclosure(merchant.keys.sk_test, res.body.consent_token, at(now, 59))).status).toBe(200);
      expect(errorOf(await fetchDisclosure(merchant.keys.sk_test, res.body.consent_token, at(now, 61)))).toEqual({
        status: 403,
        code: "CONSENT_EXPIRED",
      });

      const other = await merchantFactory();
      expect(errorOf(await fetchDisclosure(other.keys.sk_test, res.body.consent_token))).toEqual({ status: 403, code: "CONSENT_MISSING" });
      expect(errorOf(await fetchDisclosure(merchant.keys.sk_live, res.body.consent_token))).toEqual({
        status: 403,
        code: "CONSENT_MISSING",
      });
      expect(errorOf(await fetchDisclosure(merchant.keys.sk_test, `cst_${"A".repeat(43)}`))).toEqual({
        status: 403,
        code: "CONSENT_MISSING",
      });
      expect(errorOf(await fetchDisclosure(merchant.keys.sk_test, "not-a-token"))).toEqual({ status: 403, code: "CONSENT_MISSING" });
      expect(errorOf(await fetchDisclosure(merchant.keys.sk_test, 42))).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(errorOf(await revokeConsent(other.keys.sk_test, { consent_token: res.body.consent_token }))).toEqual({
        status: 404,
        code: "not_found",
      });
      expect((await fetchDisclosure(merchant.keys.sk_test, res.body.consent_token, at(now, 30))).status).toBe(200);
    });

    it("withdrawing the person's consent (subject_ref) turns every fetch into 403, refuses new disclosures and stops the sink", async () => {
      const merchant = await merchantFactory();
      const { person, captureId, identityId } = await disclosureFixture({ merchant });
      const first = await disclose(
        merchant.keys.sk_test,
        discloseBody(merchant, captureId, [{ key: "identity_document", disclosure_type: "document" }]),
      );
      expect(first.status, first.text).toBe(200);

      const withdrawn = await revokeConsent(merchant.keys.sk_test, { subject_ref: person.subject_ref });
      expect(withdrawn.status, withdrawn.text).toBe(200);
      expect(withdrawn.body).toMatchObject({ revoked: true, already_revoked: false, subject_ref: person.subject_ref });
      expect(errorOf(await fetchDisclosure(merchant.keys.sk_test, first.body.consent_token))).toEqual({
        status: 403,
        code: "CONSENT_REVOKED",
      });
      const after = await disclose(
        merchant.keys.sk_test,
        discloseBody(merchant, captureId, [{ key: "document_valid", disclosure_type: "zk_proof" }]),
      );
      expect(errorOf(after)).toEqual({ status: 403, code: "CONSENT_REVOKED" });
      const shot = person.capture();
      const sink = await transact(merchant.keys.sk_test, {
        action: "ACTION_LOGIN",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: person.subject_ref,
        capture_nonce: shot.nonce,
        face_template: shot.descriptor,
      });
      expect(errorOf(sink)).toEqual({ status: 403, code: "ACCESS_REVOKED" });
      expect((await revokeConsent(merchant.keys.sk_test, { subject_ref: person.subject_ref })).body).toMatchObject({
        already_revoked: true,
      });

      const kinds = (await ledgerOf(identityId)).map((entry) => entry.kind);
      expect(kinds).toEqual(["consent_granted", "disclosure", "consent_withdrawn"]);
      expect((await verifyChain(identityId)).ok).toBe(true);
    });

    it("a person's consent with one merchant is not another's: withdrawing with A leaves B's disclosures open", async () => {
      const a = await merchantFactory();
      const b = await merchantFactory();
      const person = await enrollStranger(a.keys.pk_test);
      const enrollB = await call("process-biovital-enrollment", {
        key: b.keys.pk_test,
        body: (() => {
          const shot = person.capture();
          return { capture_nonce: shot.nonce, face_template: shot.descriptor, consent: { version: "b-1", retention_days: 30 } };
        })(),
      });
      expect(enrollB.status, enrollB.text).toBe(200);
      const personAtB = { ...person, subject_ref: enrollB.body.subject_ref as string };
      const captureB = await presenceCapture(b, personAtB);
      const atB = await disclose(b.keys.sk_test, discloseBody(b, captureB, [{ key: "subject_ref", disclosure_type: "value" }]));
      expect(atB.status, atB.text).toBe(200);
      expect((await revokeConsent(a.keys.sk_test, { subject_ref: person.subject_ref })).status).toBe(200);
      expect((await fetchDisclosure(b.keys.sk_test, atB.body.consent_token)).status).toBe(200);
      expect(errorOf(await revokeConsent(b.keys.sk_test, { subject_ref: person.subject_ref }))).toEqual({ status: 404, code: "not_found" });
    });
  });

  describe("errors", () => {
    it("needs a secret key: none 401 API_KEY_REQUIRED, publishable 401 AUTH_REQUIRED, on every route", async () => {
      const m = await merchantFactory();
      for (const path of ["disclose-claims", "disclose-claims/fetch", "revoke-consent"]) {
        expect(errorOf(await call(path, { body: {} }))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
        expect(errorOf(await call(path, { key: m.keys.pk_test, body: {} }))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
      }
    });

    it("merchant_id must be the key's merchant (403 MERCHANT_MISMATCH)", async () => {
      const { merchant, captureId } = await disclosureFixture({ document: false });
      const other = await merchantFactory();
      const body = {
        ...discloseBody(merchant, captureId, [{ key: "subject_ref", disclosure_type: "value" }]),
        merchant_id: other.merchant_id,
      };
      expect(errorOf(await disclose(merchant.keys.sk_test, body))).toEqual({ status: 403, code: "MERCHANT_MISMATCH" });
    });

    it("answers each malformed request with its code", async () => {
      const { merchant, captureId } = await disclosureFixture({ document: false });
      const ask = (fields: unknown[], extra: Record<string, unknown> = {}) =>
        disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, fields, extra));
      const cases: [unknown[], Record<string, unknown>, number, string, string?][] = [
        [[{ key: "favourite_colour", disclosure_type: "value" }], {}, 400, "UNKNOWN_CLAIM", "favourite_colour"],
        [[{ key: "age_over_18", disclosure_type: "value" }], {}, 400, "DISCLOSURE_TYPE_NOT_SUPPORTED", "age_over_18"],
        [[{ key: "subject_ref", disclosure_type: "document" }], {}, 400, "DISCLOSURE_TYPE_NOT_SUPPORTED", "subject_ref"],
        [[{ key: "age_over_200", disclosure_type: "zk_proof" }], {}, 400, "INVALID_CIRCUIT", "age_over_200"],
        [[{ key: "age_over_18", disclosure_type: "zk_proof", circuit_id: "document_valid" }], {}, 400, "INVALID_CIRCUIT", "age_over_18"],
        [[{ key: "age_over_18", disclosure_type: "zk_proof", public_input: { threshold: 21 } }], {}, 400, "INVALID_CIRCUIT", "age_over_18"],
        [[{ key: "issuing_country_in", disclosure_type: "zk_proof" }], {}, 400, "INVALID_CIRCUIT", "issuing_country_in"],
        [
          [{ key: "issuing_country_in", disclosure_type: "zk_proof", public_input: { countries: ["brazil"] } }],
          {},
          400,
          "INVALID_CIRCUIT",
          "issuing_country_in",
        ],
        [[{ key: "subject_ref", disclosure_type: "value", circuit_id: "x" }], {}, 400, "INVALID_CIRCUIT", "subject_ref"],
        [[{ key: "subject_ref", disclosure_type: "value" }], { ttl_seconds: 59 }, 400, "INVALID_DISCLOSURE_TTL"],
        [[{ key: "subject_ref", disclosure_type: "value" }], { ttl_seconds: 86_401 }, 400, "INVALID_DISCLOSURE_TTL"],
        [[{ key: "subject_ref", disclosure_type: "value" }], { ttl_seconds: 600.5 }, 400, "INVALID_DISCLOSURE_TTL"],
      ];
      for (const [fields, extra, status, code, key] of cases) {
        const res = await ask(fields, extra);
        expect({ ...errorOf(res), key: res.body.key }, JSON.stringify(fields)).toEqual({ status, code, key });
      }
      const invalid: [Record<string, unknown>, string][] = [
        [{ requestedFields: [] }, "requestedFields"],
        [
          {
            requestedFields: [
              { key: "subject_ref", disclosure_type: "value" },
              { key: "subject_ref", disclosure_type: "value" },
            ],
          },
          "requestedFields",
        ],
        [{ requestedFields: [{ key: "subject_ref", disclosure_type: "shown" }] }, "requestedFields.0.disclosure_type"],
        [
          { requestedFields: Array.from({ length: 33 }, (_, i) => ({ key: `age_over_${i + 1}`, disclosure_type: "zk_proof" })) },
          "requestedFields",
        ],
        [{ biometric_attestation: { capture_id: "nope" } }, "biometric_attestation.capture_id"],
        [{ biometric_attestation: { capture_id: captureId, vrc_confidence: 1.5 } }, "biometric_attestation.vrc_confidence"],
        [{ zk_proof_audit_id: "" }, "zk_proof_audit_id"],
        [{ transaction_type: "x".repeat(65) }, "transaction_type"],
        [{ extra: 1 }, "extra"],
      ];
      for (const [extra, field] of invalid) {
        const res = await ask([{ key: "subject_ref", disclosure_type: "value" }], extra);
        expect(res.status, JSON.stringify(extra)).toBe(400);
        expect(res.body).toMatchObject({ code: "INVALID_INPUT", fields: expect.arrayContaining([field]) });
      }
      for (const missing of ["zk_proof_audit_id", "merchant_id", "transaction_type", "requestedFields", "biometric_attestation"]) {
        const body: Record<string, unknown> = discloseBody(merchant, captureId, [{ key: "subject_ref", disclosure_type: "value" }]);
        delete body[missing];
        const res = await disclose(merchant.keys.sk_test, body);
        expect(res.body, missing).toMatchObject({ code: "INVALID_INPUT", fields: [missing] });
      }
    });

    it("the attestation must be a fresh, live capture of this merchant (403 ATTESTATION_INVALID with its reason); a failed one the caller reports is 403 BIOMETRIC_LIVENESS_FAILED", async () => {
      const { merchant, captureId } = await disclosureFixture({ document: false });
      const fields = [{ key: "subject_ref", disclosure_type: "value" }];
      const [capture] = await testDb()`select created_at from private.captures where id = ${captureId}::uuid`;
      const late = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, fields), at(new Date(capture.created_at), 301));
      expect(late.status).toBe(403);
      expect(late.body).toMatchObject({ code: "ATTESTATION_INVALID", reason: "capture_expired" });
      const other = await merchantFactory();
      const elsewhere = await disclose(other.keys.sk_test, discloseBody(other, captureId, fields));
      expect(elsewhere.body).toMatchObject({ code: "ATTESTATION_INVALID", reason: "capture_not_found" });
      const unknown = await disclose(merchant.keys.sk_test, discloseBody(merchant, crypto.randomUUID(), fields));
      expect(unknown.body).toMatchObject({ code: "ATTESTATION_INVALID", reason: "capture_not_found" });
      const attestedFailure = discloseBody(merchant, captureId, fields, {
        biometric_attestation: { capture_id: captureId, liveness_passed: false },
      });
      expect(errorOf(await disclose(merchant.keys.sk_test, attestedFailure))).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
    });

    it("a zk_proof_audit_id names one disclosure of the merchant (409 AUDIT_ID_REUSED), and nothing is written for the refused one", async () => {
      const { merchant, captureId, identityId } = await disclosureFixture({ document: false });
      const body = discloseBody(merchant, captureId, [{ key: "subject_ref", disclosure_type: "value" }]);
      expect((await disclose(merchant.keys.sk_test, body)).status).toBe(200);
      const entries = (await ledgerOf(identityId)).length;
      expect(errorOf(await disclose(merchant.keys.sk_test, body))).toEqual({ status: 409, code: "AUDIT_ID_REUSED" });
      expect((await ledgerOf(identityId)).length).toBe(entries);
    });

    it("revoke-consent: exactly one of consent_token and subject_ref; what the merchant does not hold is 404", async () => {
      const m = await merchantFactory();
      for (const body of [{}, { consent_token: "cst_x", subject_ref: "sub_x" }, { consent_token: 1 }, { reason: "x" }]) {
        expect(errorOf(await revokeConsent(m.keys.sk_test, body)), JSON.stringify(body)).toEqual({ status: 400, code: "INVALID_INPUT" });
      }
      expect(errorOf(await revokeConsent(m.keys.sk_test, { consent_token: `cst_${"B".repeat(43)}` }))).toEqual({
        status: 404,
        code: "not_found",
      });
      expect(errorOf(await revokeConsent(m.keys.sk_test, { subject_ref: `sub_${"0".repeat(48)}` }))).toEqual({
        status: 404,
        code: "not_found",
      });
      expect(errorOf(await revokeConsent(m.keys.sk_test, { subject_ref: "someone" }))).toEqual({ status: 404, code: "not_found" });
    });
  });

  describe("ledger", () => {
    it("concurrent disclosures of one person (real parallel requests) line up into one unbroken chain", async () => {
      const { merchant, captureId, identityId } = await disclosureFixture({ birthDate: "1980-01-01" });
      const before = (await ledgerOf(identityId)).length;
      const N = 12;
      const results = await Promise.all(
        Array.from({ length: N }, () =>
          disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, [{ key: "age_over_18", disclosure_type: "zk_proof" }])),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(N).fill(200));
      const ledger = await ledgerOf(identityId);
      expect(ledger.length).toBe(before + N);
      expect(ledger.map((entry) => Number(entry.seq))).toEqual(Array.from({ length: before + N }, (_, i) => i + 1));
      expect(new Set(results.map((r) => r.body.consent.ledger_seq)).size).toBe(N);
      const report = await verifyChain(identityId);
      expect(report).toMatchObject({ ok: true, entries: before + N, breaks: [] });
    });

    it("the ledger refuses updates and deletes", async () => {
      const { identityId } = await disclosureFixture({ document: false });
      await expect(testDb()`update private.consent_ledger set payload = '{}' where identity_id = ${identityId}`).rejects.toThrow(
        /append-only/,
      );
      await expect(testDb()`delete from private.consent_ledger where identity_id = ${identityId}`).rejects.toThrow(/append-only/);
      expect((await verifyChain(identityId)).ok).toBe(true);
    });
  });
});
