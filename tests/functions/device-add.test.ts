/**
 * device-add over HTTP (issue 27; docs/devices.md, "Adding a device"): a new device by the approval
 * of a registered one (request → pending → lookup → approve → approved; or expired), and by
 * re-proof with a live capture and the passport on record. Every ceremony is real WebAuthn from a
 * software authenticator (tests/harness/authenticator.ts) for the service's own relying party (its
 * base URL's host and origin), verified by the service. Refusals: a changed approval, a replayed
 * challenge, user verification off, another origin, an unknown credential, a revoked approver (the
 * request after its revocation), an expired addition; a passport not on the person's record, a
 * tampered one, a stranger's face, a registration over another descriptor. And when the person's
 * only device is revoked, the passport path still adds one.
 */
import { calculateJwkThumbprint } from "jose";
import { describe, expect, it } from "vitest";
import { approvalDigest, assertionChallenge, DEVICE_APPROVAL_CONTEXT, descriptorDigest } from "../../shared/contracts/device";
import { SoftwareCredential } from "../harness/authenticator";
import { identityOf, seedDevice } from "../harness/devices";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { enrollStranger, newStranger, transact } from "../harness/identity";
import { serviceUnderTest } from "../harness/service";

/** A minute from now, to the second (sessions are minted at the wall clock). */
const T0 = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const origin = () => new URL(serviceUnderTest().baseUrl).origin;

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;

