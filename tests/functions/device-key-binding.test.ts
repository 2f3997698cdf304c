/**
 * A disclosure's key binding signed by a passkey, over HTTP (D-369, D-642): disclose-claims binds the
 * SD-JWT to the person's registered device key (`cnf.jwk`); the holder presents it with a KB-JWT
 * whose signature is a WebAuthn assertion over the SHA-256 of its signing input (a passkey signs
 * nothing else), and disclose-claims/verify checks it as it checks a capture's assertion: the
 * credential whose key `cnf` holds, registered and unrevoked, on the service's relying party, with
 * user verification. The standard JWS key binding (a key that signs raw) verifies through the same
 * route. The passkeys are software authenticators signing the real WebAuthn structures.
 */
import { describe, expect, it } from "vitest";
import { SoftwareCredential } from "../harness/authenticator";
import {
  disclose,
  discloseBody,
  disclosureFixture,
  presentWithKeyBinding,
  presentWithPasskey,
  publishedJwks,
  verifyPresentation,
  verifyPresented,
} from "../harness/consent";
import { seedDevice } from "../harness/devices";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";

const fields = [
  { key: "subject_ref", disclosure_type: "value" },
  { key: "age_over_18", disclosure_type: "zk_proof" },
];

/** A person with a fresh capture and a registered passkey, and a disclosure bound to that passkey's key. */
async function boundDisclosure() {
  const fixture = await disclosureFixture({ birthDate: "1990-06-15" });
  const { merchant, identityId } = fixture;
  const { credential, device } = await seedDevice(merchant.merchant_id, "test", identityId);
  const res = await disclose(merchant.keys.sk_test, {
    ...discloseBody(merchant, "", fields),
    biometric_attestation: { liveness_passed: true, device_pubkey_pem: credential.publicKeyPem },
  });
  expect(res.status, res.text).toBe(200);
  return { ...fixture, credential, device, sdJwt: res.body.sd_jwt as string, disclosureId: res.body.disclosure_id as string };
}

const nonceOf = () => `n-${crypto.randomUUID()}`;

