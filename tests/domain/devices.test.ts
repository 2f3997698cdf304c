/**
 * The device rules at the operations (shared/devices/: issueDeviceChallenge, registerDevice,
 * verifyDeviceAssertion, listDevices, revokeDevice) against the migrated database, over real
 * WebAuthn ceremonies: registrations and assertions Chromium's CDP virtual authenticator made
 * (tests/fixtures/devices/virtual-authenticator.json, recorded by tests/browser/device-passkey.test.ts,
 * which also runs the same path live). Every refusal of issue 27 is here: another person's
 * credential, a changed descriptor, a replayed or expired challenge, a revoked credential, user
 * verification off, a wrong origin or RP ID, a counter that went back, another environment.
 * Time is the `now` each call passes. Last, the same verification bundled by the build's esbuild
 * path runs in workerd.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Miniflare } from "miniflare";
import { beforeEach, describe, expect, it } from "vitest";
import { bundle } from "../../scripts/local/build";
import { assertionChallenge, descriptorDigest } from "../../shared/contracts/device";
import { verifyDeviceAssertion } from "../../shared/devices/assertion";
import type { RelyingParty } from "../../shared/devices/ceremony";
import { issueDeviceChallenge } from "../../shared/devices/challenges";
import { type DeviceView, listDevices, revokeDevice } from "../../shared/devices/devices";
import { jwkOfCoseKey, keyThumbprint } from "../../shared/devices/keys";
import { type DeviceChallengePurpose, deviceBindingOf } from "../../shared/devices/policy";
import { registerDevice } from "../../shared/devices/registration";
import { rpc } from "../../shared/kernel/db/rpc";
import type { Environment, Tenant } from "../../shared/kernel/principal";
import { sha256Hex } from "../../shared/lib/crypto";
import { simulateCapture } from "../../shared/simulator";
import { type RecordedCeremony, virtualAuthenticatorRecording } from "../fixtures/devices/virtual-authenticator";
import { depsAt, domainDb, plusSeconds, seedTenant } from "../harness/domain";

const ROOT = resolve(import.meta.dirname, "../..");
const T0 = new Date("2027-06-01T09:00:00.000Z");
const recording = virtualAuthenticatorRecording();
const rp: RelyingParty = recording.rp;
const { alice, bob } = recording;

/** A person of `environment`, seeded in SQL. */
async function seedIdentity(environment: Environment = "test"): Promise<string> {
  const id = randomUUID();
  await domainDb().unsafe("insert into private.identities (id, environment, created_at) values ($1, $2, $3)", [id, environment, T0]);
  return id;
}

/**
 * The recorded ceremony's challenge as the service issued it to `tenant` at `at`: its hash stored by
 * the issue RPC itself (the recording fixed the value, so an earlier test's row of it goes first).
 */
async function issued(
  tenant: Tenant,
  ceremony: RecordedCeremony,
  at: Date = T0,
  purpose: DeviceChallengePurpose = ceremony.purpose,
): Promise<void> {
  const challengeHash = await sha256Hex(ceremony.challenge);
  await domainDb().unsafe("delete from private.device_challenges where challenge_hash = $1", [challengeHash]);
  await rpc(domainDb(), "device_challenge_issue", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: at.toISOString(),
    purpose,
    challenge_hash: challengeHash,
    ttl_seconds: 120,
  });
}

/**
 * Registers the recorded credential for `identityId` with its recorded challenge. A recorded
 * credential id is not fresh like every other seed, so the row an earlier test registered goes first.
 */
async function enrolled(tenant: Tenant, identityId: string, registration = alice.registration): Promise<DeviceView> {
  await domainDb().unsafe("delete from private.device_credentials where credential_id = $1", [registration.response.id as string]);
  await issued(tenant, registration);
  const registered = await registerDevice(depsAt(T0), tenant, {
    identityId,
    purpose: "enroll",
    challenge: registration.challenge,
    descriptorDigest: registration.descriptor.digest,
    response: registration.response,
    rp,
  });
  if (!registered.ok) throw new Error(`the recorded registration was refused: ${registered.reason}`);
  return registered.device;
}

