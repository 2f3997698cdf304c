/**
 * Adding a second device by the approval of the first, and revoking one, in Chromium with a CDP
 * virtual authenticator per device (ctap2, internal transport, resident keys, user verification),
 * every page on the service's own origin as http://localhost:<port> (an IP is no RP ID; issue 27).
 * The first device's passkey is registered for an enrolled person through shared/devices; the new
 * device creates its passkey in its own browser context and asks (device-add/request); the first
 * device opens the approval page from the QR code's URL, and the person's tap signs the approval
 * (the page's own script); the new device reads `approved`, and the person's list holds both. The
 * person revokes the first device (device-manage); its next approval, of a third device, is refused.
 */
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { assertionChallenge, DEVICE_APPROVAL_CONTEXT, descriptorDigest } from "../../shared/contracts/device";
import { firstPartyRelyingParty } from "../../shared/devices/ceremony";
import { issueDeviceChallenge } from "../../shared/devices/challenges";
import { deviceRegistrationOptions, registerDevice } from "../../shared/devices/registration";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { identityOf } from "../harness/devices";
import { merchantFactory } from "../harness/factories";
import { enrollStranger } from "../harness/identity";
import { serviceUnderTest } from "../harness/service";
import { CHROMIUM, chromiumFlags } from "./chromium";
import { addVirtualAuthenticator, onLocalhost } from "./passkeys";

let sql: Sql;
let browser: Browser;
/** The service's origin as a browser may use it for WebAuthn: localhost, not 127.0.0.1. */
let origin: string;

beforeAll(async () => {
  sql = connect(inject("databaseUrl"));
  origin = new URL(onLocalhost(serviceUnderTest().baseUrl)).origin;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumFlags() });
});

afterAll(async () => {
  await browser?.close();
  await sql?.end();
});

/** One device: a browser context of its own with its own virtual authenticator, on a page of the service's origin. */
async function device(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await addVirtualAuthenticator(page);
  await page.goto(`${origin}/functions/v1/device-add/approve`);
  return { context, page };
}