describe("key binding by a passkey (disclose-claims/verify)", () => {
  it("a passkey's assertion over the KB-JWT's hash binds the presentation: verified, the device named, only what was disclosed", async () => {
    const { merchant, person, credential, device, sdJwt, disclosureId } = await boundDisclosure();
    const nonce = nonceOf();
    const presentation = await presentWithPasskey(sdJwt, { subject_ref: true }, credential, merchant.merchant_id, nonce);
    const header = JSON.parse(Buffer.from(presentation.split("~").at(-1)!.split(".")[0], "base64url").toString());
    expect(header).toEqual({ alg: "webauthn", typ: "kb+jwt" });
    const res = await verifyPresented(merchant.keys.sk_test, presentation, nonce);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      disclosure_id: disclosureId,
      key_binding: "webauthn",
      device_id: device.device_id,
      claims: { subject_ref: person.subject_ref },
    });
    // A standard SD-JWT verifier refuses the profile (its alg is no JOSE algorithm): why the service verifies it.
    await expect(verifyPresentation(presentation, await publishedJwks(), nonce)).rejects.toThrow();
    // The assertion is a use of the passkey, as a capture's is.
    const [used] =
      await testDb()`select sign_count::int, last_used_at from private.device_credentials where credential_id = ${credential.id}`;
    expect(used.sign_count).toBe(1);
    expect(used.last_used_at).not.toBeNull();
  });

  it("a key that signs raw binds it with a standard JWS KB-JWT, through the same route", async () => {
    const { merchant, person, credential, sdJwt } = await boundDisclosure();
    const nonce = nonceOf();
    const presentation = await presentWithKeyBinding(
      sdJwt,
      { subject_ref: true, age_over_18: true },
      credential,
      merchant.merchant_id,
      nonce,
    );
    const res = await verifyPresented(merchant.keys.sk_test, presentation, nonce);
    expect(res.body).toEqual(
      expect.objectContaining({
        valid: true,
        key_binding: "jws",
        device_id: null,
        claims: { subject_ref: person.subject_ref, age_over_18: true },
      }),
    );
  });

  it("refuses: another nonce, no user verification, another origin or RP ID, a KB-JWT changed after signing, a stale one", async () => {
    const { merchant, credential, sdJwt } = await boundDisclosure();
    const key = merchant.keys.sk_test;
    const nonce = nonceOf();
    const present = (knobs: Parameters<typeof presentWithPasskey>[5] = {}) =>
      presentWithPasskey(sdJwt, { subject_ref: true }, credential, merchant.merchant_id, nonce, knobs);
    const reasonOf = async (presentation: string, asked = nonce) => (await verifyPresented(key, presentation, asked)).body;

    expect(await reasonOf(await present(), nonceOf())).toEqual({ valid: false, reason: "nonce_mismatch" });
    expect(await reasonOf(await present({ userVerified: false }))).toEqual({ valid: false, reason: "user_not_verified" });
    expect(await reasonOf(await present({ origin: "https://phishing.example" }))).toEqual({ valid: false, reason: "origin_mismatch" });
    expect(await reasonOf(await present({ rpId: "phishing.example" }))).toEqual({ valid: false, reason: "rp_id_mismatch" });
    // The KB-JWT's payload changed after the passkey signed (another audience): the signature covers other bytes.
    const signed = await present();
    const kb = signed.split("~").at(-1)!;
    const [h, p, sig] = kb.split(".");
    const payload = JSON.parse(Buffer.from(p, "base64url").toString());
    const changed = Buffer.from(JSON.stringify({ ...payload, aud: "someone-else" })).toString("base64url");
    expect(await reasonOf(signed.replace(kb, `${h}.${changed}.${sig}`))).toEqual({ valid: false, reason: "challenge_mismatch" });
    const stale = await present({ iat: Math.floor(Date.now() / 1000) - 600 });
    expect(await reasonOf(stale)).toEqual({ valid: false, reason: "key_binding_stale" });
  });

  it("refuses another passkey of the same person, an unregistered one, a revoked one, and another merchant's disclosure", async () => {
    const { merchant, credential, identityId, sdJwt } = await boundDisclosure();
    const key = merchant.keys.sk_test;
    const nonce = nonceOf();
    const presentBy = (by: SoftwareCredential) => presentWithPasskey(sdJwt, { subject_ref: true }, by, merchant.merchant_id, nonce);

    const { credential: second } = await seedDevice(merchant.merchant_id, "test", identityId);
    expect((await verifyPresented(key, await presentBy(second), nonce)).body).toEqual({ valid: false, reason: "key_mismatch" });
    expect((await verifyPresented(key, await presentBy(new SoftwareCredential()), nonce)).body).toEqual({
      valid: false,
      reason: "credential_unknown",
    });
    const elsewhere = await merchantFactory();
    expect((await verifyPresented(elsewhere.keys.sk_test, await presentBy(credential), nonce)).body).toEqual({
      valid: false,
      reason: "not_this_merchants",
    });
    // Revoked through the devices' own RPC (what the person's device list calls), at the database's instant.
    await testDb()`select public.device_credential_revoke(jsonb_build_object('environment', 'test', 'now', now(),
      'identity_id', d.identity_id, 'device_id', d.id)) from private.device_credentials d where d.credential_id = ${credential.id}`;
    expect((await verifyPresented(key, await presentBy(credential), nonce)).body).toEqual({ valid: false, reason: "credential_revoked" });
  });

  it("takes only the merchant's secret key, and a strict body", async () => {
    const { merchant, credential, sdJwt } = await boundDisclosure();
    const nonce = nonceOf();
    const presentation = await presentWithPasskey(sdJwt, { subject_ref: true }, credential, merchant.merchant_id, nonce);
    expect(errorOf(await verifyPresented(merchant.keys.pk_test, presentation, nonce))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
    const extra = await verifyPresented(merchant.keys.sk_test, presentation, "short");
    expect(errorOf(extra)).toEqual({ status: 400, code: "INVALID_INPUT" });
  });
});