/** Verifies a recorded assertion for `identityId`, its challenge issued at T0 unless `issue` is false. */
async function verify(
  tenant: Tenant,
  identityId: string,
  ceremony: RecordedCeremony,
  options: { now?: Date; digest?: string; rp?: RelyingParty; response?: unknown; issue?: boolean } = {},
) {
  if (options.issue !== false) await issued(tenant, ceremony);
  return verifyDeviceAssertion(depsAt(options.now ?? T0), tenant, {
    identityId,
    purpose: ceremony.purpose,
    challenge: ceremony.challenge,
    descriptorDigest: options.digest ?? ceremony.descriptor.digest,
    response: options.response ?? ceremony.response,
    rp: options.rp ?? rp,
  });
}

/** The recorded ceremony's descriptor, rebuilt by the simulator exactly as the page hashed it. */
function descriptorOf(ceremony: RecordedCeremony) {
  const { person, seed, seconds } = ceremony.descriptor;
  return simulateCapture({ person, seed, seconds, nonce: ceremony.challenge });
}

let tenant: Tenant;
let person: string;

beforeEach(async () => {
  tenant = await seedTenant();
  person = await seedIdentity();
});

describe("the recording", () => {
  it("holds what each ceremony signed: the simulator rebuilds every descriptor to the digest the page computed", async () => {
    const ceremonies = [alice.registration, ...alice.assertions, alice.unverified, alice.otherOrigin, bob.registration, bob.assertion];
    for (const ceremony of ceremonies) expect(await descriptorDigest(descriptorOf(ceremony))).toBe(ceremony.descriptor.digest);
    // Alice's authenticator counts: her second assertion's counter is above her first's.
    expect(rp.origins).not.toContain(recording.otherOrigin);
  });
});

describe("assertionChallenge", () => {
  it("is the issued challenge's 32 bytes then the descriptor digest's 32, as base64url; a malformed part throws", () => {
    const challenge = `${"A".repeat(42)}E`;
    const digest = "ab".repeat(32);
    const bytes = Buffer.from(assertionChallenge(challenge, digest), "base64url");
    expect(bytes).toHaveLength(64);
    expect(bytes.subarray(0, 32).toString("base64url")).toBe(challenge);
    expect(bytes.subarray(32).toString("hex")).toBe(digest);
    expect(() => assertionChallenge("short", digest)).toThrow(/32 bytes/);
    expect(() => assertionChallenge(challenge, digest.toUpperCase())).toThrow(/hex/);
  });
});

describe("issueDeviceChallenge and its single use", () => {
  it("issues 32 random bytes for two minutes, stores only their hash, and the first verification consumes it", async () => {
    const issuedNow = await issueDeviceChallenge(depsAt(T0), tenant, "payment");
    expect(issuedNow).toEqual({
      challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      purpose: "payment",
      expires_at: plusSeconds(T0, 120).toISOString(),
      ttl_seconds: 120,
    });
    const rows = await domainDb().unsafe("select * from private.device_challenges where merchant_id = $1", [tenant.merchantId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].challenge_hash).toBe(await sha256Hex(issuedNow.challenge));
    expect(JSON.stringify(rows)).not.toContain(issuedNow.challenge);
    // A malformed answer is refused by its shape, before the challenge is looked at.
    const malformed = () =>
      verifyDeviceAssertion(depsAt(T0), tenant, {
        identityId: person,
        purpose: "payment",
        challenge: issuedNow.challenge,
        descriptorDigest: "00".repeat(32),
        response: { id: "x" },
        rp,
      });
    expect(await malformed()).toEqual({ ok: false, reason: "response_malformed" });
    const [after] = await domainDb().unsafe("select consumed_at from private.device_challenges where merchant_id = $1", [
      tenant.merchantId,
    ]);
    expect(after.consumed_at).toBeNull();
  });

  it("is unknown to another merchant, another environment and another purpose, and used once taken", async () => {
    await enrolled(tenant, person);
    const [first] = alice.assertions;
    const other = await seedTenant();
    await issued(tenant, first);
    expect(await verify(other, person, first, { issue: false })).toEqual({ ok: false, reason: "challenge_unknown" });
    expect(await verify({ ...tenant, environment: "live" }, person, first, { issue: false })).toEqual({
      ok: false,
      reason: "challenge_unknown",
    });
    await issued(tenant, first, T0, "grant");
    expect(await verify(tenant, person, first, { issue: false })).toEqual({ ok: false, reason: "challenge_unknown" });
  });
});

