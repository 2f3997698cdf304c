/**
 * The hosted screen's passkey request (client/screen/passkey.ts): the options are those the boot
 * served (shared/sessions/screen.ts, from shared/devices' registrationOptions and assertionOptions),
 * and the page adds only the WebAuthn challenge: the boot's capture nonce (the device challenge)
 * followed by the descriptor's digest, exactly as the server expects it (shared/devices/capture.ts).
 * An enrolment registers while every other action signs; the sandbox's boot serves no ceremony.
 */
import { describe, expect, it } from "vitest";
import { passkeyRequest } from "../../../client/screen/passkey";
import { assertionChallenge, descriptorDigest } from "../../../shared/contracts/device";
import { passkeyCeremonyOf, type ScreenPasskey, screenActions } from "../../../shared/contracts/hosted-screen";
import { assertionOptions } from "../../../shared/devices/assertion";
import { firstPartyRelyingParty } from "../../../shared/devices/ceremony";
import { registrationOptions } from "../../../shared/devices/registration";
import { randomBase64Url } from "../../../shared/lib/crypto";

const nonce = randomBase64Url(32);
const descriptor = { version: 2, capture_nonce: nonce, face: { embedding: [0.1, 0.2] } };
const rp = firstPartyRelyingParty("http://localhost:8787");

describe("the hosted screen's passkey request", () => {
  it("registers on an enrolment and signs on every other action", () => {
    for (const action of screenActions) {
      expect(passkeyCeremonyOf(action)).toBe(action === "enroll" || action === "claim" ? "register" : "assert");
    }
  });

  it("uses the served options, with the capture nonce and the descriptor's digest as the challenge", async () => {
    const expected = assertionChallenge(nonce, await descriptorDigest(descriptor));
    const userHandle = randomBase64Url(32);
    const register: ScreenPasskey = {
      ceremony: "register",
      options: await registrationOptions(rp, { userHandle, userName: "Acme" }),
      existing: await assertionOptions(rp),
    };
    const enrol = await passkeyRequest({ passkey: register, capture_nonce: nonce }, descriptor);
    // An enrolment first asks for a passkey the person holds already, over the same challenge (D-641).
    expect(enrol).toEqual({
      ceremony: "register",
      field: "device_registration",
      optionsJSON: { ...register.options, challenge: expected },
      existing: { field: "device_assertion", optionsJSON: { ...register.existing, challenge: expected } },
    });
    expect(enrol?.optionsJSON).toMatchObject({
      rp: { id: "localhost" },
      user: { id: userHandle, name: "Acme" },
      pubKeyCredParams: [-7, -8, -257].map((alg) => ({ type: "public-key", alg })),
      authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
      extensions: { credProps: true },
    });
    const assert: ScreenPasskey = { ceremony: "assert", options: await assertionOptions(rp) };
    const pay = await passkeyRequest({ passkey: assert, capture_nonce: nonce }, descriptor);
    expect(pay).toEqual({ ceremony: "assert", field: "device_assertion", optionsJSON: { ...assert.options, challenge: expected } });
    expect(pay?.optionsJSON).toMatchObject({ rpId: "localhost", timeout: 120_000, userVerification: "required", allowCredentials: [] });
    // One number changed is another challenge: the passkey signs exactly what is sent.
    const changed = await passkeyRequest({ passkey: assert, capture_nonce: nonce }, { ...descriptor, face: { embedding: [0.1, 0.21] } });
    expect(changed?.optionsJSON.challenge).not.toBe(expected);
  });

  it("asks nothing where the boot served no ceremony (the sandbox)", async () => {
    expect(await passkeyRequest({ passkey: null, capture_nonce: nonce }, descriptor)).toBeNull();
  });
});
