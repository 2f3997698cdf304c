/**
 * What a registration's attestation proved (policy.ts, AttestationVerdict). @simplewebauthn/server
 * verifies the statement of every format (packed, tpm, android-key, android-safetynet, apple,
 * fido-u2f, none) and the certificate path to the roots its SettingsService holds for the format;
 * where it holds none, it skips the path. So the verdict is read here: a chain counts as `trusted`
 * only for a format with pinned roots.
 *
 * The pinned roots: @simplewebauthn/server ships Google's hardware attestation roots (android-key),
 * GlobalSign's (android-safetynet) and Apple's WebAuthn root (apple), pinned with the package's
 * exact version in package.json and package-lock.json; a new root arrives by upgrading it. packed,
 * tpm and fido-u2f roots are per vendor (the FIDO Metadata Service lists them): none is pinned
 * yet, so those chains are `untrusted` (docs/devices.md, "Attestation and trust roots").
 */
import { SettingsService } from "@simplewebauthn/server";
import { decodeAttestationObject } from "@simplewebauthn/server/helpers";
import { fromBase64Url } from "../lib/crypto";
import type { AttestationVerdict } from "./policy";

/** The attestation's format and what it proved, from the attestation object the library verified. */
export function attestationVerdictOf(attestationObject: string): { format: string; verdict: AttestationVerdict } {
  const decoded = decodeAttestationObject(fromBase64Url(attestationObject));
  const format = decoded.get("fmt");
  if (format === "none") return { format, verdict: "none" };
  const chain = decoded.get("attStmt").get("x5c");
  if (!chain || chain.length === 0) return { format, verdict: "self" };
  const pinned = SettingsService.getRootCertificates({ identifier: format }).length > 0;
  return { format, verdict: pinned ? "trusted" : "untrusted" };
}