async function issue(merchant: Merchant, now = T0): Promise<string> {
  const res = await call("device-challenge", {
    key: merchant.keys.pk_test,
    body: { purpose: "add_device" },
    now,
    headers: replayHeaders(now),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.challenge;
}

/** A person enrolled with `merchant`, with one registered device (`old`). */
async function personWithDevice(merchant: Merchant) {
  const person = await enrollStranger(merchant.keys.pk_test);
  const identityId = identityOf(person.session_token);
  const old = await seedDevice(merchant.merchant_id, "test", identityId, { now: T0 });
  return { person, identityId, old };
}

/** The new device's request: a passkey registered over an add_device challenge and the approval context. */
async function requestAddition(
  merchant: Merchant,
  credential = new SoftwareCredential(),
  options: { now?: Date; userVerified?: boolean } = {},
) {
  const now = options.now ?? T0;
  const challenge = await issue(merchant, now);
  const registration = credential.register(assertionChallenge(challenge, await descriptorDigest(DEVICE_APPROVAL_CONTEXT)), origin(), {
    userVerified: options.userVerified,
  });
  const res = await call("device-add/request", {
    key: merchant.keys.pk_test,
    body: { challenge, registration },
    now,
    headers: replayHeaders(now),
  });
  return { res, credential };
}

/** The approving device's side: lookup (a fresh challenge and what to sign), then its assertion, as `sign` makes it. */
async function approve(
  code: string,
  sign: (challenge: string, lookup: { challenge: string; approval_digest: string }) => unknown,
  options: { now?: Date } = {},
) {
  const lookup = await call("device-add/lookup", { body: { approval_code: code }, now: options.now ?? T0 });
  if (lookup.status !== 200) return lookup;
  const webauthnChallenge = assertionChallenge(lookup.body.challenge, lookup.body.approval_digest);
  return call("device-add/approve", {
    body: { approval_code: code, challenge: lookup.body.challenge, assertion: sign(webauthnChallenge, lookup.body) },
    now: options.now ?? T0,
  });
}

function listDevices(sessionToken: string, now = T0) {
  return call("device-manage", { headers: { authorization: `Bearer ${sessionToken}` }, now });
}

describe("device-add: approval by a registered device", () => {
  it("the options' user handle is recorded with the challenge and kept on the credential the approval registers", async () => {
    const merchant = await merchantFactory();
    const { old } = await personWithDevice(merchant);
    const challenge = await issue(merchant);
    const options = await call("device-add/options", { key: merchant.keys.pk_test, body: { challenge }, now: T0 });
    expect(options.status, options.text).toBe(200);
    const userHandle = options.body.options.user.id as string;
    expect(userHandle).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Asked again for the same challenge: the handle recorded first.
    const again = await call("device-add/options", { key: merchant.keys.pk_test, body: { challenge }, now: T0 });
    expect(again.body.options.user.id).toBe(userHandle);

    const credential = new SoftwareCredential();
    const registration = credential.register(options.body.options.challenge, origin());
    const requested = await call("device-add/request", {
      key: merchant.keys.pk_test,
      body: { challenge, registration },
      now: T0,
      headers: replayHeaders(T0),
    });
    expect(requested.status, requested.text).toBe(201);
    const approved = await approve(
      requested.body.approval_code,
      (webauthnChallenge) => old.credential.assert(webauthnChallenge, origin()),
      {
        now: at(10),
      },
    );
    expect(approved.status, approved.text).toBe(200);
    const [row] = await testDb()`select user_handle from private.device_credentials where credential_id = ${credential.id}`;
    expect(row).toEqual({ user_handle: userHandle });

    // The challenge is used now: no more options for it; nor for one never issued.
    for (const refusedChallenge of [challenge, "A".repeat(43)]) {
      const refused = await call("device-add/options", { key: merchant.keys.pk_test, body: { challenge: refusedChallenge }, now: at(20) });
      expect({ ...errorOf(refused), reason: refused.body.reason }).toEqual({
        status: 403,
        code: "UNAUTHORIZED_DEVICE",
        reason: refusedChallenge === challenge ? "challenge_used" : "challenge_unknown",
      });
    }
  });

  it("registers the new device as the approver's person: pending, looked up, signed, approved; the code then opens nothing", async () => {
    const merchant = await merchantFactory();
    const { person, old } = await personWithDevice(merchant);
    const { res: requested, credential } = await requestAddition(merchant);
    expect(requested.status, requested.text).toBe(201);
    expect(requested.body).toMatchObject({
      addition_id: expect.stringMatching(/^dad_[0-9a-f]{32}$/),
      state: "pending",
      expires_at: at(300).toISOString(),
      approved_at: null,
      device: null,
      approval_code: expect.stringMatching(/^dac_[A-Za-z0-9_-]{43}$/),
    });
    expect(requested.body.url).toBe(`${origin()}/functions/v1/device-add/approve#${requested.body.approval_code}`);
    expect(requested.body.qr_svg).toMatch(/^<svg/);

    const lookup = await call("device-add/lookup", { body: { approval_code: requested.body.approval_code }, now: at(10) });
    expect(lookup.status, lookup.text).toBe(200);
    expect(lookup.body.new_device).toMatchObject({ device_binding: "synced", attestation: { format: "none", verdict: "none" } });
    // What the approver signs names this addition and this credential, by id and key thumbprint.
    const row = { addition_id: requested.body.addition_id as string };
    const thumbprint = await calculateJwkThumbprint(credential.publicJwk);
    expect(lookup.body.approval_digest).toBe(
      await approvalDigest({ addition_id: row.addition_id, credential_id: credential.id, key_thumbprint: thumbprint }),
    );
    expect(lookup.body.options).toMatchObject({
      rpId: new URL(origin()).hostname,
      userVerification: "required",
      challenge: assertionChallenge(lookup.body.challenge, lookup.body.approval_digest),
    });
    const approved = await call("device-add/approve", {
      body: {
        approval_code: requested.body.approval_code,
        challenge: lookup.body.challenge,
        assertion: old.credential.assert(assertionChallenge(lookup.body.challenge, lookup.body.approval_digest), origin()),
      },
      now: at(20),
    });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({
      addition_id: row.addition_id,
      state: "approved",
      approved_at: at(20).toISOString(),
      approved_by: old.device.device_id,
      device: { registered_via: "device_approval", created_at: at(20).toISOString(), revoked_at: null },
    });

    const status = await call("device-add/status", { key: merchant.keys.pk_test, query: { addition_id: row.addition_id }, now: at(30) });
    expect(status.body).toMatchObject({ state: "approved", device: { device_id: approved.body.device.device_id } });
    const devices = await listDevices(person.session_token, at(30));
    expect(devices.body.devices.map((d: { device_id: string }) => d.device_id)).toEqual([
      approved.body.device.device_id,
      old.device.device_id,
    ]);

    // The new device now signs as the person: its key is registered (a disclosure finds it by key, D-368).
    expect(errorOf(await call("device-add/lookup", { body: { approval_code: requested.body.approval_code }, now: at(40) }))).toEqual({
      status: 404,
      code: "DEVICE_ADDITION_INVALID",
    });
    // Another merchant's key reads nothing of it.
    const other = await merchantFactory();
    expect(
      errorOf(await call("device-add/status", { key: other.keys.pk_test, query: { addition_id: row.addition_id }, now: at(30) })),
    ).toEqual({ status: 404, code: "not_found" });
  });

  it("refuses a signature over another addition, a replayed challenge, no user verification, another origin, an unknown key", async () => {
    const merchant = await merchantFactory();
    const { old } = await personWithDevice(merchant);
    const { res: requested } = await requestAddition(merchant);
    const code = requested.body.approval_code;
    const reasonOf = (res: { status: number; body: { code?: string; reason?: string } }) =>
      `${res.status} ${res.body.code} ${res.body.reason ?? ""}`.trim();

    // The approver signs the digest of another addition (another credential): the numbers signed are not these.
    const elsewhere = await approvalDigest({
      addition_id: requested.body.addition_id,
      credential_id: "x".repeat(43),
      key_thumbprint: "y".repeat(43),
    });
    expect(
      reasonOf(await approve(code, (_, lookup) => old.credential.assert(assertionChallenge(lookup.challenge, elsewhere), origin()))),
    ).toBe("403 UNAUTHORIZED_DEVICE descriptor_mismatch");
    expect(reasonOf(await approve(code, (challenge) => old.credential.assert(challenge, origin(), { userVerified: false })))).toBe(
      "403 UNAUTHORIZED_DEVICE user_not_verified",
    );
    expect(
      reasonOf(
        await approve(code, (challenge) => old.credential.assert(challenge, "https://evil.example", { rpId: new URL(origin()).hostname })),
      ),
    ).toBe("403 UNAUTHORIZED_DEVICE origin_mismatch");
    expect(reasonOf(await approve(code, (challenge) => new SoftwareCredential().assert(challenge, origin())))).toBe(
      "403 UNAUTHORIZED_DEVICE credential_unknown",
    );
    // A challenge is tried once: the same assertion again finds it used.
    const lookup = await call("device-add/lookup", { body: { approval_code: code }, now: T0 });
    const assertion = old.credential.assert(assertionChallenge(lookup.body.challenge, lookup.body.approval_digest), origin(), {
      userVerified: false,
    });
    await call("device-add/approve", { body: { approval_code: code, challenge: lookup.body.challenge, assertion }, now: T0 });
    const replayed = await call("device-add/approve", {
      body: { approval_code: code, challenge: lookup.body.challenge, assertion },
      now: T0,
    });
    expect(reasonOf(replayed)).toBe("403 UNAUTHORIZED_DEVICE challenge_used");
    // Still pending after every refusal: the right signature approves it.
    expect((await approve(code, (challenge) => old.credential.assert(challenge, origin()))).status).toBe(200);
  });

  it("a revoked device approves nothing from the next request on; an addition not approved in time expires", async () => {
    const merchant = await merchantFactory();
    const { person, old } = await personWithDevice(merchant);
    const { res: first } = await requestAddition(merchant);
    const revoked = await call("device-manage/revoke", {
      body: { device_id: old.device.device_id },
      headers: { authorization: `Bearer ${person.session_token}` },
      now: at(5),
    });
    expect(revoked.status, revoked.text).toBe(200);
    const refused = await approve(first.body.approval_code, (challenge) => old.credential.assert(challenge, origin()), { now: at(6) });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body).toMatchObject({ code: "UNAUTHORIZED_DEVICE", reason: "credential_revoked" });

    const { res: late } = await requestAddition(merchant, new SoftwareCredential(), { now: T0 });
    const tooLate = await approve(late.body.approval_code, (challenge) => old.credential.assert(challenge, origin()), { now: at(300) });
    expect(errorOf(tooLate)).toEqual({ status: 404, code: "DEVICE_ADDITION_INVALID" });
    const status = await call("device-add/status", {
      key: merchant.keys.pk_test,
      query: { addition_id: late.body.addition_id },
      now: at(300),
    });
    expect(status.body.state).toBe("expired");
  });

  it("refuses a registration without user verification, malformed bodies and a ttl out of range", async () => {
    const merchant = await merchantFactory();
    const { res } = await requestAddition(merchant, new SoftwareCredential(), { userVerified: false });
    expect(res.status, res.text).toBe(403);
    expect(res.body).toMatchObject({ code: "UNAUTHORIZED_DEVICE", reason: "user_not_verified" });
    const challenge = await issue(merchant);
    for (const body of [
      {},
      { challenge },
      { challenge: "short", registration: {} },
      { challenge, registration: {}, ttl_seconds: 5 },
      { challenge, registration: {}, x: 1 },
    ]) {
      const refused = await call("device-add/request", { key: merchant.keys.pk_test, body, now: T0, headers: replayHeaders(T0) });
      expect(errorOf(refused), JSON.stringify(body)).toEqual({ status: 400, code: "INVALID_INPUT" });
    }
    const malformed = await call("device-add/request", {
      key: merchant.keys.pk_test,
      body: { challenge, registration: { id: 1 } },
      now: T0,
      headers: replayHeaders(T0),
    });
    expect(malformed.body).toMatchObject({ code: "UNAUTHORIZED_DEVICE", reason: "response_malformed" });
    expect(errorOf(await call("device-add/lookup", { body: { approval_code: "dac_nothing" } }))).toEqual({
      status: 404,
      code: "DEVICE_ADDITION_INVALID",
    });
  });

  it("serves the approval page on the service's origin, unframeable, loading only its own script", async () => {
    const page = await call("device-add/approve");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.text).toContain('<script src="approve.js"');
    expect((await call("device-add/approve.js")).text).toContain("navigator.credentials.get");
  });
});

