/**
 * Device-bound presence over HTTP (docs/devices.md): in live mode a capture counts only signed by a
 * registered, unrevoked passkey of the person, under user verification, over a challenge the
 * service issued; every other capture is 403 UNAUTHORIZED_DEVICE with its `reason`, and nothing is
 * recorded as approved (no capture row, no receipt). The passkeys are software authenticators
 * signing the real WebAuthn structures (tests/harness/authenticator.ts); the sandbox still takes the
 * simulator's captures, marked device_binding "none".
 */
import { describe, expect, it } from "vitest";
import { DECLINED_CEREMONY } from "../../shared/contracts/device";
import { encodeProof } from "../../shared/engine";
import { deviceChallenge, SoftwareAuthenticator } from "../harness/authenticator";
import { merchantFactory, testDb } from "../harness/factories";
import { type CallResult, call, errorOf, replayHeaders } from "../harness/http";
import { CONSENT, enrollStranger, newStranger, transact } from "../harness/identity";
import { issue, mandateTerms, standInRequest } from "../harness/mandates";
import { v1 } from "../harness/resource-api";
import { boot, openSession, readSession, screenCall } from "../harness/sessions";

type Shot = { descriptor: any; nonce: string; device_assertion?: unknown };

function login(subjectRef: string, shot: Shot, extra: Record<string, unknown> = {}) {
  return {
    action: "ACTION_LOGIN",
    service_hash: `svc:${crypto.randomUUID()}`,
    user_id: subjectRef,
    capture_nonce: shot.nonce,
    face_template: shot.descriptor,
    ...(shot.device_assertion === undefined ? {} : { device_assertion: shot.device_assertion }),
    ...extra,
  };
}

/** Nothing approved for this capture: no capture row, hence no receipt. */
async function expectNothingRecorded(nonce: string) {
  const rows = await testDb()`select c.id, r.id as receipt from private.captures c left join private.receipts r on r.capture_id = c.id
    where c.capture_nonce = ${nonce}`;
  expect(rows).toEqual([]);
}

function expectRefused(res: CallResult, reason: string) {
  expect({ ...errorOf(res), reason: res.body.reason }, res.text).toEqual({ status: 403, code: "UNAUTHORIZED_DEVICE", reason });
}

async function livePerson() {
  const merchant = await merchantFactory();
  const person = await enrollStranger(merchant.keys.pk_live);
  return { merchant, person, key: merchant.keys.sk_live };
}

