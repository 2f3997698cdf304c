/**
 * What one capture may be used for, and who may recognise a face: isolation by merchant (a person
 * is matched and transacted for only by merchants they consented with) and the capture nonce rule
 * (one identification, then one act — enrollment or a transaction — by the same merchant).
 */
import { describe, expect, it } from "vitest";
import { capture } from "../harness/captures";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { CONSENT, enrollPerson, transact } from "../harness/identity";

type Shot = { descriptor: unknown; nonce: string };

function identify(key: string, shot: Shot) {
  return call("face-identify", { key, body: { face_template: shot.descriptor, capture_nonce: shot.nonce }, headers: replayHeaders() });
}

function enroll(key: string, shot: Shot) {
  return call("process-biovital-enrollment", {
    key,
    body: { capture_nonce: shot.nonce, face_template: shot.descriptor, consent: CONSENT },
  });
}

function act(key: string, subjectRef: string, shot: Shot) {
  return transact(key, {
    action: "ACTION_LOGIN",
    service_hash: `svc:${crypto.randomUUID()}`,
    user_id: subjectRef,
    capture_nonce: shot.nonce,
    face_template: shot.descriptor,
  });
}

async function identityOf(merchantId: string, subjectRef: string): Promise<string | undefined> {
  const rows =
    await testDb()`select identity_id from private.subject_refs where merchant_id = ${merchantId} and subject_ref = ${subjectRef}`;
  return rows[0]?.identity_id;
}

/** A sandbox person number no other test of this file uses (the faces are shared across the run). */
let nextPerson = 600 + Math.floor(Math.random() * 300);
const person = () => nextPerson++;