describe("registerDevice", () => {
  it("records the credential with its COSE key, counter, attestation and flags, as a synced device of the person", async () => {
    const device = await enrolled(tenant, person);
    expect(device).toEqual({
      device_id: expect.stringMatching(/^dev_[0-9a-f]{32}$/),
      name: null,
      registered_via: "enroll",
      device_binding: "synced",
      attestation: { format: expect.any(String), verdict: expect.stringMatching(/^(self|untrusted|none)$/) },
      aaguid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      backup_eligible: expect.any(Boolean),
      backup_state: expect.any(Boolean),
      transports: ["internal"],
      created_at: T0.toISOString(),
      last_used_at: null,
      revoked_at: null,
    });
    const [row] = await domainDb().unsafe(
      "select identity_id, environment, credential_id, public_key, sign_count, key_thumbprint from private.device_credentials where credential_id = $1",
      [alice.registration.response.id as string],
    );
    expect(row).toMatchObject({ identity_id: person, environment: "test", credential_id: alice.registration.response.id });
    // A COSE_Key map (CBOR major type 5) holding an EC2 P-256 key: kty 2, alg -7.
    expect(row.public_key[0] >> 5).toBe(5);
    // Its RFC 7638 thumbprint as a JWK, which the browser's own SPKI of the key gives too.
    const jwk = jwkOfCoseKey(new Uint8Array(row.public_key));
    expect(jwk).toMatchObject({ kty: "EC", crv: "P-256" });
    expect(row.key_thumbprint).toBe(await keyThumbprint(jwk));
    expect(await listDevices(depsAt(T0), "test", person)).toEqual([device]);
  });

  it("refuses a replayed registration, the same credential for a second person, another descriptor, origin or RP ID", async () => {
    const registration = alice.registration;
    await enrolled(tenant, person);
    const again = (identityId: string, overrides: { digest?: string; rp?: RelyingParty; issue?: boolean } = {}) =>
      (overrides.issue === false ? Promise.resolve() : issued(tenant, registration)).then(() =>
        registerDevice(depsAt(T0), tenant, {
          identityId,
          purpose: "enroll",
          challenge: registration.challenge,
          descriptorDigest: overrides.digest ?? registration.descriptor.digest,
          response: registration.response,
          rp: overrides.rp ?? rp,
        }),
      );
    expect(await again(person, { issue: false })).toEqual({ ok: false, reason: "challenge_used" });
    expect(await again(await seedIdentity())).toEqual({ ok: false, reason: "credential_exists" });
    expect(await again(await seedIdentity("live"))).toEqual({ ok: false, reason: "identity_unknown" });
    expect(await again(person, { digest: "00".repeat(32) })).toEqual({ ok: false, reason: "descriptor_mismatch" });
    expect(await again(person, { rp: { ...rp, origins: [recording.otherOrigin] } })).toEqual({ ok: false, reason: "origin_mismatch" });
    expect(await again(person, { rp: { ...rp, id: "example.com" } })).toEqual({ ok: false, reason: "rp_id_mismatch" });
  });

  it("refuses an assertion offered as a registration", async () => {
    await issued(tenant, alice.registration);
    const registered = await registerDevice(depsAt(T0), tenant, {
      identityId: person,
      purpose: "enroll",
      challenge: alice.registration.challenge,
      descriptorDigest: alice.registration.descriptor.digest,
      response: alice.assertions[0].response,
      rp,
    });
    expect(registered).toEqual({ ok: false, reason: "response_malformed" });
  });
});