describe("device-bound presence (live mode)", () => {
  it("a mandate standing in: device_binding none for the act (nobody was present), the grant's in its mandate block", async () => {
    const { person, key } = await livePerson();
    const { granted_by: _, ...terms } = mandateTerms(person, {
      scopes: ["login"],
      ceiling: { kind: "count", count: 2, period: "lifetime" },
    });
    const shot = await person.signedCapture(key, "grant");
    const granted = await transact(key, { ...login(person.subject_ref, shot), grant: terms });
    expect(granted.status, granted.text).toBe(200);
    const issued = await issue(key, { ...terms, granted_by: person.subject_ref, proof: { capture_id: granted.body.transaction_id } });
    expect(issued.status, issued.text).toBe(201);
    const headers = { "idempotency-key": `idem-${crypto.randomUUID()}` };
    const request = standInRequest(person, issued.body.mandate_id);
    const res = await transact(key, request, { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      status: "approved",
      assurance_level: "mandate",
      device_binding: "none",
      mandate: { device_binding: "synced" },
    });
    const [row] = await testDb()`select device_binding, device_id from private.captures where id = ${res.body.transaction_id}`;
    expect(row).toEqual({ device_binding: "none", device_id: null });
    // A replay answers the same.
    const replayed = await transact(key, request, { headers });
    expect(replayed.body).toMatchObject({ device_binding: "none", mandate: { device_binding: "synced", idempotent_replay: true } });
  });

  it("approves a capture signed by the person's passkey, with device_binding on the answer, the capture and the receipt", async () => {
    const { person, key } = await livePerson();
    const shot = await person.signedCapture(key, "login");
    const res = await transact(key, login(person.subject_ref, shot));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: "approved", assurance_level: "face_voice", device_binding: "synced" });
    const [row] = await testDb()`select c.device_binding, d.credential_id from private.captures c
      join private.device_credentials d on d.id = c.device_id where c.id = ${res.body.transaction_id}`;
    expect(row).toEqual({ device_binding: "synced", credential_id: person.device.credentialId });
    const [receipt] = await testDb()`select jws from private.receipts where capture_id = ${res.body.transaction_id}`;
    const payload = JSON.parse(Buffer.from(receipt.jws.split(".")[1], "base64url").toString());
    expect(payload.device_binding).toBe("synced");
  });

  it("refuses the simulator's descriptor with the person's own embedding and a valid challenge, but no assertion", async () => {
    const { merchant, person, key } = await livePerson();
    const shot = person.capture({ nonce: await deviceChallenge(key, "login") });
    const res = await transact(key, login(person.subject_ref, shot));
    expectRefused(res, "device_missing");
    expect(res.body.error).toMatch(/add this device/);
    await expectNothingRecorded(shot.nonce);
    // face-identify likewise: the face is known, the device is not shown.
    const identify = await call("face-identify", {
      key: merchant.keys.pk_live,
      body: { face_template: shot.descriptor, capture_nonce: shot.nonce },
      headers: replayHeaders(),
    });
    expectRefused(identify, "device_missing");
  });

  it("refuses an assertion from another person's credential", async () => {
    const { merchant, person, key } = await livePerson();
    const other = await enrollStranger(merchant.keys.pk_live);
    const challenge = await deviceChallenge(key, "login");
    const shot = person.capture({ nonce: challenge });
    const res = await transact(
      key,
      login(person.subject_ref, { ...shot, device_assertion: await other.device.signCapture(challenge, shot.descriptor) }),
    );
    expectRefused(res, "credential_other_identity");
    await expectNothingRecorded(shot.nonce);
  });

  it("refuses a known face on a device with no credential, naming the way forward", async () => {
    const { person, key } = await livePerson();
    const newDevice = await SoftwareAuthenticator.create();
    const challenge = await deviceChallenge(key, "login");
    const shot = person.capture({ nonce: challenge });
    const res = await transact(
      key,
      login(person.subject_ref, { ...shot, device_assertion: await newDevice.signCapture(challenge, shot.descriptor) }),
    );
    expectRefused(res, "credential_unknown");
    expect(res.body.error).toMatch(/approve it from one of their registered devices, or prove again with their passport/);
    await expectNothingRecorded(shot.nonce);
  });

  it("refuses an assertion over a different descriptor (one number changed)", async () => {
    const { person, key } = await livePerson();
    const shot = await person.signedCapture(key, "login");
    const changed = structuredClone(shot.descriptor);
    changed.face.embedding[0] += 1e-6;
    const res = await transact(key, login(person.subject_ref, { ...shot, descriptor: changed }));
    expectRefused(res, "descriptor_mismatch");
    await expectNothingRecorded(shot.nonce);
  });

  it("refuses a replayed challenge: the first act counts, the second is challenge_used", async () => {
    const { person, key } = await livePerson();
    const shot = await person.signedCapture(key, "login");
    const request = login(person.subject_ref, shot);
    expect((await transact(key, request)).status).toBe(200);
    expectRefused(await transact(key, { ...request, service_hash: `svc:${crypto.randomUUID()}` }), "challenge_used");
    expect((await testDb()`select count(*)::int as n from private.captures where capture_nonce = ${shot.nonce}`)[0].n).toBe(1);
  });

  it("refuses an expired challenge (controlled clock: 120 s after issue)", async () => {
    const { person, key } = await livePerson();
    const issuedAt = new Date();
    const shot = await person.signedCapture(key, "login", { now: issuedAt });
    const later = new Date(issuedAt.getTime() + 120_000);
    expectRefused(await transact(key, login(person.subject_ref, shot), { now: later }), "challenge_expired");
    await expectNothingRecorded(shot.nonce);
  });

  it("refuses a challenge issued for another purpose or to another merchant", async () => {
    const { merchant, person, key } = await livePerson();
    const payment = await deviceChallenge(key, "payment");
    const shot = person.capture({ nonce: payment });
    const res = await transact(
      key,
      login(person.subject_ref, { ...shot, device_assertion: await person.device.signCapture(payment, shot.descriptor) }),
    );
    expectRefused(res, "challenge_unknown");
    const elsewhere = await merchantFactory();
    const foreign = await deviceChallenge(elsewhere.keys.sk_live, "login");
    const foreignShot = person.capture({ nonce: foreign });
    const signed = { ...foreignShot, device_assertion: await person.device.signCapture(foreign, foreignShot.descriptor) };
    expectRefused(await transact(key, login(person.subject_ref, signed)), "challenge_unknown");
    expect(merchant.merchant_id).not.toBe(elsewhere.merchant_id);
  });

  it("refuses a revoked credential from the next request on", async () => {
    const { person, key } = await livePerson();
    // Revoked through the devices' own RPC (what the person's device list calls), at the database's instant.
    await testDb()`select public.device_credential_revoke(jsonb_build_object('environment', 'live', 'now', now(),
      'identity_id', d.identity_id, 'device_id', d.id)) from private.device_credentials d where d.credential_id = ${person.device.credentialId}`;
    const shot = await person.signedCapture(key, "login");
    expectRefused(await transact(key, login(person.subject_ref, shot)), "credential_revoked");
    await expectNothingRecorded(shot.nonce);
  });

  it("refuses an assertion without user verification (UV false)", async () => {
    const { person, key } = await livePerson();
    const challenge = await deviceChallenge(key, "login");
    const shot = person.capture({ nonce: challenge });
    const unverified = await person.device.signCapture(challenge, shot.descriptor, { userVerified: false });
    expectRefused(await transact(key, login(person.subject_ref, { ...shot, device_assertion: unverified })), "user_not_verified");
    await expectNothingRecorded(shot.nonce);
  });

  it("a ceremony declined on the device (cancelled, or its biometric or PIN failed) reads user_not_verified, not device_missing", async () => {
    const { person, key, merchant } = await livePerson();
    const challenge = await deviceChallenge(key, "login");
    const shot = person.capture({ nonce: challenge });
    const res = await transact(key, login(person.subject_ref, { ...shot, device_assertion: DECLINED_CEREMONY }));
    expectRefused(res, "user_not_verified");
    expect(res.body.error).toMatch(/cancelled its prompt/);
    await expectNothingRecorded(shot.nonce);
    // An enrolment whose registration was declined likewise; the page's word refuses and never counts.
    const stranger = newStranger();
    const enrolling = stranger.capture({ nonce: await deviceChallenge(merchant.keys.pk_live, "enroll") });
    const enrol = await call("process-biovital-enrollment", {
      key: merchant.keys.pk_live,
      body: {
        consent: CONSENT,
        capture_nonce: enrolling.nonce,
        face_template: enrolling.descriptor,
        device_registration: DECLINED_CEREMONY,
      },
    });
    expectRefused(enrol, "user_not_verified");
  });

  it("refuses a ceremony on another origin, or for another RP ID", async () => {
    const { person, key } = await livePerson();
    for (const [knobs, reason] of [
      [{ origin: "https://phishing.example" }, "origin_mismatch"],
      [{ rpId: "phishing.example" }, "rp_id_mismatch"],
    ] as const) {
      const challenge = await deviceChallenge(key, "login");
      const shot = person.capture({ nonce: challenge });
      const signed = await person.device.signCapture(challenge, shot.descriptor, knobs);
      expectRefused(await transact(key, login(person.subject_ref, { ...shot, device_assertion: signed })), reason);
      await expectNothingRecorded(shot.nonce);
    }
  });

  it("refuses a sign-count regression and flags the credential", async () => {
    const { person, key } = await livePerson();
    const first = await person.signedCapture(key, "login");
    expect((await transact(key, login(person.subject_ref, first))).status).toBe(200);
    const challenge = await deviceChallenge(key, "login");
    const shot = person.capture({ nonce: challenge });
    // A clone of the authenticator signs with the counter the original already used.
    const cloned = await person.device.signCapture(challenge, shot.descriptor, { signCount: 1 });
    expectRefused(await transact(key, login(person.subject_ref, { ...shot, device_assertion: cloned })), "sign_count_regressed");
    await expectNothingRecorded(shot.nonce);
    const [row] =
      await testDb()`select sign_count_regressed_at from private.device_credentials where credential_id = ${person.device.credentialId}`;
    expect(row.sign_count_regressed_at).not.toBeNull();
  });

  it("enrols only with a passkey registered over the enrolment capture, stored with the identity", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.pk_live;
    const stranger = newStranger();
    const enroll = (body: Record<string, unknown>) => call("process-biovital-enrollment", { key, body: { consent: CONSENT, ...body } });

    const unsigned = stranger.capture({ nonce: await deviceChallenge(key, "enroll") });
    expectRefused(await enroll({ capture_nonce: unsigned.nonce, face_template: unsigned.descriptor }), "device_missing");
    const device = await SoftwareAuthenticator.create();
    const challenge = await deviceChallenge(key, "enroll");
    const shot = stranger.capture({ nonce: challenge });
    const changed = structuredClone(shot.descriptor);
    changed.face.embedding[1] += 1e-6;
    const overOther = await device.registerCapture(challenge, changed);
    expectRefused(
      await enroll({ capture_nonce: challenge, face_template: shot.descriptor, device_registration: overOther }),
      "descriptor_mismatch",
    );
    expect(
      (await testDb()`select count(*)::int as n from private.device_credentials where credential_id = ${device.credentialId}`)[0].n,
    ).toBe(0);

    const fresh = await deviceChallenge(key, "enroll");
    const good = stranger.capture({ nonce: fresh });
    const res = await enroll({
      capture_nonce: fresh,
      face_template: good.descriptor,
      device_registration: await device.registerCapture(fresh, good.descriptor),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.device_binding).toBe("synced");
    const [credential] = await testDb()`select d.attestation_verdict, d.backup_eligible, s.subject_ref from private.device_credentials d
      join private.subject_refs s on s.identity_id = d.identity_id where d.credential_id = ${device.credentialId}`;
    expect(credential).toEqual({ attestation_verdict: "none", backup_eligible: true, subject_ref: res.body.subject_ref });
  });

  it("/v1: a claim registers the device (proof version 2); a recognition and an attribute need its assertion", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_live;
    const stranger = newStranger();
    const device = await SoftwareAuthenticator.create();

    const plain = stranger.capture({ nonce: await deviceChallenge(key, "enroll") });
    const refused = await v1("/identity/claims", { key, body: { proof: encodeProof(plain.descriptor, CONSENT) } });
    expect({ ...errorOf(refused), reason: refused.body.reason }).toEqual({
      status: 403,
      code: "unauthorized_device",
      reason: "device_missing",
    });

    const challenge = await deviceChallenge(key, "enroll");
    const shot = stranger.capture({ nonce: challenge });
    const registration = await device.registerCapture(challenge, shot.descriptor);
    const claimed = await v1("/identity/claims", { key, body: { proof: encodeProof(shot.descriptor, CONSENT, { registration }) } });
    expect(claimed.status, claimed.text).toBe(201);
    expect(claimed.body.device_binding).toBe("synced");
    // The claim's capture row names the credential its registration made, as every capture that counted does.
    const [claimRow] = await testDb()`select c.device_binding, d.credential_id from private.captures c
      left join private.device_credentials d on d.id = c.device_id where c.capture_nonce = ${challenge}`;
    expect(claimRow).toEqual({ device_binding: "synced", credential_id: device.credentialId });

    const login = await deviceChallenge(key, "login");
    const seen = stranger.capture({ nonce: login });
    const unsignedRecognition = await v1("/identity/recognitions", { key, body: { proof: encodeProof(seen.descriptor) } });
    expect(errorOf(unsignedRecognition)).toEqual({ status: 403, code: "unauthorized_device" });
    const again = await deviceChallenge(key, "login");
    const seenAgain = stranger.capture({ nonce: again });
    const assertion = await device.signCapture(again, seenAgain.descriptor);
    const recognised = await v1("/identity/recognitions", {
      key,
      body: { proof: encodeProof(seenAgain.descriptor, undefined, { assertion }) },
    });
    expect(recognised.body).toMatchObject({ matched: true, facetoken: claimed.body.facetoken, device_binding: "synced" });

    const attribute = await deviceChallenge(key, "attribute");
    const asked = stranger.capture({ nonce: attribute });
    const signed = await device.signCapture(attribute, asked.descriptor);
    const answered = await v1("/identity/attributes", {
      key,
      idempotencyKey: `attr-${crypto.randomUUID()}`,
      body: {
        proof: encodeProof(asked.descriptor, undefined, { assertion: signed }),
        facetoken: claimed.body.facetoken,
        attribute: "document_verified",
      },
    });
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body).toMatchObject({ value: false, device_binding: "synced" });
  });
});

