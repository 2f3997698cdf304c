/**
 * The hosted screen's passkey ceremony over its capture (docs/devices.md; docs/decisions.md, D-348,
 * D-485): in live mode the capture counts only signed on the person's device. The boot serves the
 * ceremony (`boot.passkey`: register the person's first passkey on an enrolment, sign with one of
 * theirs otherwise) with its WebAuthn options as the service issued them; the page adds only the
 * challenge, assertionChallenge(capture nonce, descriptorDigest(descriptor)) from the shared
 * contract, so the passkey signs exactly the numbers the completion sends. An enrolment first asks
 * for a passkey the person holds already (`existing`: one made at another merchant), and registers
 * one only when the device has none (D-641). In the sandbox the boot serves none and the capture is
 * sent unsigned.
 */

import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { assertionChallenge, descriptorDigest } from "../../shared/contracts/device";
import type { ScreenBoot } from "../../shared/contracts/hosted-screen";

/**
 * The options of @simplewebauthn/browser's startRegistration or startAuthentication for this
 * capture, and the body field its answer goes in; null when the boot served no ceremony.
 */
export async function passkeyRequest(boot: Pick<ScreenBoot, "passkey" | "capture_nonce">, descriptor: unknown) {
  const { passkey } = boot;
  if (!passkey) return null;
  const challenge = assertionChallenge(boot.capture_nonce, await descriptorDigest(descriptor));
  if (passkey.ceremony === "register") {
    // The served options are the service's (shared/devices/registration.ts#registrationOptions): typed loosely on the wire.
    const optionsJSON = { ...passkey.options, challenge } as unknown as PublicKeyCredentialCreationOptionsJSON;
    // One challenge for both: the service consumes it only when it verifies the one answer sent (D-641).
    const existing = {
      field: "device_assertion" as const,
      optionsJSON: { ...passkey.existing, challenge } as unknown as PublicKeyCredentialRequestOptionsJSON,
    };
    return { ceremony: "register" as const, field: "device_registration" as const, optionsJSON, existing };
  }
  const optionsJSON = { ...passkey.options, challenge } as unknown as PublicKeyCredentialRequestOptionsJSON;
  return { ceremony: "assert" as const, field: "device_assertion" as const, optionsJSON };
}