describe("verifyDeviceAssertion", () => {
  it("accepts the person's own device over exactly the descriptor sent, and records the use", async () => {
    const device = await enrolled(tenant, person);
    const accepted = await verify(tenant, person, alice.assertions[0], { now: plusSeconds(T0, 119) });
    expect(accepted).toEqual({
      ok: true,
      device_id: device.device_id,
      device_binding: "synced",
      sign_count: expect.any(Number),
      backup_state: device.backup_state,
    });
    const [used] = await listDevices(depsAt(T0), "test", person);
    expect(used.last_used_at).toBe(plusSeconds(T0, 119).toISOString());
  });

  it("refuses another person's credential", async () => {
    await enrolled(tenant, person);
    await enrolled(tenant, await seedIdentity(), bob.registration);
    expect(await verify(tenant, person, bob.assertion)).toEqual({ ok: false, reason: "credential_other_identity" });
  });

  it("refuses an assertion over another descriptor: one number of the capture changed", async () => {
    await enrolled(tenant, person);
    const [first] = alice.assertions;
    const changed = descriptorOf(first);
    changed.face.embedding[0] += 0.001;
    expect(await verify(tenant, person, first, { digest: await descriptorDigest(changed) })).toEqual({
      ok: false,
      reason: "descriptor_mismatch",
    });
  });

  it("refuses a replayed challenge and an expired one (at exactly two minutes)", async () => {
    await enrolled(tenant, person);
    const [first, second] = alice.assertions;
    expect(await verify(tenant, person, first)).toMatchObject({ ok: true });
    expect(await verify(tenant, person, first, { issue: false })).toEqual({ ok: false, reason: "challenge_used" });
    expect(await verify(tenant, person, second, { now: plusSeconds(T0, 120) })).toEqual({ ok: false, reason: "challenge_expired" });
  });

  it("refuses a revoked credential from the revocation on; revoking again keeps the first instant", async () => {
    const device = await enrolled(tenant, person);
    expect(await revokeDevice(depsAt(T0), "test", await seedIdentity(), device.device_id)).toBeNull();
    const revoked = await revokeDevice(depsAt(plusSeconds(T0, 10)), "test", person, device.device_id);
    expect(revoked).toEqual({ ...device, revoked_at: plusSeconds(T0, 10).toISOString() });
    expect(await revokeDevice(depsAt(plusSeconds(T0, 20)), "test", person, device.device_id)).toEqual(revoked);
    expect(await revokeDevice(depsAt(T0), "test", person, "dev_nothex")).toBeNull();
    expect(await verify(tenant, person, alice.assertions[0], { now: plusSeconds(T0, 10) })).toEqual({
      ok: false,
      reason: "credential_revoked",
    });
  });

  it("refuses an assertion made without user verification", async () => {
    await enrolled(tenant, person);
    expect(await verify(tenant, person, alice.unverified)).toEqual({ ok: false, reason: "user_not_verified" });
  });

  it("refuses an assertion from another origin, and one for another RP ID", async () => {
    await enrolled(tenant, person);
    expect(await verify(tenant, person, alice.otherOrigin)).toEqual({ ok: false, reason: "origin_mismatch" });
    expect(await verify(tenant, person, alice.assertions[0], { rp: { ...rp, id: "example.com" } })).toEqual({
      ok: false,
      reason: "rp_id_mismatch",
    });
  });

  it("refuses a counter that went back on an authenticator that counts, and flags the credential", async () => {
    await enrolled(tenant, person);
    const [first, second] = alice.assertions;
    expect(await verify(tenant, person, second)).toMatchObject({ ok: true });
    expect(await verify(tenant, person, first, { now: plusSeconds(T0, 5) })).toEqual({ ok: false, reason: "sign_count_regressed" });
    const [row] = await domainDb().unsafe(
      "select sign_count, sign_count_regressed_at from private.device_credentials where credential_id = $1",
      [first.response.id as string],
    );
    expect(row.sign_count_regressed_at).toEqual(plusSeconds(T0, 5));
    expect(Number(row.sign_count)).toBeGreaterThan(0);
  });

  it("refuses a credential registered in the other environment", async () => {
    await enrolled(tenant, person);
    const live = await seedTenant("live");
    expect(await verify(live, await seedIdentity("live"), alice.assertions[0])).toEqual({ ok: false, reason: "credential_unknown" });
  });

  it("refuses a signature that is not over what was sent: another assertion's real signature", async () => {
    await enrolled(tenant, person);
    const [first, second] = alice.assertions;
    const response = first.response as { response: Record<string, string> };
    const swapped = { ...response, response: { ...response.response, signature: (second.response as typeof response).response.signature } };
    expect(await verify(tenant, person, first, { response: swapped })).toEqual({ ok: false, reason: "signature_invalid" });
  });
});