describe("isolation by merchant", () => {
  it("does not recognise for B a face that only A enrolled; B's sink cannot transact for that person", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const n = person();
    const enrolledWithA = await enrollPerson(a.keys.pk_test, n);

    const forB = await identify(b.keys.pk_test, capture(n));
    expect(forB.status, forB.text).toBe(200);
    expect(forB.body).toMatchObject({ matched: false, subject_ref: null });
    expect(errorOf(await act(b.keys.sk_test, enrolledWithA.subject_ref, capture(n)))).toEqual({ status: 403, code: "IDENTITY_MISMATCH" });
    // B was given no pseudonym for the person.
    const [{ count }] = await testDb()`select count(*)::int as count from private.subject_refs where merchant_id = ${b.merchant_id}`;
    expect(count).toBe(0);

    const forA = await identify(a.keys.pk_test, capture(n));
    expect(forA.body).toMatchObject({ matched: true, subject_ref: enrolledWithA.subject_ref });
  });

  it("a pseudonym B holds without a consent (written before consent was required) transacts nothing", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const n = person();
    const enrolledWithA = await enrollPerson(a.keys.pk_test, n);
    const identityId = await identityOf(a.merchant_id, enrolledWithA.subject_ref);
    const stale = `sub_${"ab".repeat(24)}`;
    await testDb()`insert into private.subject_refs (merchant_id, subject_ref, identity_id, created_at)
      values (${b.merchant_id}, ${stale}, ${identityId!}, now())`;
    expect(errorOf(await act(b.keys.sk_test, stale, capture(n)))).toEqual({ status: 403, code: "IDENTITY_MISMATCH" });
  });

  it("after B enrols the same face, B's consent is recorded on the same identity, and B matches and transacts", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const n = person();
    const withA = await enrollPerson(a.keys.pk_test, n);
    const withB = await enrollPerson(b.keys.pk_test, n);
    expect(withB.subject_ref).not.toBe(withA.subject_ref);
    const identityId = await identityOf(a.merchant_id, withA.subject_ref);
    expect(await identityOf(b.merchant_id, withB.subject_ref)).toBe(identityId);
    const consents = await testDb()`select merchant_id from private.consents where identity_id = ${identityId!} and revoked_at is null`;
    expect(consents.map((c) => c.merchant_id).sort()).toEqual([a.merchant_id, b.merchant_id].sort());

    const forB = await identify(b.keys.pk_test, capture(n));
    expect(forB.body).toMatchObject({ matched: true, subject_ref: withB.subject_ref });
    const approved = await act(b.keys.sk_test, withB.subject_ref, capture(n));
    expect(approved.status, approved.text).toBe(200);
  });

  it("a withdrawn consent stops recognition and acts for that merchant only; erasure stops both", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const n = person();
    const withA = await enrollPerson(a.keys.pk_test, n);
    const withB = await enrollPerson(b.keys.pk_test, n);
    const identityId = await identityOf(a.merchant_id, withA.subject_ref);

    const withdrawn = await call("revoke-consent", { key: b.keys.sk_test, body: { subject_ref: withB.subject_ref } });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    expect((await identify(b.keys.pk_test, capture(n))).body).toMatchObject({ matched: false, subject_ref: null });
    expect(errorOf(await act(b.keys.sk_test, withB.subject_ref, capture(n)))).toEqual({ status: 403, code: "ACCESS_REVOKED" });
    expect((await identify(a.keys.pk_test, capture(n))).body).toMatchObject({ matched: true, subject_ref: withA.subject_ref });
    expect((await act(a.keys.sk_test, withA.subject_ref, capture(n))).status).toBe(200);

    await testDb()`update private.identities set erased_at = now() where id = ${identityId!}`;
    expect((await identify(a.keys.pk_test, capture(n))).body).toMatchObject({ matched: false, subject_ref: null });
    expect(errorOf(await act(a.keys.sk_test, withA.subject_ref, capture(n)))).toEqual({ status: 403, code: "ACCESS_REVOKED" });
  });

  it("the sink's mismatch search never reveals another merchant's person", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const onlyWithA = person();
    const withB = person();
    await enrollPerson(a.keys.pk_test, onlyWithA);
    const enrolledWithB = await enrollPerson(b.keys.pk_test, withB);
    // Person onlyWithA's face, named as B's person: nobody B knows, so below threshold, not "someone else".
    expect(errorOf(await act(b.keys.sk_test, enrolledWithB.subject_ref, capture(onlyWithA)))).toEqual({
      status: 403,
      code: "FACE_MATCH_BELOW_THRESHOLD",
    });
    const other = person();
    await enrollPerson(b.keys.pk_test, other);
    expect(errorOf(await act(b.keys.sk_test, enrolledWithB.subject_ref, capture(other)))).toEqual({
      status: 403,
      code: "IDENTITY_MISMATCH",
    });
  });
});

