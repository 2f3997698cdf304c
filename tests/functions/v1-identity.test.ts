import { describe, expect, it } from "vitest";
import { encodeProof } from "../../shared/engine";
import { deviceChallenge, SoftwareAuthenticator } from "../harness/authenticator";
import { revokeConsent } from "../harness/consent";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { CONSENT, enrollStranger, newStranger } from "../harness/identity";
import { presenceCapture } from "../harness/mandates";
import { claim, proofOf, v1 } from "../harness/resource-api";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;
type Stranger = ReturnType<typeof newStranger>;

/** A person claimed by `merchant` through /v1, with their facetoken. */
async function claimed(merchant: Merchant, person: Stranger = newStranger()) {
  const res = await claim(merchant.keys.sk_test, person.capture());
  expect(res.status, res.text).toBe(201);
  return { person, facetoken: res.body.facetoken as string, body: res.body as Record<string, any> };
}

async function billedRows(merchantId: string) {
  return testDb()`select identity_id, channel, reference from private.billing_ledger where merchant_id = ${merchantId}`;
}

describe("POST /v1/identity/claims", () => {
  it("claims a live person: 201 with the facetoken, the instant, a receipt that verifies publicly, and the metadata; no source", async () => {
    const merchant = await merchantFactory();
    const person = newStranger();
    const at = new Date();
    const res = await claim(merchant.keys.sk_test, person.capture({ at }), { now: at, body: { metadata: { order: "A-1" } } });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["claimed_at", "device_binding", "facetoken", "metadata", "object", "receipt"]);
    // A sandbox claim without a device: the simulator's capture counts, marked as no device.
    expect(res.body.device_binding).toBe("none");
    expect(res.body).toMatchObject({ object: "claim", claimed_at: at.toISOString(), metadata: { order: "A-1" } });
    expect(res.body.facetoken).toMatch(/^sub_[0-9a-f]{48}$/);
    const { receipt } = res.body;
    expect(receipt.anchor).toMatch(/^[0-9a-f]{64}$/);
    expect(receipt.code).toMatch(/^RCPT-/);
    expect(receipt.url).toMatch(new RegExp(`/v1/receipts/${receipt.id}/verify$`));
    const verified = await fetch(receipt.url);
    const verification = (await verified.json()) as Record<string, any>;
    expect(verified.status).toBe(200);
    expect(verification).toMatchObject({ valid: true, immutability_seal: receipt.anchor, public_seal_status: "none" });
    expect(res.headers.get("service-ratelimit-limit")).toBe("10");
  });

  it("binds the legal identity when asked: source document verifies the passport the proof carries and keeps it on record, at the one price", async () => {
    const merchant = await merchantFactory();
    const person = newStranger();
    const shot = person.capture();
    const document = await passport({ dateOfBirth: "1990-04-01" });
    const res = await v1("/identity/claims", {
      key: merchant.keys.sk_test,
      body: { proof: encodeProof(shot.descriptor, CONSENT, undefined, document), source: "document" },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.source).toBe("document");
    const [record] = await testDb()`
      select d.document_type, d.issuing_country, d.date_of_birth::text, c.action, c.assurance_level
      from private.identity_documents d join private.captures c on c.id = d.capture_id
      join private.receipts r on r.capture_id = c.id where r.id = ${res.body.receipt.id}`;
    expect(record).toMatchObject({
      document_type: "passport",
      issuing_country: "UTO",
      date_of_birth: "1990-04-01",
      action: "ACTION_SIGNUP",
    });
    expect(record.assurance_level).toBe("face_voice_doc");
    const receipt = (await (await fetch(res.body.receipt.url)).json()) as Record<string, any>;
    expect(receipt).toMatchObject({ valid: true, action: "ACTION_SIGNUP", assurance_level: "face_voice_doc" });
    // one price: billed once as a claim, the act every claim is billed as, with or without its legal identity
    const billed = await testDb()`select act, channel from private.billing_ledger where merchant_id = ${merchant.merchant_id}`;
    expect(billed).toEqual([{ act: "claim", channel: "api" }]);
    // the record answers the attributes the evidence proves
    const verified = await v1("/identity/attributes", {
      key: merchant.keys.sk_test,
      body: { proof: proofOf(person.capture(), null), facetoken: res.body.facetoken, attribute: "document_verified" },
    });
    expect(verified.body.value).toBe(true);

    // a document in the proof without source is not read: nothing bound, no source
    const other = newStranger();
    const unasked = await v1("/identity/claims", {
      key: merchant.keys.sk_test,
      body: { proof: encodeProof(other.capture().descriptor, CONSENT, undefined, await passport()) },
    });
    expect(unasked.status, unasked.text).toBe(201);
    expect(unasked.body.source).toBeUndefined();
    expect(
      await testDb()`select 1 from private.identity_documents d join private.receipts r on r.capture_id = d.capture_id
                          where r.id = ${unasked.body.receipt.id}`,
    ).toHaveLength(0);
  });

  it("refuses source document as every document failure: 403 document_required with the cause, nothing written or billed", async () => {
    const merchant = await merchantFactory();
    const bound = newStranger();
    const document = await passport();
    const claimWith = (person: Stranger, evidence: unknown) =>
      v1("/identity/claims", {
        key: merchant.keys.sk_test,
        body: { proof: encodeProof(person.capture().descriptor, CONSENT, undefined, evidence), source: "document" },
      });
    expect((await claimWith(bound, document)).status).toBe(201);

    const person = newStranger();
    const cases: [unknown, string][] = [
      [await passport({ case: "tampered" }), "document_data_group_mismatch"],
      [await passport({ case: "unknown-csca" }), "document_issuer_untrusted"],
      [await passport({ portraitSimilarity: 0.2 }), "document_portrait_mismatch"],
      [document, "document_already_bound"],
    ];
    for (const [evidence, reason] of cases) {
      const res = await claimWith(person, evidence);
      expect(errorOf(res), reason).toEqual({ status: 403, code: "document_required" });
      expect(res.body.reason).toBe(reason);
    }
    expect(errorOf(await claimWith(person, { sod: "not base64" }))).toEqual({ status: 400, code: "invalid_input" });
    expect(await billedRows(merchant.merchant_id)).toHaveLength(1);
    // the same person, with a document of their own, is claimed at once: nothing of the refusals was kept
    const ok = await claimWith(person, await passport());
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.source).toBe("document");
  });

  it("answers 409 already_claimed with the facetoken held for a person the merchant holds, however they came", async () => {
    const merchant = await merchantFactory();
    const first = await claimed(merchant);
    const again = await claim(merchant.keys.sk_test, first.person.capture());
    expect(errorOf(again)).toEqual({ status: 409, code: "already_claimed" });
    expect(again.body.facetoken).toBe(first.facetoken);

    // Enrolled through the function API: the pseudonym held is the facetoken.
    const enrolled = await enrollStranger(merchant.keys.pk_test);
    const viaEnrollment = await claim(merchant.keys.sk_test, enrolled.capture());
    expect(errorOf(viaEnrollment)).toEqual({ status: 409, code: "already_claimed" });
    expect(viaEnrollment.body.facetoken).toBe(enrolled.subject_ref);
    expect(await billedRows(merchant.merchant_id)).toHaveLength(1);
  });

  it("lets another merchant claim the same person under its own facetoken, never revealing the first", async () => {
    const [a, b] = [await merchantFactory(), await merchantFactory()];
    const first = await claimed(a);
    const second = await claim(b.keys.sk_test, first.person.capture());
    expect(second.status, second.text).toBe(201);
    expect(second.body.facetoken).not.toBe(first.facetoken);
    expect(await billedRows(a.merchant_id)).toHaveLength(1);
    expect(await billedRows(b.merchant_id)).toHaveLength(1);
  });

  it("refuses what does not prove a consenting live person now, and writes nothing for it", async () => {
    const merchant = await merchantFactory();
    const person = newStranger();
    // A live key: its bucket holds the dozen refusals below (the sandbox's holds 10).
    const key = merchant.keys.sk_live;
    // In live mode the claim counts only with a passkey registered over its capture (docs/devices.md).
    const shot = person.capture({ nonce: await deviceChallenge(key, "enroll") });

    const source = await claim(key, shot, { body: { source: "document" } });
    expect(errorOf(source)).toEqual({ status: 403, code: "document_required" });
    expect(source.body.reason).toBe("document_missing");
    expect(errorOf(await claim(key, shot, { body: { source: "passport" } }))).toEqual({ status: 400, code: "invalid_input" });

    for (const proof of [
      "",
      "pp1.",
      "pp1.!!!!",
      `pp2.${proofOf(shot).slice(4)}`,
      "pp1.bm90IGpzb24",
      `pp1.${btoa('{"descriptor":{},"x":1}')}`,
    ]) {
      const res = await v1("/identity/claims", { key, body: { proof } });
      expect(errorOf(res), proof.slice(0, 20)).toEqual({ status: 400, code: "invalid_input" });
    }
    const broken = { ...shot.descriptor, signals: { ...shot.descriptor.signals, pulse: [1] } };
    const badDescriptor = await v1("/identity/claims", { key, body: { proof: proofOf({ descriptor: broken }) } });
    expect(errorOf(badDescriptor)).toEqual({ status: 400, code: "invalid_input" });
    expect(badDescriptor.body.fields.length).toBeGreaterThan(0);
    for (const field of badDescriptor.body.fields) expect(field).toMatch(/^proof\.descriptor\.signals/);

    expect(errorOf(await v1("/identity/claims", { key, body: { proof: proofOf(shot, null) } }))).toEqual({
      status: 403,
      code: "consent_required",
    });
    const unconsented = proofOf(shot, { version: "", retention_days: 365 });
    expect(errorOf(await v1("/identity/claims", { key, body: { proof: unconsented } }))).toEqual({ status: 403, code: "consent_required" });

    const photo = await claim(key, person.capture({ attack: "photo" }));
    expect(errorOf(photo)).toEqual({ status: 403, code: "liveness_required" });
    expect(photo.body.reason).toEqual(expect.any(String));
    const stale = await claim(key, person.capture({ at: new Date(Date.now() - 10 * 60_000) }));
    expect(errorOf(stale)).toEqual({ status: 403, code: "liveness_required" });
    expect(stale.body.reason).toBe("capture_stale");
    expect(errorOf(await claim(key, shot, { body: { surprise: true } }))).toEqual({ status: 400, code: "invalid_input" });

    expect(await billedRows(merchant.merchant_id)).toHaveLength(0);
    // The refused capture is still unused (its device challenge too): it claims the person now, signed on their device.
    const registration = await (await SoftwareAuthenticator.create()).registerCapture(shot.nonce, shot.descriptor);
    expect(errorOf(await claim(key, shot))).toEqual({ status: 403, code: "unauthorized_device" });
    const signed = await v1("/identity/claims", { key, body: { proof: encodeProof(shot.descriptor, CONSENT, { registration }) } });
    expect(signed.status, signed.text).toBe(201);
  });

  it("replays under an Idempotency-Key: the same key and body answer the original 201, another body 422", async () => {
    const merchant = await merchantFactory();
    const shot = newStranger().capture();
    const idempotencyKey = `claim-${crypto.randomUUID()}`;
    const first = await claim(merchant.keys.sk_test, shot, { idempotencyKey });
    expect(first.status, first.text).toBe(201);
    const replay = await claim(merchant.keys.sk_test, shot, { idempotencyKey });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotency-status")).toBe("replayed");
    expect(replay.body).toEqual(first.body);
    const other = await claim(merchant.keys.sk_test, shot, { idempotencyKey, body: { metadata: { x: "y" } } });
    expect(errorOf(other)).toEqual({ status: 422, code: "idempotency_key_reused" });
  });
});

