/**
 * The person's page over HTTP: the passkey sign-in (docs/decisions.md, D-601, D-602) with the
 * software authenticator (a discoverable credential whose user handle is the one the service issued
 * at registration), every refusal the issue lists, the lockout on the service's clock; and the
 * rate-limit keys of the sign-in (D-600): persons behind one client address do not spend each
 * other's budget for the finish.
 */
import { describe, expect, it } from "vitest";
import { SoftwareCredential, serviceRelyingParty } from "../harness/authenticator";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf, freshIp } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { assertWith, Browser, newUserHandle, passkeyStart, personWithPasskey, proveOnScreen } from "../harness/me";

describe("me: the passkey sign-in", () => {
  it("names the person by the passkey's user handle; the screen for that person alone confirms the face; proof passkey", async () => {
    const shop = await merchantFactory("Corner shop");
    const { person, identityId, userHandle, credential, device } = await personWithPasskey(shop);
    const browser = new Browser();
    const started = await passkeyStart(browser, credential, { userHandle });
    expect(started.status, started.text).toBe(201);
    expect(started.body).toMatchObject({ session_id: expect.any(String), url: expect.stringContaining("#") });

    // The screen's session is for this person alone: its facetoken is their pseudonym at the merchant that holds them.
    const [screen] = await testDb()`select s.merchant_id, s.facetoken, p.device_id from private.hosted_sessions s
      join private.person_sign_ins p on p.session_id = s.id where s.merchant_id = ${shop.merchant_id}`;
    expect(screen).toMatchObject({ merchant_id: shop.merchant_id, facetoken: person.subject_ref });
    expect(screen.device_id).not.toBeNull();

    expect((await proveOnScreen(started.body.url, person)).body).toMatchObject({ state: "completed", outcome: { approved: true } });
    const finished = await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id } });
    expect(finished.status, finished.text).toBe(200);
    browser.csrf = finished.body.csrf_token;
    expect((await browser.call("/devices")).body.devices.map((d: { device_id: string }) => d.device_id)).toEqual([device.device_id]);
    const [session] = await testDb()`select proof, device_id, identity_id from private.person_sessions
      where identity_id = ${identityId} order by created_at desc limit 1`;
    expect(session).toMatchObject({ proof: "passkey", identity_id: identityId });
    expect(session.device_id).toBe(screen.device_id);
  }, 120_000);

  it("refuses an unknown credential, a revoked one, a wrong or missing user handle, UV off, a replayed or another browser's challenge", async () => {
    const shop = await merchantFactory();
    const { userHandle, credential } = await personWithPasskey(shop);
    const refusalOf = async (answer: Awaited<ReturnType<typeof passkeyStart>>) => ({ ...errorOf(answer), reason: answer.body.reason });
    const browser = new Browser();

    expect(await refusalOf(await passkeyStart(browser, new SoftwareCredential(), { userHandle }))).toEqual({
      status: 403,
      code: "UNAUTHORIZED_DEVICE",
      reason: "credential_unknown",
    });
    expect(await refusalOf(await passkeyStart(browser, credential, { userHandle: newUserHandle() }))).toMatchObject({
      reason: "user_handle_mismatch",
    });
    expect(await refusalOf(await passkeyStart(browser, credential, { userHandle: null }))).toMatchObject({
      reason: "user_handle_mismatch",
    });
    expect(await refusalOf(await passkeyStart(browser, credential, { userHandle, userVerified: false }))).toMatchObject({
      reason: "user_not_verified",
    });

    // Replayed: the same challenge and assertion a second time.
    const { challenge, assertion } = await assertWith(browser, credential, { userHandle });
    const first = await browser.call("/passkey/sign-in", { body: { environment: "test", challenge, assertion } });
    expect(first.status, first.text).toBe(201);
    const replayed = await browser.call("/passkey/sign-in", { body: { environment: "test", challenge, assertion } });
    expect(await refusalOf(replayed)).toMatchObject({ status: 403, reason: "challenge_used" });
    // Another browser (another sign-in cookie) cannot use this browser's challenge.
    const other = await assertWith(browser, credential, { userHandle });
    const elsewhere = new Browser();
    const stolen = await elsewhere.call("/passkey/sign-in", { body: { environment: "test", ...other } });
    expect(await refusalOf(stolen)).toMatchObject({ status: 403, reason: "challenge_unknown" });
    // The other environment's passkeys are not these.
    const live = await browser.call("/passkey/options", { body: { environment: "live" } });
    const rp = serviceRelyingParty();
    const inLive = await browser.call("/passkey/sign-in", {
      body: {
        environment: "live",
        challenge: live.body.options.challenge,
        assertion: credential.assert(live.body.options.challenge, rp.origins[0], { rpId: rp.id, userHandle }),
      },
    });
    expect(await refusalOf(inLive)).toMatchObject({ status: 403, reason: "credential_unknown" });

    // Revoked: refused from the revocation on.
    await testDb()`update private.device_credentials set revoked_at = now() where credential_id = ${credential.id}`;
    expect(await refusalOf(await passkeyStart(browser, credential, { userHandle }))).toMatchObject({ reason: "credential_revoked" });
    expect(errorOf(await browser.call("/passkey/sign-in", { body: { environment: "test", challenge: "x", assertion: {} } }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
  }, 120_000);

  it("refuses another person's face on the passkey's screen; five refusals lock the passkey for fifteen minutes", async () => {
    const shop = await merchantFactory();
    const { person, userHandle, credential } = await personWithPasskey(shop);
    const somebodyElse = await enrollStranger(shop.keys.pk_test);
    const at = new Date(Date.now() + 3_600_000);
    const browser = new Browser();

    // The passkey names the person; another person's face on its screen is refused, and signs nobody in.
    const started = await passkeyStart(browser, credential, { userHandle, now: at });
    expect(started.status, started.text).toBe(201);
    expect((await proveOnScreen(started.body.url, somebodyElse, at)).body).toMatchObject({ state: "failed" });
    const finished = await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id }, now: at });
    expect(finished.body).toMatchObject({ code: "SIGN_IN_FAILED", reason: "refused" });
    // Asked again, the same refusal is not counted twice.
    await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id }, now: at });

    // Four more refusals (UV off) make five within fifteen minutes: the fifth answers the lock.
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await passkeyStart(browser, credential, { userHandle, userVerified: false, now: at })).body.reason).toBe("user_not_verified");
    }
    const fifth = await passkeyStart(browser, credential, { userHandle, userVerified: false, now: at });
    expect(errorOf(fifth)).toEqual({ status: 429, code: "RATE_LIMITED" });
    expect(fifth.body.retry_after_seconds).toBe(900);
    // Locked: even a good assertion is refused, nothing verified, until fifteen minutes after the fifth refusal.
    const during = await passkeyStart(browser, credential, { userHandle, now: new Date(at.getTime() + 14 * 60_000) });
    expect(errorOf(during)).toEqual({ status: 429, code: "RATE_LIMITED" });
    expect(during.body.retry_after_seconds).toBe(60);
    const after = await passkeyStart(browser, credential, { userHandle, now: new Date(at.getTime() + 15 * 60_000 + 1000) });
    expect(after.status, after.text).toBe(201);
    expect((await proveOnScreen(after.body.url, person, new Date(at.getTime() + 15 * 60_000 + 2000))).body.state).toBe("completed");
    const signedIn = await browser.call("/sign-in/finish", {
      body: { session_id: after.body.session_id },
      now: new Date(at.getTime() + 15 * 60_000 + 3000),
    });
    expect(signedIn.status, signedIn.text).toBe(200);
  }, 180_000);
});

