/**
 * The hosted screen in live mode with a passkey (issue 27), in Chromium on the fake camera lit by the
 * screen (lit-camera.ts) and a CDP virtual authenticator (ctap2, internal transport, resident keys,
 * user verification: passkeys.ts), the screen at http://localhost:<port> (an IP is no RP ID). One
 * person's device, one page, in order: an enrol session registers their passkey over the enrolment
 * capture (client/screen/passkey.ts, the options the boot served); a login session later signs the
 * capture with it; an authorize session approves a payment signed with it; an enrol session at a
 * second merchant signs with that same passkey and enrols the known face there (D-641); with user verification
 * failing, the next login is refused UNAUTHORIZED_DEVICE (`user_not_verified`) and nothing is approved. The merchant reads
 * `device_binding` on each result, and the database holds one credential, which signed each capture
 * recorded (an enrolment records its identity and credential, no capture row).
 */
import type { Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DECLINED_CEREMONY } from "../../shared/contracts/device";
import type { ScreenBoot } from "../../shared/contracts/hosted-screen";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { useOwnService } from "../harness/own-service";
import { authorizeBody, createSession, readSession } from "../harness/sessions";
import { type GuardedBrowser, openBrowser } from "./chromium";
import { captureThrough, PHONE, readingFigures, sentCapture } from "./hosted-screen";
import { litCamera } from "./lit-camera";
import { addVirtualAuthenticator, onLocalhost, type VirtualAuthenticator } from "./passkeys";

const FUNCTIONS = ["hosted-session-create", "hosted-session-get", "hosted-capture", "merchant-theme-get"];
const ACCEPTED_SECONDS = 15;
const TEST_TIMEOUT = 180_000;

const service = useOwnService("hosted_live", FUNCTIONS);
const media = inject("media");
let browser: GuardedBrowser;
let merchant: Awaited<ReturnType<typeof merchantFactory>>;
let authenticator: VirtualAuthenticator;
let page: Awaited<ReturnType<GuardedBrowser["newPage"]>>;

beforeAll(async () => {
  browser = await openBrowser(onLocalhost(service.own.server.url), { media: media.reading, viewport: PHONE });
  merchant = await merchantFactory("Acme Live");
  page = await browser.newPage({ locale: "en-GB", viewport: PHONE });
  await litCamera(page, media.light);
  authenticator = await addVirtualAuthenticator(page);
});

afterAll(async () => {
  await browser?.close();
});

/** A live session (the merchant's live secret key) and its URL on localhost. */
async function openLive(body: Record<string, unknown>, key = merchant.keys.sk_live) {
  const res = await createSession(key, body);
  expect(res.status, res.text).toBe(201);
  const session = res.body as { session_id: string; url: string };
  return { ...session, url: onLocalhost(session.url) };
}

/**
 * One live session through the screen: the outcome shown, what the screen sent, and what the merchant
 * reads. `document` stands for a passport the person's device read over NFC (a browser cannot): it is
 * added to the completion as a native SDK sends it, beside the capture and its signature.
 */
async function throughLive(body: Record<string, unknown>, document?: unknown, key = merchant.keys.sk_live) {
  const session = await openLive(body, key);
  const sent = sentCapture(page);
  const booted = page.waitForResponse((response) => response.url().endsWith("/hosted-capture/boot"), { timeout: 60_000 });
  const withDocument = (route: Route) => route.continue({ postData: JSON.stringify({ ...route.request().postDataJSON(), document }) });
  if (document) await page.route("**/hosted-capture/complete", withDocument);
  const outcome = await captureThrough(page, session.url, ACCEPTED_SECONDS).finally(() =>
    page.unroute("**/hosted-capture/complete", withDocument),
  );
  const completion = (await sent) as Awaited<typeof sent> & { device_registration?: any; device_assertion?: any };
  const boot = (await (await booted).json()) as ScreenBoot;
  const read = await readSession(key, session.session_id);
  expect(read.status, read.text).toBe(200);
  return { session, boot, outcome, completion, result: read.body.result as Record<string, any> | null };
}

/** The live capture rows of the merchant, oldest first, with the credential that signed each. */
function liveCaptures() {
  return testDb()`select c.purpose, c.refusal_code, c.device_binding, d.credential_id from private.captures c
    left join private.device_credentials d on d.id = c.device_id
    where c.merchant_id = ${merchant.merchant_id} and c.environment = 'live' order by c.created_at`;
}

