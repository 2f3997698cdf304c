/**
 * What a registration's attestation proved (policy.ts, AttestationVerdict), judged against the
 * service's own trust roots. @simplewebauthn/server verifies every format's statement (packed,
 * tpm, android-key, android-safetynet, apple, fido-u2f, none: structure, certificate fields, the
 * signature over the authenticator data and client data); the certificate path is judged here, not
 * by the library, so that a chain to no trusted root is recorded as `untrusted` rather than refused
 * (D-560: an unattested passkey registers too, so refusing an unknown vendor's chain would stop
 * nobody, only make an honest security key look worse than a passkey without a statement).
 *
 * The roots: those @simplewebauthn/server ships (Google's hardware attestation roots for
 * android-key, GlobalSign's for android-safetynet, Apple's WebAuthn root for apple; pinned with the
 * package's exact version), the repository's own for packed, fido-u2f and tpm (trust-roots.ts), and
 * a deployment's DEVICE_ATTESTATION_ROOTS (the relying party's `attestationRoots`).
 */
import { SettingsService } from "@simplewebauthn/server";
import { convertCertBufferToPEM, decodeAttestationObject, validateCertificatePath } from "@simplewebauthn/server/helpers";
import { type AttestationFormat, attestationFormats } from "../contracts/device";
import { fromBase64Url } from "../lib/crypto";
import type { AttestationRoots } from "./ceremony";
import type { AttestationVerdict } from "./policy";
import { PINNED_ATTESTATION_ROOTS } from "./trust-roots";

/**
 * The roots the library ships, taken once when this module loads; the library is then left with
 * none, so it checks each statement and skips the path, which attestationVerdictOf judges.
 */
const SHIPPED_ROOTS: Partial<Record<AttestationFormat, readonly string[]>> = Object.fromEntries(
  attestationFormats.map((format) => [format, SettingsService.getRootCertificates({ identifier: format })]),
);
for (const format of attestationFormats) SettingsService.setRootCertificates({ identifier: format, certificates: [] });

/** Every root a chain of `format` may end at: shipped, pinned, and the deployment's own. */
export function trustRootsOf(format: AttestationFormat, configured: AttestationRoots = {}): string[] {
  return [
    ...(SHIPPED_ROOTS[format] ?? []),
    ...(PINNED_ATTESTATION_ROOTS[format] ?? []).map((root) => root.pem),
    ...(configured[format] ?? []),
  ];
}

/** The DER of a PEM certificate, base64 without line breaks (to compare a certificate with another). */
const derOfPem = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");

/**
 * Whether `chain` (x5c, leaf first, DER) ends at one of `roots`. A chain that carries the root itself
 * (android-key does) is read without it. Validity is judged at the current instant, as the library
 * judges the leaf, and revocation where a certificate names a CRL (the library's check).
 */
async function chainsToRoot(chain: readonly Uint8Array<ArrayBuffer>[], roots: readonly string[]): Promise<boolean> {
  if (roots.length === 0) return false;
  const anchors = new Set(roots.map(derOfPem));
  const path = chain.map((certificate) => convertCertBufferToPEM(certificate)).filter((pem) => !anchors.has(derOfPem(pem)));
  if (path.length === 0) return false;
  try {
    return await validateCertificatePath(path, [...roots]);
  } catch {
    return false;
  }
}

/**
 * The attestation's format and what it proved, from an attestation object the library verified:
 * `none` (no statement), `self` (no certificate: signed by the new key), `trusted` (its chain ends
 * at a root trusted for its format), `untrusted` (a chain to none).
 */
export async function attestationVerdictOf(
  attestationObject: string,
  configuredRoots: AttestationRoots = {},
): Promise<{ format: AttestationFormat; verdict: AttestationVerdict }> {
  const decoded = decodeAttestationObject(fromBase64Url(attestationObject));
  const format = decoded.get("fmt") as AttestationFormat;
  if (format === "none") return { format, verdict: "none" };
  const chain = format === "android-safetynet" ? safetyNetChain(decoded.get("attStmt").get("response")) : decoded.get("attStmt").get("x5c");
  if (!chain || chain.length === 0) return { format, verdict: "self" };
  return { format, verdict: (await chainsToRoot(chain, trustRootsOf(format, configuredRoots))) ? "trusted" : "untrusted" };
}

/** The certificate chain of an android-safetynet statement: its JWS header's x5c (standard base64 DER). */
function safetyNetChain(response: Uint8Array | undefined): Uint8Array<ArrayBuffer>[] | undefined {
  if (!response) return undefined;
  const header = JSON.parse(new TextDecoder().decode(fromBase64Url(new TextDecoder().decode(response).split(".")[0])));
  const x5c: unknown = header?.x5c;
  return Array.isArray(x5c)
    ? x5c.map((der) => fromBase64Url(String(der).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")))
    : undefined;
}
