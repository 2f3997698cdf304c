/**
 * A passkey on a real authenticator protocol: Chromium's CDP virtual authenticator (ctap2, internal
 * transport, resident key, user verification) on a page served at http://localhost:<port> (an IP
 * is no RP ID). The page bundles @simplewebauthn/browser and shared/contracts/device.ts, as the
 * client will: it computes the descriptor's digest and the assertion's challenge itself, registers
 * a passkey over an enrollment capture's descriptor, and signs a payment capture's descriptor;
 * shared/devices/ verifies both against the database, and refuses the same assertion twice.
 * With RECORD_DEVICE_FIXTURES=1 it also records the ceremonies tests/domain/devices.test.ts replays
 * (tests/fixtures/devices/virtual-authenticator.json).
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { build } from "esbuild";
import { type Browser, type CDPSession, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { descriptorDigest } from "../../shared/contracts/device";
import { deviceAssertionOptions, verifyDeviceAssertion } from "../../shared/devices/assertion";
import type { RelyingParty } from "../../shared/devices/ceremony";
import { issueDeviceChallenge } from "../../shared/devices/challenges";
import { listDevices } from "../../shared/devices/devices";
import type { DeviceChallengePurpose } from "../../shared/devices/policy";
import { deviceRegistrationOptions, registerDevice } from "../../shared/devices/registration";
import { connect, type Sql } from "../../shared/kernel/db/client";
import type { Deps } from "../../shared/kernel/deps";
import type { Tenant } from "../../shared/kernel/principal";
import { simulateCapture } from "../../shared/simulator";
import {
  RECORDING_PATH,
  type RecordedCeremony,
  type RecordedDescriptor,
  type VirtualAuthenticatorRecording,
} from "../fixtures/devices/virtual-authenticator";
import { CHROMIUM, chromiumFlags } from "./chromium";
import { PLATFORM_AUTHENTICATOR } from "./passkeys";

const ROOT = resolve(import.meta.dirname, "../..");
const RECORD = process.env.RECORD_DEVICE_FIXTURES === "1";
const T0 = new Date("2027-06-01T09:00:00.000Z");

/** The page's script: the browser library and the contract, as the client will bundle them. */
async function pageScript(): Promise<string> {
  const result = await build({
    stdin: {
      contents: `
        import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
        import { assertionChallenge, descriptorDigest } from "./shared/contracts/device";
        Object.assign(window, { startAuthentication, startRegistration, assertionChallenge, descriptorDigest });
      `,
      resolveDir: ROOT,
      loader: "ts",
    },
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "warning",
  });
  return result.outputFiles[0].text;
}