describe("one capture: one identification, then one act, by one merchant", () => {
  it("identifies once: the same capture again is 409 CAPTURE_REPLAYED, for the same or another merchant", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const n = person();
    await enrollPerson(a.keys.pk_test, n);
    const shot = capture(n);
    expect((await identify(a.keys.pk_test, shot)).body.matched).toBe(true);
    expect(errorOf(await identify(a.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    expect(errorOf(await identify(b.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    // The same nonce is another capture in the other environment.
    expect((await identify(a.keys.pk_live, shot)).status).toBe(200);
  });

  it("identify then transact with the same capture (same merchant) is allowed once", async () => {
    const a = await merchantFactory();
    const n = person();
    await enrollPerson(a.keys.pk_test, n);
    const shot = capture(n);
    const identified = await identify(a.keys.pk_test, shot);
    expect(identified.body.matched).toBe(true);
    const approved = await act(a.keys.sk_test, identified.body.subject_ref, shot);
    expect(approved.status, approved.text).toBe(200);
    expect(errorOf(await act(a.keys.sk_test, identified.body.subject_ref, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    expect(errorOf(await identify(a.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    expect(errorOf(await enroll(a.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
  });

  it("identify (not matched) then enrol with the same capture is allowed; the enrolled capture acts no more", async () => {
    const a = await merchantFactory();
    const n = person();
    const shot = capture(n);
    expect((await identify(a.keys.pk_test, shot)).body.matched).toBe(false);
    const enrolled = await enroll(a.keys.pk_test, shot);
    expect(enrolled.status, enrolled.text).toBe(200);
    expect(errorOf(await act(a.keys.sk_test, enrolled.body.subject_ref, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    expect(errorOf(await enroll(a.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    expect(errorOf(await identify(a.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    // A fresh capture of the person acts normally.
    expect((await act(a.keys.sk_test, enrolled.body.subject_ref, capture(n))).status).toBe(200);
  });

  it("a capture identified for A cannot act for B, even for a person B enrolled", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const n = person();
    await enrollPerson(a.keys.pk_test, n);
    const withB = await enrollPerson(b.keys.pk_test, n);
    const shot = capture(n);
    expect((await identify(a.keys.pk_test, shot)).body.matched).toBe(true);
    expect(errorOf(await act(b.keys.sk_test, withB.subject_ref, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    expect(errorOf(await enroll(b.keys.pk_test, capture(n, { nonce: shot.nonce })))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
  });

  it("a transaction's capture (approved or refused) is never identified, enrolled or used again", async () => {
    const a = await merchantFactory();
    const n = person();
    const enrolled = await enrollPerson(a.keys.pk_test, n);
    const shot = capture(n);
    expect((await act(a.keys.sk_test, enrolled.subject_ref, shot)).status).toBe(200);
    expect(errorOf(await identify(a.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    expect(errorOf(await enroll(a.keys.pk_test, shot))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
    const photo = capture(n, { attack: "photo" });
    expect(errorOf(await act(a.keys.sk_test, enrolled.subject_ref, photo))).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
    expect(errorOf(await act(a.keys.sk_test, enrolled.subject_ref, photo))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });
  });

  it("the act must follow the identification within five minutes of it (server clock), else 409 CAPTURE_REPLAYED", async () => {
    const a = await merchantFactory();
    const n = person();
    const enrolled = await enrollPerson(a.keys.pk_test, n);
    // Identified at `base`, captured 25 s after it (the engine accepts up to 30 s ahead), acted on 5 min 10 s
    // after the identification: the capture itself is still fresh for the engine (4 min 45 s old).
    const base = new Date(Date.now() + 60_000);
    const at = (ms: number) => new Date(base.getTime() + ms);
    const shot = capture(n, { at: at(25_000) });
    const identified = await call("face-identify", {
      key: a.keys.pk_test,
      body: { face_template: shot.descriptor, capture_nonce: shot.nonce },
      headers: replayHeaders(base),
      now: base,
    });
    expect(identified.body.matched, identified.text).toBe(true);
    const request = (ms: number) =>
      transact(
        a.keys.sk_test,
        {
          action: "ACTION_LOGIN",
          service_hash: `svc:${crypto.randomUUID()}`,
          user_id: enrolled.subject_ref,
          capture_nonce: shot.nonce,
          face_template: shot.descriptor,
        },
        { now: at(ms) },
      );
    expect(errorOf(await request(5 * 60_000 + 10_000))).toEqual({ status: 409, code: "CAPTURE_REPLAYED" });

    const inTime = capture(n, { at: at(25_000) });
    await call("face-identify", {
      key: a.keys.pk_test,
      body: { face_template: inTime.descriptor, capture_nonce: inTime.nonce },
      headers: replayHeaders(base),
      now: base,
    });
    const ok = await transact(
      a.keys.sk_test,
      {
        action: "ACTION_LOGIN",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: enrolled.subject_ref,
        capture_nonce: inTime.nonce,
        face_template: inTime.descriptor,
      },
      { now: at(4 * 60_000 + 50_000) },
    );
    expect(ok.status, ok.text).toBe(200);
  });
});