describe("a refused user verification on the hosted screen", () => {
  /** A live login session booted for `person`'s merchant, and its completion with `device_assertion`. */
  async function completedWith(
    key: string,
    person: Awaited<ReturnType<typeof enrollStranger>>,
    answer: (nonce: string, descriptor: unknown) => Promise<unknown>,
  ) {
    const session = await openSession(key, { action: "login" });
    const booted = await boot(session.session_token, { locale: "en" });
    expect(booted.status, booted.text).toBe(200);
    const nonce = booted.body.capture_nonce as string;
    const { descriptor } = person.capture({ nonce, light: true });
    const res = await screenCall(
      "complete",
      booted.body.screen_token,
      { capture_nonce: nonce, face_template: descriptor, device_assertion: await answer(nonce, descriptor) },
      { locale: "en" },
    );
    expect(res.status, res.text).toBe(200);
    const read = await readSession(key, session.session_id);
    return { outcome: res.body.outcome, result: read.body.result, nonce };
  }

  it("UV false, or the ceremony declined: the session ends refused user_not_verified, in the person's words, nothing approved", async () => {
    const { person, key } = await livePerson();
    for (const answer of [
      (nonce: string, descriptor: unknown) => person.device.signCapture(nonce, descriptor, { userVerified: false }),
      async () => DECLINED_CEREMONY,
    ]) {
      const { outcome, result, nonce } = await completedWith(key, person, answer);
      expect(outcome).toMatchObject({ approved: false, reason: "user_not_verified" });
      expect(outcome.user_message).toMatch(/did not confirm it was you: its fingerprint, face or PIN check was cancelled or did not pass/);
      expect(result).toMatchObject({ approved: false, reason: "user_not_verified", code: "UNAUTHORIZED_DEVICE" });
      await expectNothingRecorded(nonce);
    }
    // A completion with no device answer at all is still device_missing, in the words that name the way forward.
    const { outcome } = await completedWith(key, person, async () => undefined);
    expect(outcome).toMatchObject({ approved: false, reason: "device_missing" });
    expect(outcome.user_message).toMatch(/Use a device you registered/);
  });
});

