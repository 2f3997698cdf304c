/**
 * The secrets and ids of a hosted session. Each secret is 32 random bytes (base64url, after a
 * prefix that says what it is), shown once and stored as its SHA-256 only: the session token the
 * merchant hands to the browser (exchanged once), and the screen credential the exchange issues
 * (presented by the screen's complete and cancel). The capture nonce is issued by the same exchange.
 */
import { DEVICE_CHALLENGE_BYTES } from "../contracts/device";
import { randomBase64Url } from "../lib/crypto";
import { canonicalUuid } from "../lib/uuid";

const SESSION_TOKEN = /^hst_[A-Za-z0-9_-]{43}$/;
const SCREEN_TOKEN = /^hsc_[A-Za-z0-9_-]{43}$/;

/** `hst_` + 32 random bytes: the single-use token of hosted-session-create. */
export function newSessionToken(): string {
  return `hst_${randomBase64Url(32)}`;
}

/** `hsc_` + 32 random bytes: the screen credential bound to one opened session. */
export function newScreenToken(): string {
  return `hsc_${randomBase64Url(32)}`;
}

/**
 * The nonce of the session's one capture (docs/presence-descriptor.md 3.6): a device challenge, 32
 * random bytes in base64url (43 characters), which the boot issues for the session's purpose
 * (docs/devices.md), so the passkey on the person's device signs it with the descriptor.
 */
export function newCaptureNonce(): string {
  return randomBase64Url(DEVICE_CHALLENGE_BYTES);
}

/** Whether `text` has the form of a session token (anything else cannot name a session). */
export function isSessionToken(text: string): boolean {
  return SESSION_TOKEN.test(text);
}

/** Whether `text` has the form of a screen credential. */
export function isScreenToken(text: string): boolean {
  return SCREEN_TOKEN.test(text);
}

/** The uuid behind a session id as responses show it (`hs_` + 32 hex) or a bare uuid; null when neither. */
export function sessionUuid(id: string): string | null {
  return canonicalUuid(id.startsWith("hs_") ? id.slice(3) : id);
}
