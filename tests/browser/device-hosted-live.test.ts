/**
 * The hosted screen in live mode with a passkey (issue 27), in Chromium on the fake camera lit by the
 * screen (lit-camera.ts) and a CDP virtual authenticator (ctap2, internal transport, resident keys,
 * user verification: passkeys.ts), the screen at http://localhost:<port> (an IP is no RP ID). One
 * person's device, one page, in order: an enrolment the service refuses leaves no passkey on the device
 * (the screen signals it unknown); an enrol session registers their passkey over the enrolment
 * capture (client/screen/passkey.ts, the options the boot served); a login session later signs the
 * capture with it; an authorize session approves a payment signed with it; a merchant's own page on
 * another origin (127.0.0.1) opens a login in a popup on the service's origin, where the passkey
 * signs, and is told the end by postMessage (D-643); an enrol session at a
 * second merchant signs with that same passkey and enrols the known face there (D-641); with user verification
 * failing, the next login is refused UNAUTHORIZED_DEVICE (`user_not_verified`) and nothing is approved. The merchant reads
 * `device_binding` on each result, and the database holds one credential, which signed each capture
 * recorded (an enrolment records its identity and credential, no capture row).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DECLINED_CEREMONY } from "../../shared/contracts/device";
import { type ScreenBoot, SESSION_ENDED_MESSAGE } from "../../shared/contracts/hosted-screen";
import { passport } from "../harness/documents";
import { merchantFactory, testDb } from "../harness/factories";
import { useOwnService } from "../harness/own-service";
import { authorizeBody, createSession, readSession } from "../harness/sessions";
import { type GuardedBrowser, openBrowser } from "./chromium";
import { captureThrough, outcomeOf, PHONE, readingFigures, screenUrl, sentCapture, startReading, waitForView } from "./hosted-screen";
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

/**
 * A merchant's own page at http://127.0.0.1:<port>: another origin than the service's (localhost),
 * as an SDK integration's page is. Its button opens the screen URL in its fragment in a popup, and
 * it keeps every message it receives with the sender's origin (`window.received`).
 */
async function merchantOwnPage(): Promise<{ server: Server; origin: string }> {
  const html = `<!doctype html><title>shop</title><button id="open">Confirm it is you</button><script>
    window.received = [];
    addEventListener("message", (event) => window.received.push({ origin: event.origin, data: event.data }));
    document.getElementById("open").onclick = () => window.open(decodeURIComponent(location.hash.slice(1)), "hauth", "popup,width=420,height=860");
  </script>`;
  const server = createServer((_, response) => response.writeHead(200, { "content-type": "text/html" }).end(html));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * The merchant's page opens `url` in a popup, which gets a platform authenticator holding the
 * person's passkeys: the same device (a virtual authenticator is one page's, so its credentials are
 * copied, private keys and counters). `close()` closes the popup and copies them back with the
 * counters the popup's signatures advanced: one device, one counter, or the next signature on the
 * first page would count as a clone's (sign_count_regressed).
 */
async function openPopup(shop: Page, origin: string, url: string): Promise<{ popup: Page; close(): Promise<void> }> {
  // A new document each time: a fragment change loads nothing, and the page's messages start empty.
  await shop.goto("about:blank");
  await shop.goto(`${origin}/#${encodeURIComponent(url)}`);
  const [popup] = await Promise.all([shop.waitForEvent("popup"), shop.click("#open")]);
  const device = await addVirtualAuthenticator(popup);
  const copy = async (from: VirtualAuthenticator, to: VirtualAuthenticator) => {
    await to.cdp.send("WebAuthn.clearCredentials", { authenticatorId: to.authenticatorId });
    for (const credential of await from.credentials()) {
      await to.cdp.send("WebAuthn.addCredential", { authenticatorId: to.authenticatorId, credential: credential as never });
    }
  };
  await copy(authenticator, device);
  return {
    popup,
    async close() {
      await copy(device, authenticator);
      await popup.close();
    },
  };
}