describe("a person known at one merchant enrols at a second (live, hosted screen)", () => {
  const HOSTED_CONSENT = { version: "hosted-capture-1", retention_days: 365, accepted: true };

  /** A live enrol session at `key`'s merchant, booted: the screen's nonce and credential, and the ceremony served. */
  async function enrolScreen(key: string) {
    const session = await openSession(key, { action: "enroll" });
    const booted = await boot(session.session_token);
    expect(booted.status, booted.text).toBe(200);
    return { session, screen: booted.body as { capture_nonce: string; screen_token: string; passkey: any } };
  }

  it("signs with the passkey made at the first merchant: enrolled at the second, no second passkey, a pseudonym of its own", async () => {
    const { person } = await livePerson();
    const second = await merchantFactory("Second Shop");
    const { session, screen } = await enrolScreen(second.keys.sk_live);
    // The boot offers the registration and, first, an assertion by any passkey the device holds for the service.
    expect(screen.passkey).toMatchObject({ ceremony: "register", existing: { userVerification: "required", allowCredentials: [] } });
    const { descriptor } = person.capture({ nonce: screen.capture_nonce, light: true });
    const res = await screenCall("complete", screen.screen_token, {
      capture_nonce: screen.capture_nonce,
      face_template: descriptor,
      consent: HOSTED_CONSENT,
      device_assertion: await person.device.signCapture(screen.capture_nonce, descriptor),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.outcome, res.text).toMatchObject({ approved: true });
    const read = await readSession(second.keys.sk_live, session.session_id);
    expect(read.body.result).toMatchObject({ approved: true, device_binding: "synced" });
    const secondRef = read.body.result.subject_ref as string;
    expect(secondRef).not.toBe(person.subject_ref);
    // One person, one passkey, now held by both merchants.
    const rows =
      await testDb()`select d.credential_id, (select count(*)::int from private.subject_refs s where s.identity_id = d.identity_id) as refs,
      (select count(*)::int from private.device_credentials o where o.identity_id = d.identity_id) as devices
      from private.device_credentials d where d.credential_id = ${person.device.credentialId}`;
    expect(rows).toEqual([{ credential_id: person.device.credentialId, refs: 2, devices: 1 }]);
    // And the second merchant's next capture is signed with that passkey too.
    const shot = await person.signedCapture(second.keys.sk_live, "login");
    const signedIn = await transact(second.keys.sk_live, login(secondRef, shot));
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.body).toMatchObject({ status: "approved", device_binding: "synced" });
  });

  it("a new passkey registered by the known face instead is credential_unknown: a device is added by its own flow", async () => {
    const { person } = await livePerson();
    const second = await merchantFactory();
    const { screen } = await enrolScreen(second.keys.sk_live);
    const { descriptor } = person.capture({ nonce: screen.capture_nonce, light: true });
    const fresh = await SoftwareAuthenticator.create();
    const res = await screenCall("complete", screen.screen_token, {
      capture_nonce: screen.capture_nonce,
      face_template: descriptor,
      consent: HOSTED_CONSENT,
      device_registration: await fresh.registerCapture(screen.capture_nonce, descriptor),
    });
    expect(res.body.outcome, res.text).toMatchObject({ approved: false, reason: "credential_unknown" });
    expect(
      (await testDb()`select count(*)::int as n from private.device_credentials where credential_id = ${fresh.credentialId}`)[0].n,
    ).toBe(0);
  });
});

