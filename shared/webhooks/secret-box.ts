/**
 * Endpoint secrets at rest. The worker has to sign with the secret itself, so a hash (the rule for
 * API keys) cannot work; the secret is encrypted instead: AES-256-GCM under a key derived with
 * HKDF-SHA256 from the WEBHOOK_SECRET_KEY binding, a random 96-bit IV per secret, and the endpoint
 * id as associated data, so a sealed secret copied onto another endpoint's row does not open.
 * Stored form: `v1:<base64url iv>:<base64url ciphertext‖tag>`.
 *
 * Rotating the key: the worker opens with the current key, then with WEBHOOK_SECRET_KEY_PREVIOUS,
 * while `webhook reseal` (resealSecrets) seals every stored secret again under the current key.
 */
import { randomBase62 } from "../lib/crypto";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const SEALED = /^v1:([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]+)$/;
const keys = new Map<string, Promise<CryptoKey>>();

/** A fresh endpoint secret: `whsec_` and 43 base62 characters (about 256 bits). Shown once. */
export function mintEndpointSecret(): string {
  return `whsec_${randomBase62(43)}`;
}

/** How a secret is recognised in listings without being shown: its prefix and last four characters. */
export function secretHint(secret: string): string {
  return `whsec_…${secret.slice(-4)}`;
}

function deriveKey(binding: string): Promise<CryptoKey> {
  let key = keys.get(binding);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", encoder.encode(binding), "HKDF", false, ["deriveKey"])
      .then((ikm) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode("webhook endpoint secret v1") },
          ikm,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"],
        ),
      );
    keys.set(binding, key);
  }
  return key;
}

/**
 * Encrypts `secret` for `endpointId` under the WEBHOOK_SECRET_KEY binding `binding`.
 *
 * @example const sealed = await sealEndpointSecret(config.WEBHOOK_SECRET_KEY, endpointId, mintEndpointSecret());
 */
export async function sealEndpointSecret(binding: string, endpointId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(endpointId) },
    await deriveKey(binding),
    encoder.encode(secret),
  );
  return `v1:${base64url(iv)}:${base64url(new Uint8Array(ciphertext))}`;
}

/**
 * Decrypts a sealed secret of `endpointId` with the first key of `keyring` that opens it (the
 * current WEBHOOK_SECRET_KEY, then the previous one during a key rotation); throws when none does,
 * or the endpoint or the bytes are wrong.
 */
export async function openEndpointSecret(keyring: readonly string[], endpointId: string, sealed: string): Promise<string> {
  return (await openWithKeyring(keyring, endpointId, sealed)).secret;
}

/** Like {@link openEndpointSecret}, and says which key of `keyring` opened it (0 is the current one). */
export async function openWithKeyring(
  keyring: readonly string[],
  endpointId: string,
  sealed: string,
): Promise<{ secret: string; keyIndex: number }> {
  const match = SEALED.exec(sealed);
  if (!match) throw new Error("not a sealed endpoint secret");
  const iv = fromBase64url(match[1]);
  const ciphertext = fromBase64url(match[2]);
  for (let keyIndex = 0; keyIndex < keyring.length; keyIndex++) {
    try {
      const plaintext = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv, additionalData: encoder.encode(endpointId) },
        await deriveKey(keyring[keyIndex]!),
        ciphertext,
      );
      return { secret: decoder.decode(plaintext), keyIndex };
    } catch {
      // Authentication failed under this key: try the next one.
    }
  }
  throw new Error(keyring.length > 1 ? "no key of the keyring opens it" : "the key does not open it");
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