describe("device-add: re-proof with the passport on record and a live capture", () => {
  /** A person with a verified passport on record (recorded by a login capture that carried it). */
  async function personWithPassport(merchant: Merchant) {
    const person = await enrollStranger(merchant.keys.pk_test);
    const document = await passport();
    const shot = person.capture();
    const recorded = await transact(merchant.keys.sk_test, {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: person.subject_ref,
      capture_nonce: shot.nonce,
      face_template: shot.descriptor,
      document,
    });
    expect(recorded.status, recorded.text).toBe(200);
    return { person, document, identityId: identityOf(person.session_token) };
  }

  /** The new device's one request: the challenge as the capture's nonce, the registration over that capture. */
  async function reprove(
    merchant: Merchant,
    who: { capture(options?: { nonce?: string }): { descriptor: unknown } },
    document: unknown,
    options: { coverOther?: boolean } = {},
  ) {
    const challenge = await issue(merchant);
    const { descriptor } = who.capture({ nonce: challenge });
    const covered = options.coverOther ? who.capture({ nonce: challenge }).descriptor : descriptor;
    const credential = new SoftwareCredential();
    const registration = credential.register(assertionChallenge(challenge, await descriptorDigest(covered)), origin());
    const res = await call("device-add/passport", {
      key: merchant.keys.pk_test,
      body: { challenge, face_template: descriptor, document, registration },
      now: T0,
      headers: replayHeaders(T0),
    });
    return { res, credential };
  }

  it("registers the device when every other is lost: the only device revoked, the face and the passport on record prove the person", async () => {
    const merchant = await merchantFactory();
    const { person, document, identityId } = await personWithPassport(merchant);
    const { device } = await seedDevice(merchant.merchant_id, "test", identityId, { now: at(-60) });
    await call("device-manage/revoke", {
      body: { device_id: device.device_id },
      headers: { authorization: `Bearer ${person.session_token}` },
      now: T0,
    });

    const { res } = await reprove(merchant, person, document);
    expect(res.status, res.text).toBe(201);
    expect(res.body.device).toMatchObject({ registered_via: "document", revoked_at: null, created_at: T0.toISOString() });
    const devices = await listDevices(person.session_token, at(1));
    expect(
      devices.body.devices.map((d: { registered_via: string; revoked_at: string | null }) => [d.registered_via, d.revoked_at === null]),
    ).toEqual([
      ["document", true],
      ["enroll", false],
    ]);
  });

  it("refuses a passport not on the person's record, a tampered one, a stranger's face, and a registration over another capture", async () => {
    const merchant = await merchantFactory();
    const { person, document } = await personWithPassport(merchant);
    const codeOf = async (attempt: Promise<{ res: { status: number; body: { code: string; reason?: string } } }>) => {
      const { res } = await attempt;
      return `${res.status} ${res.body.code}${res.body.reason ? ` ${res.body.reason}` : ""}`;
    };
    expect(await codeOf(reprove(merchant, person, await passport()))).toBe("403 DOCUMENT_REQUIRED document_not_on_record");
    expect(await codeOf(reprove(merchant, person, await passport({ case: "tampered" })))).toBe(
      "403 DOCUMENT_REQUIRED document_data_group_mismatch",
    );
    const stranger = await enrollStranger(merchant.keys.pk_test);
    // The stranger holds the person's passport data (a copy of its chip), but not their face.
    expect(await codeOf(reprove(merchant, stranger, document))).toBe("403 DOCUMENT_REQUIRED document_not_on_record");
    expect(await codeOf(reprove(merchant, newStranger(), document))).toBe("403 FACE_MATCH_BELOW_THRESHOLD");
    expect(await codeOf(reprove(merchant, person, document, { coverOther: true }))).toBe("403 UNAUTHORIZED_DEVICE descriptor_mismatch");
    // And the right one still works.
    expect((await reprove(merchant, person, document)).res.status).toBe(201);
  });
});