describe("device-bound presence (sandbox)", () => {
  it("still accepts the simulator's captures without a device, marked device_binding none", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const res = await transact(merchant.keys.sk_test, login(person.subject_ref, person.capture()));
    expect(res.status, res.text).toBe(200);
    expect(res.body.device_binding).toBe("none");
    const [row] = await testDb()`select device_id, device_binding from private.captures where id = ${res.body.transaction_id}`;
    expect(row).toEqual({ device_id: null, device_binding: "none" });
    const verified = await call("receipt-verify", { query: { code: res.body.receipt_code } });
    expect(verified.body).toMatchObject({ valid: true, device_binding: "none" });
  });
});

describe("device challenges: the minute cron's sweep", () => {
  it("deletes challenges expired for more than a day, and keeps the others", async () => {
    const merchant = await merchantFactory();
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    const old = await deviceChallenge(merchant.keys.sk_test, "login", twoDaysAgo);
    const fresh = await deviceChallenge(merchant.keys.sk_test, "login");
    const hashes = async () =>
      (await testDb()`select challenge_hash from private.device_challenges where merchant_id = ${merchant.merchant_id}`).map(
        (r) => r.challenge_hash,
      );
    expect(await hashes()).toHaveLength(2);
    const [{ swept }] = await testDb()`select public.device_challenges_sweep(jsonb_build_object('now', now())) as swept`;
    expect(swept.deleted).toBeGreaterThanOrEqual(1);
    const left = await hashes();
    expect(left).toHaveLength(1);
    const sha = async (text: string) => Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).toString("hex");
    expect(left[0]).toBe(await sha(fresh));
    expect(left[0]).not.toBe(await sha(old));
  });
});