describe("deviceBindingOf", () => {
  it("gives hardware only to a key that cannot leave its authenticator and whose attestation chains to a pinned root", () => {
    expect(deviceBindingOf({ backup_eligible: false, attestation_verdict: "trusted" })).toBe("hardware");
    expect(deviceBindingOf({ backup_eligible: true, attestation_verdict: "trusted" })).toBe("synced");
    for (const verdict of ["self", "untrusted", "none"] as const)
      expect(deviceBindingOf({ backup_eligible: false, attestation_verdict: verdict })).toBe("synced");
  });
});

describe("in workerd", () => {
  it("@simplewebauthn/server, bundled as the build bundles a function, verifies the registration and an assertion on WebCrypto", {
    timeout: 60_000,
  }, async () => {
    const dir = join(ROOT, "dist", "device-workerd-check");
    await mkdir(dir, { recursive: true });
    const entry = join(dir, "entry.ts");
    await writeFile(
      entry,
      `import { verifyAuthenticationResponse, verifyRegistrationResponse } from "@simplewebauthn/server";
       import { attestationVerdictOf } from "${join(ROOT, "shared/devices/attestation.ts")}";
       import { assertionChallenge } from "${join(ROOT, "shared/contracts/device.ts")}";
       export default {
         async fetch(request) {
           const { rp, registration, assertion } = await request.json();
           const registered = await verifyRegistrationResponse({
             response: registration.response,
             expectedChallenge: assertionChallenge(registration.challenge, registration.descriptor.digest),
             expectedOrigin: rp.origins, expectedRPID: rp.id, requireUserVerification: true,
           });
           const verified = await verifyAuthenticationResponse({
             response: assertion.response,
             expectedChallenge: assertionChallenge(assertion.challenge, assertion.descriptor.digest),
             expectedOrigin: rp.origins, expectedRPID: rp.id, requireUserVerification: true,
             credential: { ...registered.registrationInfo.credential, counter: 0 },
           });
           return Response.json({
             registered: registered.verified,
             attestation: await attestationVerdictOf(registration.response.response.attestationObject),
             verified: verified.verified,
             userVerified: verified.authenticationInfo.userVerified,
           });
         },
       };`,
    );
    const outfile = join(dir, "worker.js");
    await bundle(entry, outfile);
    const wrangler = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    const mf = new Miniflare({
      modules: true,
      scriptPath: outfile,
      compatibilityDate: /compatibility_date = "([^"]+)"/.exec(wrangler)![1],
      compatibilityFlags: JSON.parse(/compatibility_flags = (\[[^\]]*\])/.exec(wrangler)![1]),
    });
    try {
      const answer = await mf.dispatchFetch("http://worker/", {
        method: "POST",
        body: JSON.stringify({ rp, registration: alice.registration, assertion: alice.assertions[0] }),
      });
      expect(await answer.json()).toEqual({
        registered: true,
        attestation: { format: expect.any(String), verdict: expect.any(String) },
        verified: true,
        userVerified: true,
      });
    } finally {
      await mf.dispose();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