describe("the hosted screen in live mode, with the person's passkey", () => {
  it("an enrolment refused after its passkey was made leaves no passkey behind (the signal API): the next enrolment registers afresh", {
    timeout: TEST_TIMEOUT,
  }, async () => {
    // One number of the capture changed on its way: the passkey signed other numbers, so the service refuses.
    const tamper = (route: Route) => {
      const body = route.request().postDataJSON();
      body.face_template.face.embedding[0] += 1e-3;
      return route.continue({ postData: JSON.stringify(body) });
    };
    await page.route("**/hosted-capture/complete", tamper);
    try {
      const session = await openLive({ action: "enroll" });
      const sent = sentCapture(page);
      const outcome = await captureThrough(page, session.url, ACCEPTED_SECONDS);
      const completion = (await sent) as Awaited<typeof sent> & { device_registration?: any };
      // descriptor_mismatch; on a loaded machine the engine may refuse the reading first (av_desync): either way the
      // passkey was made before the service refused, which is what the screen must clean up.
      expect(outcome, readingFigures(completion.face_template)).toMatchObject({ kind: "refused" });
      expect(["descriptor_mismatch", "av_desync"]).toContain(outcome.reason);
      expect(completion.device_registration?.type).toBe("public-key");
    } finally {
      await page.unroute("**/hosted-capture/complete", tamper);
    }
    // The authenticator made the passkey, the service stored none, and the screen told the authenticator to forget it.
    expect(await authenticator.credentials()).toEqual([]);
    expect((await testDb()`select count(*)::int as n from private.device_credentials`)[0].n).toBe(0);
  });

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

  it("binds from the merchant's own origin: the screen in a popup on the service's origin, the passkey signs there, the opener told by postMessage", {
    timeout: TEST_TIMEOUT,
  }, async () => {
    const own = await merchantOwnPage();
    const shop = await browser.newPage({ locale: "en-GB", viewport: PHONE, allow: [own.origin] });
    try {
      await litCamera(shop.context(), media.light);
      const serviceOrigin = new URL(onLocalhost(service.own.server.url)).origin;
      const session = await openLive({ action: "login", opener_origin: own.origin });
      const opened = await openPopup(shop, own.origin, screenUrl(session.url, ACCEPTED_SECONDS));
      const { popup } = opened;
      const sent = sentCapture(popup);
      await waitForView(popup, "intro");
      await popup.click("#continue");
      await waitForView(popup, "capture");
      await startReading(popup);
      await waitForView(popup, "outcome", (ACCEPTED_SECONDS + 40) * 1000);
      const outcome = await outcomeOf(popup);
      const completion = (await sent) as Awaited<typeof sent> & { device_assertion?: any };
      expect(outcome.kind, `${outcome.message} ${readingFigures(completion.face_template)}`).toBe("approved");
      // The ceremony ran on the service's origin, for its relying party: the assertion says so.
      const clientData = JSON.parse(Buffer.from(completion.device_assertion.response.clientDataJSON, "base64url").toString());
      expect(clientData).toMatchObject({ type: "webauthn.get", origin: serviceOrigin });
      // The merchant's page was told, by the service's origin, and nothing more than the end.
      await shop.waitForFunction(() => (window as unknown as { received: unknown[] }).received.length > 0);
      const received = await shop.evaluate(() => (window as unknown as { received: unknown[] }).received);
      expect(received).toEqual([
        {
          origin: serviceOrigin,
          data: { type: SESSION_ENDED_MESSAGE, session_id: session.session_id, state: "completed", approved: true, reason: null },
        },
      ]);
      const read = await readSession(merchant.keys.sk_live, session.session_id);
      expect(read.body.result).toMatchObject({ approved: true, device_binding: "synced" });
      await opened.close();

      // A session named for another origin: the same page opening it hears nothing when it ends.
      const elsewhere = await openLive({ action: "login", opener_origin: "https://elsewhere.example" });
      const { popup: other } = await openPopup(shop, own.origin, elsewhere.url);
      await waitForView(other, "intro");
      await other.click("#continue");
      await waitForView(other, "capture");
      await other.click('[data-view="capture"] [data-cancel]');
      await waitForView(other, "outcome");
      expect((await outcomeOf(other)).kind).toBe("cancelled");
      // A marker the popup posts after its end reaches the page, and alone: messages of one window arrive in order.
      await other.evaluate(() => (window.opener as Window).postMessage("marker", "*"));
      await shop.waitForFunction(() => (window as unknown as { received: unknown[] }).received.length > 0);
      expect(await shop.evaluate(() => (window as unknown as { received: unknown[] }).received)).toEqual([
        { origin: serviceOrigin, data: "marker" },
      ]);
    } finally {
      await shop.context().close();
      await new Promise((done) => own.server.close(done));
    }
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