describe("the hosted screen in live mode, with the person's passkey", () => {
  it("enrols the person registering a passkey over the enrolment capture, with the options the boot served", {
    timeout: TEST_TIMEOUT,
  }, async () => {
    const { boot, outcome, completion, result } = await throughLive({ action: "enroll" });
    expect(outcome.kind, `${outcome.message} ${readingFigures(completion.face_template)}`).toBe("approved");
    // The service issued the ceremony: its relying party, a user handle, discoverable and verified.
    expect(boot.passkey).toMatchObject({
      ceremony: "register",
      options: {
        rp: { id: "localhost" },
        user: { id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
        authenticatorSelection: { residentKey: "required", userVerification: "required" },
      },
    });
    const userHandle = boot.passkey?.ceremony === "register" ? boot.passkey.options.user.id : "";
    expect(completion.device_registration?.type).toBe("public-key");
    expect(completion.device_registration?.clientExtensionResults).toEqual({ credProps: { rk: true } });
    expect(result).toMatchObject({ approved: true, device_binding: "synced" });
    // The authenticator holds a discoverable passkey for the service under the issued handle, and the service recorded it.
    const [credential] = await authenticator.credentials();
    expect(credential).toMatchObject({ rpId: "localhost", isResidentCredential: true });
    expect(Buffer.from(credential.userHandle ?? "", "base64").toString("base64url")).toBe(userHandle);
    const [stored] = await testDb()`select credential_id, user_handle, attestation_format, revoked_at from private.device_credentials
      where credential_id = ${completion.device_registration.id}`;
    expect(stored).toMatchObject({ user_handle: userHandle, attestation_format: expect.any(String), revoked_at: null });
  });

  it("comes back and signs in with the passkey", { timeout: TEST_TIMEOUT }, async () => {
    const { boot, outcome, completion, result } = await throughLive({ action: "login" });
    expect(outcome.kind, `${outcome.message} ${readingFigures(completion.face_template)}`).toBe("approved");
    expect(boot.passkey).toEqual({
      ceremony: "assert",
      options: expect.objectContaining({ rpId: "localhost", userVerification: "required" }),
    });
    expect(completion.device_assertion?.response?.signature).toEqual(expect.any(String));
    expect(result).toMatchObject({ approved: true, device_binding: "synced" });
  });

  it("approves a payment signed with the passkey", { timeout: TEST_TIMEOUT }, async () => {
    // A payment in live mode needs a verified identity document (function API rule 3): the person's passport, read by their device.
    const { outcome, completion, result } = await throughLive(authorizeBody(), await passport({ environment: "live" }));
    expect(outcome.kind, `${outcome.message} ${readingFigures(completion.face_template)}`).toBe("approved");
    expect(outcome.receipt).toEqual(expect.any(String));
    expect(result).toMatchObject({ approved: true, device_binding: "synced" });
    const [credential] = await authenticator.credentials();
    const captures = await liveCaptures();
    expect(captures.map((c) => [c.purpose, c.refusal_code, c.device_binding])).toEqual([
      ["login", null, "synced"],
      ["payment", null, "synced"],
    ]);
    expect(new Set(captures.map((c) => c.credential_id))).toEqual(
      new Set([Buffer.from(credential.credentialId, "base64").toString("base64url")]),
    );
  });

  it("enrols the same person at a second merchant with the passkey made at the first: no second passkey", {
    timeout: TEST_TIMEOUT,
  }, async () => {
    const second = await merchantFactory("Second Shop");
    const { boot, outcome, completion, result } = await throughLive({ action: "enroll" }, undefined, second.keys.sk_live);
    expect(outcome.kind, `${outcome.message} ${readingFigures(completion.face_template)}`).toBe("approved");
    expect(boot.passkey).toMatchObject({ ceremony: "register", existing: { rpId: "localhost", allowCredentials: [] } });
    // The screen asked for the passkey the device holds first; it signed, so nothing was registered.
    expect(completion.device_registration).toBeUndefined();
    expect(completion.device_assertion?.response?.signature).toEqual(expect.any(String));
    expect(result).toMatchObject({ approved: true, device_binding: "synced" });
    const held = await authenticator.credentials();
    expect(held).toHaveLength(1);
    const credentialId = Buffer.from(held[0].credentialId, "base64").toString("base64url");
    expect(completion.device_assertion.id).toBe(credentialId);
    const [row] =
      await testDb()`select (select count(*)::int from private.device_credentials o where o.identity_id = d.identity_id) as devices,
      (select count(*)::int from private.subject_refs s where s.identity_id = d.identity_id) as merchants
      from private.device_credentials d where d.credential_id = ${credentialId}`;
    expect(row).toEqual({ devices: 1, merchants: 2 });
  });

  it("refuses a sign-in whose user verification fails: UNAUTHORIZED_DEVICE, nothing recorded", { timeout: TEST_TIMEOUT }, async () => {
    await authenticator.setUserVerified(false);
    try {
      const before = (await liveCaptures()).length;
      const { outcome, completion, result } = await throughLive({ action: "login" });
      expect(outcome.kind, outcome.message).toBe("refused");
      // Chromium refuses the ceremony (NotAllowedError: user verification required, not given); the screen says so in the
      // assertion's place, and the refusal names it, in words that ask the person to complete their device's check.
      expect(outcome.reason).toBe("user_not_verified");
      expect(outcome.message).toMatch(/its fingerprint, face or PIN check was cancelled or did not pass/);
      expect(completion.device_assertion).toEqual(DECLINED_CEREMONY);
      expect(result).toMatchObject({ approved: false, reason: "user_not_verified", code: "UNAUTHORIZED_DEVICE" });
      expect((await liveCaptures()).length).toBe(before);
    } finally {
      await authenticator.setUserVerified(true);
    }
  });
});
