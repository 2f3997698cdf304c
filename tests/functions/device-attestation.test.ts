/**
 * Attestation over HTTP (docs/devices.md, "Attestation and trust roots"; D-560): a live enrolment
 * registers the person's passkey with the statement its authenticator made, and the service records
 * what the statement proved. Real statements: a CA made here (X.509, WebCrypto), attestation
 * certificates it issues, and packed (full and self), fido-u2f and tpm statements signed over the
 * very registration (tests/harness/attestation.ts). This file's service trusts the CA through
 * DEVICE_ATTESTATION_ROOTS, for packed, fido-u2f and tpm, and a second CA for tpm only.
 *
 * What is checked: a chain to a trusted root is `trusted` and, for a device-bound key, `hardware`;
 * a chain to a root trusted for another format, or to no trusted root, is `untrusted`; a statement
 * without a certificate is `self`; all three register (the policy). A statement whose signature
 * does not verify is `403 UNAUTHORIZED_DEVICE` `attestation_invalid`, with nothing recorded.
 */
import { describe, expect, it } from "vitest";
import { type AttestationPlan, createAttestationCa } from "../harness/attestation";
import { deviceChallenge, SoftwareAuthenticator } from "../harness/authenticator";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { CONSENT, newStranger } from "../harness/identity";
import { useOwnService } from "../harness/own-service";

const TRUSTED_CA = await createAttestationCa("Test Attestation Root");
const TPM_ONLY_CA = await createAttestationCa("Test TPM Root");
const UNKNOWN_CA = await createAttestationCa("Unknown Vendor Root");

useOwnService("device_attestation", ["process-biovital-enrollment", "device-challenge", "device-manage"], {
  overrides: {
    DEVICE_ATTESTATION_ROOTS: JSON.stringify({
      packed: [TRUSTED_CA.pem],
      "fido-u2f": [TRUSTED_CA.pem],
      tpm: [TRUSTED_CA.pem, TPM_ONLY_CA.pem],
    }),
  },
});

/** A live enrolment of a new person whose passkey (device-bound unless `synced`) registers with `plan`'s statement. */
async function enrolWith(plan: AttestationPlan | undefined, options: { synced?: boolean } = {}) {
  const merchant = await merchantFactory();
  const key = merchant.keys.pk_live;
  const person = newStranger();
  const device = await SoftwareAuthenticator.create({ synced: options.synced ?? false });
  const nonce = await deviceChallenge(key, "enroll");
  const { descriptor } = person.capture({ nonce });
  const res = await call("process-biovital-enrollment", {
    key,
    body: {
      capture_nonce: nonce,
      face_template: descriptor,
      consent: CONSENT,
      device_registration: await device.registerCapture(nonce, descriptor, { attestation: plan }),
    },
  });
  return { res, nonce };
}

/** The person's devices as device-manage lists them, with the session the enrolment gave. */
async function devicesOf(res: { headers: Headers }) {
  const listed = await call("device-manage", {
    method: "GET",
    key: null,
    headers: { authorization: `Bearer ${res.headers.get("x-session-token")}` },
  });
  expect(listed.status, listed.text).toBe(200);
  return listed.body.devices as { device_binding: string; attestation: { format: string; verdict: string }; aaguid: string }[];
}

describe("attestation trust roots (live enrolment)", () => {
  it.each([
    ["packed, full", { format: "packed", ca: TRUSTED_CA }, "7e57ae57-a11d-4e0f-a7de-e0a7ee57a7ed"],
    ["fido-u2f", { format: "fido-u2f", ca: TRUSTED_CA }, "00000000-0000-0000-0000-000000000000"],
    ["tpm", { format: "tpm", ca: TRUSTED_CA }, "7e57ae57-a11d-4e0f-a7de-e0a7ee57a7ed"],
  ] as const)("%s, chained to a trusted root: trusted, and a device-bound key is hardware", async (_, plan, aaguid) => {
    const { res } = await enrolWith(plan);
    expect(res.status, res.text).toBe(200);
    expect(res.body.device_binding).toBe("hardware");
    const [device] = await devicesOf(res);
    expect(device).toMatchObject({ device_binding: "hardware", attestation: { format: plan.format, verdict: "trusted" }, aaguid });
  });

  it("a trusted chain on a synced passkey is still synced: the key may leave the device", async () => {
    const { res } = await enrolWith({ format: "packed", ca: TRUSTED_CA }, { synced: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.device_binding).toBe("synced");
    expect((await devicesOf(res))[0].attestation).toEqual({ format: "packed", verdict: "trusted" });
  });

  it.each([
    ["packed, from a vendor nobody trusts", "untrusted", { format: "packed", ca: UNKNOWN_CA }],
    ["tpm, from a vendor nobody trusts", "untrusted", { format: "tpm", ca: UNKNOWN_CA }],
    ["packed, from a root trusted for tpm only", "untrusted", { format: "packed", ca: TPM_ONLY_CA }],
    ["packed, self (no certificate)", "self", { format: "packed" }],
    ["none", "none", undefined],
  ] as const)("%s: registers as %s, synced", async (_, verdict, plan) => {
    const { res } = await enrolWith(plan);
    expect(res.status, res.text).toBe(200);
    expect(res.body.device_binding).toBe("synced");
    const [device] = await devicesOf(res);
    expect(device).toMatchObject({ device_binding: "synced", attestation: { format: plan?.format ?? "none", verdict } });
  });

  it("a tpm statement from the tpm-only root is trusted", async () => {
    const { res } = await enrolWith({ format: "tpm", ca: TPM_ONLY_CA });
    expect(res.status, res.text).toBe(200);
    expect((await devicesOf(res))[0]).toMatchObject({ device_binding: "hardware", attestation: { format: "tpm", verdict: "trusted" } });
  });

  it.each([
    ["packed, full", { format: "packed", ca: TRUSTED_CA, brokenSignature: true }],
    ["packed, self", { format: "packed", brokenSignature: true }],
    ["fido-u2f", { format: "fido-u2f", ca: TRUSTED_CA, brokenSignature: true }],
    ["tpm", { format: "tpm", ca: TRUSTED_CA, brokenSignature: true }],
  ] as const)("%s with a signature over other bytes: refused attestation_invalid, nothing recorded", async (_, plan) => {
    const { res, nonce } = await enrolWith(plan);
    expect({ ...errorOf(res), reason: res.body.reason }, res.text).toEqual({
      status: 403,
      code: "UNAUTHORIZED_DEVICE",
      reason: "attestation_invalid",
    });
    expect(await testDb()`select id from private.captures where capture_nonce = ${nonce}`).toEqual([]);
  });
});
