/**
 * The hosted screen's passkey ceremony over its capture (docs/devices.md; docs/decisions.md, D-348):
 * in live mode the capture counts only signed on the person's device. The boot's capture nonce is
 * the device challenge the service issued for the session's purpose; the WebAuthn challenge is
 * assertionChallenge(capture nonce, descriptorDigest(descriptor)) from the shared contract, so the
 * passkey signs exactly the numbers the completion sends. An enrolment (`enroll`, `claim`) registers
 * the person's first passkey; every other action asks one of theirs. The relying party is the page's
 * own host: the screen is served by the service, whose host is the RP ID it verifies against.
 */

import { assertionChallenge, descriptorDigest } from "../../shared/contracts/device";
import type { ScreenAction, ScreenBoot } from "../../shared/contracts/hosted-screen";
import { randomBase64Url } from "../../shared/lib/crypto";

/** What the passkey does for an action: register the first one (enrolments) or sign with one. */
export type PasskeyCeremony = "register" | "assert";

export function ceremonyOf(action: ScreenAction): PasskeyCeremony {
  return action === "enroll" || action === "claim" ? "register" : "assert";
}

/** The name an authenticator shows for the service (shared/devices/ceremony.ts#SERVICE_RP_NAME). */
const RP_NAME = "Human-authorisation service";

/** How long the person may take over the ceremony (ms). */
const CEREMONY_TIMEOUT_MS = 120_000;

/**
 * The options of @simplewebauthn/browser's startRegistration or startAuthentication for this
 * capture, and the body field its answer goes in. User verification is required, the key a
 * discoverable one; the algorithms are those the service verifies (ES256, EdDSA, RS256).
 */
export async function passkeyRequest(boot: ScreenBoot, descriptor: unknown, rpId: string) {
  const challenge = assertionChallenge(boot.capture_nonce, await descriptorDigest(descriptor));
  if (ceremonyOf(boot.action) === "register") {
    return {
      ceremony: "register" as const,
      field: "device_registration" as const,
      optionsJSON: {
        challenge,
        rp: { id: rpId, name: RP_NAME },
        user: { id: randomBase64Url(16), name: boot.display_name, displayName: boot.display_name },
        pubKeyCredParams: [-7, -8, -257].map((alg) => ({ type: "public-key" as const, alg })),
        timeout: CEREMONY_TIMEOUT_MS,
        attestation: "direct" as const,
        authenticatorSelection: { residentKey: "required" as const, userVerification: "required" as const },
      },
    };
  }
  return {
    ceremony: "assert" as const,
    field: "device_assertion" as const,
    optionsJSON: { challenge, rpId, timeout: CEREMONY_TIMEOUT_MS, userVerification: "required" as const },
  };
}
