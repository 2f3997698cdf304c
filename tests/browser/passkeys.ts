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

/** `url` with its host 127.0.0.1 as localhost, where a page may run a WebAuthn ceremony. */
export function onLocalhost(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === "127.0.0.1") parsed.hostname = "localhost";
  return parsed.toString();
}