/** A page at http://localhost:<port> that loads the script; the server and its origin. */
async function servePage(script: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    if (request.url === "/device.js") {
      response.writeHead(200, { "content-type": "text/javascript" }).end(script);
      return;
    }
    response.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><title>device</title><script src="/device.js"></script>');
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` };
}

let sql: Sql;
let browser: Browser;
let pages: { server: Server; origin: string }[];
let page: Page;
let cdp: CDPSession;
let rp: RelyingParty;

const deps = (now: Date = T0): Deps => ({ sql, now, locale: "en" });

beforeAll(async () => {
  sql = connect(inject("databaseUrl"));
  const script = await pageScript();
  pages = [await servePage(script), await servePage(script)];
  rp = { id: "localhost", name: "Human-authorisation service", origins: [pages[0].origin] };
  browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumFlags() });
  page = await browser.newPage();
  cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
});

afterAll(async () => {
  await browser?.close();
  for (const { server } of pages ?? []) server.close();
  await sql?.end();
});

/** A fresh authenticator of one person's device: ctap2 over the internal transport, resident keys, UV on. */
async function newAuthenticator(): Promise<string> {
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", { options: PLATFORM_AUTHENTICATOR });
  return authenticatorId;
}

async function seedTenant(): Promise<Tenant> {
  const merchantId = randomUUID();
  await sql.unsafe("insert into private.merchants (id, name) values ($1, $2)", [merchantId, `Device merchant ${merchantId.slice(0, 8)}`]);
  return { merchantId, environment: "test" };
}

async function seedIdentity(): Promise<string> {
  const id = randomUUID();
  await sql.unsafe("insert into private.identities (id, environment, created_at) values ($1, 'test', $2)", [id, T0]);
  return id;
}

/** A sandbox capture whose capture_nonce is the issued challenge, and its digest as the page computes it. */
async function captureFor(challenge: string, person: number, seed: number, on: Page = page) {
  const descriptor = simulateCapture({ person, seed, seconds: 5, nonce: challenge });
  const digest: string = await on.evaluate((d) => (window as any).descriptorDigest(d), descriptor as unknown);
  const recorded: RecordedDescriptor = { person, seed, seconds: 5, digest };
  return { descriptor, digest, recorded };
}

/** Issues a challenge, has the page register a passkey over a capture, and returns what the browser answered. */
async function recordRegistration(tenant: Tenant, person: number, seed: number): Promise<RecordedCeremony> {
  const { challenge } = await issueDeviceChallenge(deps(), tenant, "enroll");
  const { digest, recorded } = await captureFor(challenge, person, seed);
  const optionsJSON = await deviceRegistrationOptions(rp, { challenge, descriptorDigest: digest, userName: `person-${person}` });
  const response = await page.evaluate((options) => (window as any).startRegistration({ optionsJSON: options }), optionsJSON as unknown);
  return { purpose: "enroll", challenge, descriptor: recorded, response };
}

/** Issues a challenge, has `on` sign a capture's digest with the person's passkey, and returns the assertion. */
async function recordAssertion(
  tenant: Tenant,
  person: number,
  seed: number,
  options: { purpose?: DeviceChallengePurpose; on?: Page; userVerification?: "required" | "discouraged" } = {},
): Promise<RecordedCeremony> {
  const purpose = (options.purpose ?? "payment") as "payment" | "login";
  const on = options.on ?? page;
  const { challenge } = await issueDeviceChallenge(deps(), tenant, purpose);
  const { digest, recorded } = await captureFor(challenge, person, seed, on);
  // The page derives the WebAuthn challenge itself, from the contract: the server's options must agree.
  const derived: string = await on.evaluate(([c, d]) => (window as any).assertionChallenge(c, d), [challenge, digest]);
  const optionsJSON = await deviceAssertionOptions(rp, { challenge, descriptorDigest: digest });
  expect(optionsJSON.challenge).toBe(derived);
  const asked = { ...optionsJSON, userVerification: options.userVerification ?? optionsJSON.userVerification };
  const response = await on.evaluate((o) => (window as any).startAuthentication({ optionsJSON: o }), asked as unknown);
  return { purpose, challenge, descriptor: recorded, response };
}

describe("a passkey on Chromium's virtual authenticator, verified by shared/devices", () => {
  it("registers over an enrollment capture, signs a payment capture's descriptor, and counts each challenge once", {
    timeout: 60_000,
  }, async () => {
    await page.goto(pages[0].origin);
    const tenant = await seedTenant();
    const alice = await seedIdentity();
    const authenticator = await newAuthenticator();

    const registration = await recordRegistration(tenant, 7, 1);
    // The page and the server compute one digest of one capture.
    const descriptor = simulateCapture({ person: 7, seed: 1, seconds: 5, nonce: registration.challenge });
    expect(registration.descriptor.digest).toBe(await descriptorDigest(descriptor));
    // The challenge was consumed by nothing yet: registering consumes it.
    const registered = await registerDevice(deps(), tenant, {
      identityId: alice,
      purpose: "enroll",
      challenge: registration.challenge,
      descriptorDigest: registration.descriptor.digest,
      response: registration.response,
      rp,
    });
    expect(registered).toMatchObject({ ok: true, device: { device_binding: "synced", revoked_at: null } });
    if (!registered.ok) throw new Error(registered.reason);
    expect(registered.device.attestation.verdict).not.toBe("trusted");
    expect(await listDevices(deps(), "test", alice)).toEqual([registered.device]);

    const assertion = await recordAssertion(tenant, 7, 2);
    const verify = (ceremony: RecordedCeremony, now = T0) =>
      verifyDeviceAssertion(deps(now), tenant, {
        identityId: alice,
        purpose: ceremony.purpose,
        challenge: ceremony.challenge,
        descriptorDigest: ceremony.descriptor.digest,
        response: ceremony.response,
        rp,
      });
    const accepted = await verify(assertion);
    expect(accepted).toMatchObject({ ok: true, device_id: registered.device.device_id, device_binding: "synced" });
    expect(await verify(assertion)).toEqual({ ok: false, reason: "challenge_used" });
    const [used] = await listDevices(deps(), "test", alice);
    expect(used.last_used_at).toBe(T0.toISOString());

    if (RECORD) {
      const second = await recordAssertion(tenant, 7, 3, { purpose: "login" });
      await cdp.send("WebAuthn.setUserVerified", { authenticatorId: authenticator, isUserVerified: false });
      const unverified = await recordAssertion(tenant, 7, 4, { userVerification: "discouraged" });
      await cdp.send("WebAuthn.setUserVerified", { authenticatorId: authenticator, isUserVerified: true });
      // The same authenticator on the other origin's page (the virtual authenticator is per page).
      const other = await browser.newPage();
      const otherCdp = await other.context().newCDPSession(other);
      await otherCdp.send("WebAuthn.enable", { enableUI: false });
      const { authenticatorId: otherAuthenticator } = await otherCdp.send("WebAuthn.addVirtualAuthenticator", {
        options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
      });
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId: authenticator });
      await otherCdp.send("WebAuthn.addCredential", { authenticatorId: otherAuthenticator, credential: credentials[0] });
      await other.goto(pages[1].origin);
      const otherOrigin = await recordAssertion(tenant, 7, 5, { on: other });
      await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: authenticator });

      await newAuthenticator();
      const bobRegistration = await recordRegistration(tenant, 8, 1);
      const bobAssertion = await recordAssertion(tenant, 8, 2);
      const recording: VirtualAuthenticatorRecording = {
        recordedAt: new Date().toISOString(),
        chromium: browser.version(),
        rp: { id: rp.id, name: rp.name, origins: [...rp.origins] },
        otherOrigin: pages[1].origin,
        alice: { registration, assertions: [assertion, second], unverified, otherOrigin },
        bob: { registration: bobRegistration, assertion: bobAssertion },
      };
      writeFileSync(RECORDING_PATH, `${JSON.stringify(recording, null, 2)}\n`);
    }
  });
});