describe("me: the sign-in's rate-limit keys", () => {
  it("counts the finish per sign-in: two persons behind one address poll past sixty a minute; one sign-in's polls are limited", async () => {
    const [shop, travel] = await Promise.all([merchantFactory(), merchantFactory()]);
    const address = freshIp();
    const household = [new Browser(address), new Browser(address)];
    const started = [
      await household[0].call("/sign-in", { body: { merchant_id: shop.merchant_id, environment: "test" } }),
      await household[1].call("/sign-in", { body: { merchant_id: travel.merchant_id, environment: "test" } }),
    ];
    for (const one of started) expect(one.status, one.text).toBe(201);
    // Each page asks 40 times a minute while its screen is open: 2 × 35 = 70 from one address, all still pending.
    for (let poll = 0; poll < 35; poll++) {
      const answers = await Promise.all(
        household.map((browser, i) => browser.call("/sign-in/finish", { body: { session_id: started[i].body.session_id } })),
      );
      for (const answer of answers) expect(errorOf(answer)).toEqual({ status: 409, code: "SIGN_IN_PENDING" });
    }
    // One sign-in alone: its 61st ask in the minute is refused.
    const codes: number[] = [];
    for (let poll = 35; poll < 61; poll++) {
      codes.push((await household[0].call("/sign-in/finish", { body: { session_id: started[0].body.session_id } })).status);
    }
    expect(codes.slice(0, 25).every((status) => status === 409)).toBe(true);
    expect(codes.at(-1)).toBe(429);
  }, 120_000);
});