/** navigator.credentials.create with the service's options (JSON), answered as startRegistration's JSON. */
function createPasskey(page: Page, options: unknown) {
  return page.evaluate(async (json: any) => {
    const bytes = (b: string) => Uint8Array.from(atob(b.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const b64url = (buffer: ArrayBuffer) =>
      btoa(String.fromCharCode(...new Uint8Array(buffer)))
        .replace(/\+/g, "-")
        .replace(/\//g, "_")
        .replace(/=+$/, "");
    const credential = (await navigator.credentials.create({
      publicKey: {
        ...json,
        challenge: bytes(json.challenge),
        user: { ...json.user, id: bytes(json.user.id) },
        excludeCredentials: [],
      },
    })) as PublicKeyCredential;
    const response = credential.response as AuthenticatorAttestationResponse;
    return {
      id: credential.id,
      rawId: b64url(credential.rawId),
      type: "public-key",
      response: {
        clientDataJSON: b64url(response.clientDataJSON),
        attestationObject: b64url(response.attestationObject),
        transports: response.getTransports(),
      },
      clientExtensionResults: {},
      authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    };
  }, options);
}

/** A same-origin request from the page (the service derives its relying party from the origin it is reached at). */
function fetchFrom(page: Page, path: string, init: { method?: string; key?: string; body?: unknown; bearer?: string } = {}) {
  return page.evaluate(
    async ({ path, init }) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (init.key) headers["x-service-api-key"] = init.key;
      if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
      headers["x-service-timestamp"] = String(Math.floor(Date.now() / 1000));
      headers["x-service-nonce"] = `n-${crypto.randomUUID()}`;
      const res = await fetch(path, {
        method: init.method ?? "POST",
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      return { status: res.status, body: await res.json() };
    },
    { path, init },
  );
}

/** The new device asks to be added: an add_device challenge, the service's options, its passkey, the request. */
async function askToBeAdded(page: Page, publishableKey: string) {
  const challenge = await fetchFrom(page, "/functions/v1/device-challenge", { key: publishableKey, body: { purpose: "add_device" } });
  expect(challenge.status).toBe(200);
  const options = await fetchFrom(page, "/functions/v1/device-add/options", {
    key: publishableKey,
    body: { challenge: challenge.body.challenge },
  });
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  expect(options.body.options.challenge).toBe(
    assertionChallenge(challenge.body.challenge, await descriptorDigest(DEVICE_APPROVAL_CONTEXT)),
  );
  const registration = await createPasskey(page, options.body.options);
  const requested = await fetchFrom(page, "/functions/v1/device-add/request", {
    key: publishableKey,
    body: { challenge: challenge.body.challenge, registration },
  });
  expect(requested.status, JSON.stringify(requested.body)).toBe(201);
  return requested.body as { addition_id: string; url: string };
}

/** The registered device opens the QR code's URL (on localhost) and the person taps Approve. */
async function approveOn(page: Page, url: string): Promise<string> {
  // A new document (the page may already be at the same path: a fragment change alone reloads nothing).
  await page.goto("about:blank");
  await page.goto(onLocalhost(url));
  await page
    .locator("#approve:not([disabled])")
    .waitFor({ timeout: 15_000 })
    .catch(async (error) => {
      throw new Error(`the approval page says: ${await page.locator("#state").textContent()} (${error})`);
    });
  await page.click("#approve");
  await page.waitForFunction(() => document.body.dataset.outcome !== undefined, undefined, { timeout: 15_000 });
  return page.evaluate(() => document.body.dataset.outcome as string);
}

describe("a second device by approval from the first, then a revocation", () => {
  it("adds the new device as the person's, lists both, and refuses the revoked device's next approval", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const identityId = identityOf(person.session_token);

    // The first device: its passkey registered for the person (as the enrollment ceremony will).
    const first = await device();
    const rp = firstPartyRelyingParty(origin);
    const deps = { sql, now: new Date(), locale: "en" as const };
    const tenant = { merchantId: merchant.merchant_id, environment: "test" as const };
    const { challenge } = await issueDeviceChallenge(deps, tenant, "enroll");
    const digest = await descriptorDigest({ enrolled: identityId });
    const options = await deviceRegistrationOptions(rp, { challenge, descriptorDigest: digest, userName: "first" });
    const registered = await registerDevice(deps, tenant, {
      identityId,
      purpose: "enroll",
      challenge,
      descriptorDigest: digest,
      response: await createPasskey(first.page, options),
      rp,
    });
    expect(registered.ok).toBe(true);
    const firstId = registered.ok ? registered.device.device_id : "";

    // The second device asks; the first approves on the service's page.
    const second = await device();
    const addition = await askToBeAdded(second.page, merchant.keys.pk_test);
    expect(addition.url).toContain("/functions/v1/device-add/approve#dac_");
    expect(await approveOn(first.page, addition.url)).toBe("approved");
    const status = await fetchFrom(second.page, `/functions/v1/device-add/status?addition_id=${addition.addition_id}`, {
      method: "GET",
      key: merchant.keys.pk_test,
    });
    expect(status.body).toMatchObject({ state: "approved", device: { registered_via: "device_approval" } });

    const listed = await fetchFrom(second.page, "/functions/v1/device-manage", { method: "GET", bearer: person.session_token });
    expect(listed.body.devices.map((d: { device_id: string }) => d.device_id)).toEqual([status.body.device.device_id, firstId]);

    // The person revokes the first device; from the next request on it approves nothing.
    const revoked = await fetchFrom(second.page, "/functions/v1/device-manage/revoke", {
      bearer: person.session_token,
      body: { device_id: firstId },
    });
    expect(revoked.status).toBe(200);
    const third = await device();
    const another = await askToBeAdded(third.page, merchant.keys.pk_test);
    expect(await approveOn(first.page, another.url)).toBe("credential_revoked");
    // The second device, now the person's, approves it instead.
    expect(await approveOn(second.page, another.url)).toBe("approved");
    for (const d of [first, second, third]) await d.context.close();
  });
});
