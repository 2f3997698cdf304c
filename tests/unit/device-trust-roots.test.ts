/**
 * The attestation roots pinned in the repository (shared/devices/trust-roots.ts) are what they say:
 * each parses, is a CA certificate that signed itself, is valid today, and has the SHA-256
 * fingerprint written beside it (so a copy damaged in transcription, or swapped, fails here). And
 * a deployment's own roots (DEVICE_ATTESTATION_ROOTS) are read strictly: JSON, known formats, PEM.
 */
import "reflect-metadata";
import { createHash } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import { PINNED_ATTESTATION_ROOTS } from "../../shared/devices/trust-roots";
import { readConfig } from "../../shared/kernel/config";

const roots = Object.entries(PINNED_ATTESTATION_ROOTS).flatMap(([format, list]) => (list ?? []).map((root) => [format, root] as const));

describe("pinned attestation roots", () => {
  it("pins roots for packed, fido-u2f and tpm", () => {
    expect(Object.keys(PINNED_ATTESTATION_ROOTS).sort()).toEqual(["fido-u2f", "packed", "tpm"]);
  });

  it.each(roots.map(([format, root]) => [format, root.name, root] as const))(
    "%s: %s is a self-signed CA with its fingerprint",
    async (_, __, root) => {
      const certificate = new x509.X509Certificate(root.pem);
      expect(createHash("sha256").update(new Uint8Array(certificate.rawData)).digest("hex")).toBe(root.sha256);
      expect(certificate.subject).toContain(root.name);
      expect(await certificate.isSelfSigned()).toBe(true);
      expect(certificate.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(true);
      expect(certificate.notBefore.getTime()).toBeLessThan(Date.now());
      expect(certificate.notAfter.getTime()).toBeGreaterThan(Date.now());
      expect(root.source).toMatch(/^https?:\/\//);
    },
  );
});

describe("DEVICE_ATTESTATION_ROOTS", () => {
  const base = { DATABASE_URL: "postgres://localhost/x" };
  const pem = roots[0][1].pem;

  it("reads a JSON object of formats to PEM certificates", () => {
    const config = readConfig({ ...base, DEVICE_ATTESTATION_ROOTS: JSON.stringify({ packed: [pem], tpm: [] }) });
    expect(config.DEVICE_ATTESTATION_ROOTS).toEqual({ packed: [pem], tpm: [] });
  });

  it.each([
    ["not JSON", "packed=..."],
    ["an unknown format", JSON.stringify({ "x-vendor": [pem] })],
    ["format none", JSON.stringify({ none: [pem] })],
    ["a key, not a certificate", JSON.stringify({ packed: ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"] })],
    ["a list, not an object", JSON.stringify([pem])],
  ])("refuses %s", (_, value) => {
    expect(() => readConfig({ ...base, DEVICE_ATTESTATION_ROOTS: value })).toThrow(/DEVICE_ATTESTATION_ROOTS/);
  });
});
