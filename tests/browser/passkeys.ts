/**
 * Passkeys in the browser tests: a CDP virtual authenticator on a page (issue 27's probe), the kind a
 * person's phone or laptop is: CTAP2 over the internal transport (a platform authenticator), resident
 * keys, user verification (a biometric or PIN) that the test turns off to stage a refusal. Pages that
 * run a ceremony must be at http://localhost:<port>: an IP address is no RP ID (SecurityError).
 */
import type { CDPSession, Page } from "playwright-core";

/** A virtual authenticator attached to one page's target, and the DevTools session that drives it. */
export interface VirtualAuthenticator {
  cdp: CDPSession;
  authenticatorId: string;
  /** Whether the next ceremonies pass user verification (a recognised finger, a right PIN). */
  setUserVerified(verified: boolean): Promise<void>;
  /** The credentials it holds (id, RP ID, user handle, sign count). */
  credentials(): Promise<{ credentialId: string; rpId?: string; userHandle?: string; signCount: number; isResidentCredential: boolean }[]>;
}

/** A person's phone or laptop as CDP's WebAuthn.addVirtualAuthenticator takes it. */
export const PLATFORM_AUTHENTICATOR = {
  protocol: "ctap2",
  transport: "internal",
  hasResidentKey: true,
  hasUserVerification: true,
  isUserVerified: true,
  automaticPresenceSimulation: true,
} as const;

/** Adds a platform authenticator (ctap2, internal, resident keys, user verified) to `page`. */
export async function addVirtualAuthenticator(page: Page): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", { options: PLATFORM_AUTHENTICATOR });
  return {
    cdp,
    authenticatorId,
    async setUserVerified(verified) {
      await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: verified });
    },
    async credentials() {
      return (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials;
    },
  };
}

/** A credential the service registered elsewhere (the harness's software authenticator), to put in a virtual authenticator. */
export interface HeldCredential {
  /** The credential id, base64url (as WebAuthn answers it and the service stores it). */
  id: string;
  /** The private key as PKCS #8 DER in base64. */
  privateKeyPkcs8: string;
}

/**
 * Puts `credential` in `authenticator` as a discoverable (resident) credential of `rpId` whose user
 * handle is `userHandle` (base64url, as the service issued it at registration), its counter at
 * `signCount`: the person's own passkey on this device, so the page's `navigator.credentials.get`
 * without allowCredentials finds it, and the assertion is signed with the key the service holds the
 * public half of. CDP's binary fields are base64, not base64url.
 */
export async function holdPasskey(
  authenticator: VirtualAuthenticator,
  credential: HeldCredential,
  options: { rpId: string; userHandle: string; signCount?: number },
): Promise<void> {
  const base64 = (base64url: string) => Buffer.from(base64url, "base64url").toString("base64");
  await authenticator.cdp.send("WebAuthn.addCredential", {
    authenticatorId: authenticator.authenticatorId,
    credential: {
      credentialId: base64(credential.id),
      isResidentCredential: true,
      rpId: options.rpId,
      privateKey: credential.privateKeyPkcs8,
      userHandle: base64(options.userHandle),
      signCount: options.signCount ?? 0,
    },
  });
}

/** `url` with its host 127.0.0.1 as localhost, where a page may run a WebAuthn ceremony. */
export function onLocalhost(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === "127.0.0.1") parsed.hostname = "localhost";
  return parsed.toString();
}
