/**
 * The hosted screen's passkey request (client/screen/passkey.ts): the WebAuthn challenge is the
 * boot's capture nonce (the device challenge) followed by the descriptor's digest, exactly as the
 * server expects it (shared/devices/capture.ts), and an enrolment registers while every other
 * action signs; user verification is always required.
 */
import { describe, expect, it } from "vitest";
import { ceremonyOf, passkeyRequest } from "../../../client/screen/passkey";
import { assertionChallenge, descriptorDigest } from "../../../shared/contracts/device";
import type { ScreenBoot } from "../../../shared/contracts/hosted-screen";
import { screenActions } from "../../../shared/contracts/hosted-screen";
import { randomBase64Url } from "../../../shared/lib/crypto";

const nonce = randomBase64Url(32);
const boot = (action: ScreenBoot["action"]) => ({ action, capture_nonce: nonce, display_name: "Acme" }) as ScreenBoot;
const descriptor = { version: 2, capture_nonce: nonce, face: { embedding: [0.1, 0.2] } };

describe("the hosted screen's passkey request", () => {
  it("registers on an enrolment and signs on every other action", () => {
    for (const action of screenActions) expect(ceremonyOf(action)).toBe(action === "enroll" || action === "claim" ? "register" : "assert");
  });

  it("asks the passkey to sign the capture nonce and the descriptor's digest, under user verification, for the page's host", async () => {
    const expected = assertionChallenge(nonce, await descriptorDigest(descriptor));
    const enrol = await passkeyRequest(boot("enroll"), descriptor, "localhost");
    expect(enrol).toMatchObject({
      ceremony: "register",
      field: "device_registration",
      optionsJSON: {
        challenge: expected,
        rp: { id: "localhost" },
        authenticatorSelection: { residentKey: "required", userVerification: "required" },
      },
    });
    const pay = await passkeyRequest(boot("authorize"), descriptor, "localhost");
    expect(pay).toEqual({
      ceremony: "assert",
      field: "device_assertion",
      optionsJSON: { challenge: expected, rpId: "localhost", timeout: 120_000, userVerification: "required" },
    });
    // One number changed is another challenge: the passkey signs exactly what is sent.
    const changed = await passkeyRequest(boot("authorize"), { ...descriptor, face: { embedding: [0.1, 0.21] } }, "localhost");
    expect(changed.optionsJSON.challenge).not.toBe(expected);
  });
});