describe("POST /v1/identity/recognitions", () => {
  it("recognises a claimed person by the facetoken held, and nobody else: free, stateless, nothing written", async () => {
    const [merchant, other] = [await merchantFactory(), await merchantFactory()];
    const { person, facetoken } = await claimed(merchant);
    const shot = person.capture();
    for (let i = 0; i < 2; i++) {
      const res = await v1("/identity/recognitions", { key: merchant.keys.sk_test, body: { proof: proofOf(shot, null) } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ object: "recognition", matched: true, facetoken, confidence: expect.any(Number), device_binding: "none" });
      expect(res.body.confidence).toBeGreaterThanOrEqual(0.75);
    }
    const elsewhere = await v1("/identity/recognitions", { key: other.keys.sk_test, body: { proof: proofOf(shot) } });
    expect(elsewhere.body).toEqual({ object: "recognition", matched: false, facetoken: null, confidence: 0 });
    const stranger = await v1("/identity/recognitions", { key: merchant.keys.sk_test, body: { proof: proofOf(newStranger().capture()) } });
    expect(stranger.body).toEqual({ object: "recognition", matched: false, facetoken: null, confidence: 0 });

    const [used] = await testDb()`select count(*)::int as n from private.capture_nonces where capture_nonce = ${shot.nonce}`;
    expect(used.n).toBe(0);
    expect(await billedRows(merchant.merchant_id)).toHaveLength(1);
    expect(await billedRows(other.merchant_id)).toHaveLength(0);
  });

  it("needs a live person now and a proof; an Idempotency-Key is not needed, and ignored", async () => {
    const merchant = await merchantFactory();
    const person = newStranger();
    const photo = await v1("/identity/recognitions", {
      key: merchant.keys.sk_test,
      body: { proof: proofOf(person.capture({ attack: "replay" })) },
    });
    expect(errorOf(photo)).toEqual({ status: 403, code: "liveness_required" });
    expect(errorOf(await v1("/identity/recognitions", { key: merchant.keys.sk_test, body: {} }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    const keyed = await v1("/identity/recognitions", {
      key: merchant.keys.sk_test,
      idempotencyKey: "recognise-1",
      body: { proof: proofOf(person.capture()) },
    });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get("service-ratelimit-limit")).toBe("40");
  });
});

describe("POST /v1/identity/attributes", () => {
  it("answers document_verified from the verified document on record, for the live person of the facetoken only", async () => {
    const merchant = await merchantFactory();
    const withDocument = await enrollStranger(merchant.keys.pk_test);
    await presenceCapture(merchant, withDocument, { document: true });
    const without = await claimed(merchant);

    const ask = (facetoken: string, shot: { descriptor: any }, extra: Record<string, unknown> = {}) =>
      v1("/identity/attributes", {
        key: merchant.keys.sk_test,
        body: { proof: proofOf(shot, null), facetoken, attribute: "document_verified", ...extra },
      });

    const yes = await ask(withDocument.subject_ref, withDocument.capture(), { metadata: { check: "1" } });
    expect(yes.status, yes.text).toBe(200);
    expect(yes.body).toEqual({
      object: "attribute",
      attribute: "document_verified",
      value: true,
      facetoken: withDocument.subject_ref,
      asserted_at: expect.any(String),
      device_binding: "none",
      metadata: { check: "1" },
    });
    const no = await ask(without.facetoken, without.person.capture());
    expect(no.body.value).toBe(false);

    expect(errorOf(await ask(without.facetoken, withDocument.capture()))).toEqual({ status: 403, code: "identity_mismatch" });
    expect(errorOf(await ask(`sub_${"0".repeat(48)}`, withDocument.capture()))).toEqual({ status: 403, code: "identity_mismatch" });
    expect(errorOf(await ask("not-a-facetoken", withDocument.capture()))).toEqual({ status: 400, code: "invalid_input" });
    expect(errorOf(await ask(without.facetoken, without.person.capture({ attack: "photo" })))).toEqual({
      status: 403,
      code: "liveness_required",
    });

    const shot = without.person.capture();
    expect((await ask(without.facetoken, shot)).status).toBe(200);
    expect(errorOf(await ask(without.facetoken, shot))).toEqual({ status: 409, code: "capture_replayed" });
  });

  it("answers age_over_18 and age_over_21 from the verified document's date of birth, on the request's day", async () => {
    const merchant = await merchantFactory();
    const year = new Date().getUTCFullYear();
    const ageOf = async (dateOfBirth: string) => {
      const person = await enrollStranger(merchant.keys.pk_test);
      await presenceCapture(merchant, person, { document: true, dateOfBirth });
      const answers: Record<string, boolean> = {};
      for (const attribute of ["age_over_18", "age_over_21"]) {
        const res = await v1("/identity/attributes", {
          key: merchant.keys.sk_test,
          body: { proof: proofOf(person.capture(), null), facetoken: person.subject_ref, attribute },
        });
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({ object: "attribute", attribute, facetoken: person.subject_ref });
        answers[attribute] = res.body.value;
      }
      return answers;
    };
    expect(await ageOf("1990-04-12")).toEqual({ age_over_18: true, age_over_21: true });
    expect(await ageOf(`${year - 19}-01-01`)).toEqual({ age_over_18: true, age_over_21: false });
    expect(await ageOf(`${year - 16}-01-01`)).toEqual({ age_over_18: false, age_over_21: false });
  });

  it("refuses an attribute nothing on record can prove, before the proof is used; and replays under an Idempotency-Key", async () => {
    const merchant = await merchantFactory();
    const { person, facetoken } = await claimed(merchant);
    const shot = person.capture();
    for (const attribute of ["age_over_18", "age_over_21"]) {
      const res = await v1("/identity/attributes", { key: merchant.keys.sk_test, body: { proof: proofOf(shot), facetoken, attribute } });
      expect(errorOf(res)).toEqual({ status: 403, code: "document_required" });
      expect(res.body).toMatchObject({ reason: "document_unverifiable", attribute });
    }
    const unknown = await v1("/identity/attributes", {
      key: merchant.keys.sk_test,
      body: { proof: proofOf(shot), facetoken, attribute: "is_rich" },
    });
    expect(errorOf(unknown)).toEqual({ status: 400, code: "invalid_input" });

    const body = { proof: proofOf(shot), facetoken, attribute: "document_verified" };
    const idempotencyKey = `attr-${crypto.randomUUID()}`;
    const first = await v1("/identity/attributes", { key: merchant.keys.sk_test, body, idempotencyKey });
    expect(first.status, first.text).toBe(200);
    const replay = await v1("/identity/attributes", { key: merchant.keys.sk_test, body, idempotencyKey });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotency-status")).toBe("replayed");
    expect(replay.body).toEqual(first.body);
  });

  it("answers access_revoked once the person withdrew consent with the merchant", async () => {
    const merchant = await merchantFactory();
    const { person, facetoken } = await claimed(merchant);
    expect((await revokeConsent(merchant.keys.sk_test, { subject_ref: facetoken })).status).toBe(200);
    const res = await v1("/identity/attributes", {
      key: merchant.keys.sk_test,
      body: { proof: proofOf(person.capture()), facetoken, attribute: "document_verified" },
    });
    expect(errorOf(res)).toEqual({ status: 403, code: "access_revoked" });
    expect(res.body.reason).toBe("consent_revoked");
  });
});

describe("the identity routes' rate limits", () => {
  it("counts claims, recognitions and attributes in buckets of their own: a sandbox key's claims hold a burst of 10, then 429 with Retry-After", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 30 }, () => v1("/identity/claims", { key, body: {} })));
    const seconds = (Date.now() - started) / 1000;
    const passed = burst.filter((r) => r.status === 400).length;
    const limited = burst.filter((r) => r.status === 429);
    expect(passed + limited.length).toBe(30);
    // 10 tokens, and 5 more each second while the burst runs
    expect(passed).toBeGreaterThanOrEqual(10);
    expect(passed).toBeLessThanOrEqual(10 + Math.ceil(seconds * 5));
    expect(limited.length).toBeGreaterThan(0);
    expect(errorOf(limited[0])).toEqual({ status: 429, code: "rate_limited" });
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // the other routes' buckets are untouched
    expect((await v1("/identity/recognitions", { key, body: {} })).status).toBe(400);
    const attribute = await v1("/identity/attributes", { key, body: {} });
    expect(attribute.status).toBe(400);
    expect(attribute.headers.get("service-ratelimit-limit")).toBe("10");
  });
});

describe("the identity routes and the function API", () => {
  it("a person claimed through /v1 is the one the function API names by the same pseudonym", async () => {
    const merchant = await merchantFactory();
    const { person, facetoken } = await claimed(merchant);
    const shot = person.capture();
    const identified = await call("face-identify", {
      key: merchant.keys.pk_test,
      body: { capture_nonce: shot.nonce, face_template: shot.descriptor },
      headers: replayHeaders(),
    });
    expect(identified.status, identified.text).toBe(200);
    expect(identified.body).toMatchObject({ matched: true, subject_ref: facetoken });
  });
});
