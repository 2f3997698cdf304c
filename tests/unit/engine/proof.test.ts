import { describe, expect, it } from "vitest";
import { encodeProof, MAX_PROOF_LENGTH, PROOF_PREFIX, parseProof } from "../../../shared/engine";
import { simulateCapture } from "../../../shared/simulator";

const descriptor = simulateCapture({
  person: 3,
  attack: "none",
  nonce: "n_proof_unit_1",
  state: "calm",
  capturedAt: "2026-11-24T12:00:00.000Z",
  seed: 7,
});
const consent = { version: "2026-11", retention_days: 365 };

/** base64url of UTF-8 text, as the device encodes the proof's JSON. */
const b64url = (text: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

describe("the presence proof v1", () => {
  it("round-trips a descriptor with and without the consent, as pp1. and unpadded base64url", () => {
    const withConsent = encodeProof(descriptor, consent);
    expect(withConsent.startsWith(PROOF_PREFIX)).toBe(true);
    expect(withConsent.slice(PROOF_PREFIX.length)).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(parseProof(withConsent)).toEqual({ ok: true, proof: { descriptor, consent } });
    expect(parseProof(encodeProof(descriptor))).toEqual({ ok: true, proof: { descriptor } });
    expect(withConsent.length).toBeLessThan(MAX_PROOF_LENGTH);
  });

  it("reads the UTF-8 of the JSON, so a consent version outside ASCII survives", () => {
    const parsed = parseProof(encodeProof(descriptor, { version: "versão-ü-✓", retention_days: 30 }));
    expect(parsed.ok && parsed.proof.consent).toEqual({ version: "versão-ü-✓", retention_days: 30 });
  });

  it("names `proof` for anything that is no proof v1, and the descriptor's fields for a descriptor out of bounds", () => {
    const noProof = { ok: false, fields: ["proof"] };
    const json = JSON.stringify({ descriptor });
    for (const input of [
      "",
      "pp1.",
      "pp1.@@@@",
      "pp1.a",
      `pp2.${b64url(json)}`,
      `pp1.${b64url(json)}=`,
      `pp1.${b64url("not json")}`,
      `pp1.${b64url("[1, 2]")}`,
      `pp1.${b64url("null")}`,
      `pp1.${btoa("\xff\xfe{}")}`,
      `pp1.${b64url(JSON.stringify({ descriptor, extra: 1 }))}`,
      `pp1.${"A".repeat(MAX_PROOF_LENGTH)}`,
    ]) {
      expect(parseProof(input), input.slice(0, 24)).toEqual(noProof);
    }
    expect(parseProof(`pp1.${b64url("{}")}`)).toEqual({ ok: false, fields: ["proof.descriptor"] });
    const shortPulse = parseProof(encodeProof({ ...descriptor, signals: { ...descriptor.signals, pulse: [0.1] } }));
    expect(shortPulse.ok).toBe(false);
    if (!shortPulse.ok) for (const field of shortPulse.fields) expect(field.startsWith("proof.descriptor.signals")).toBe(true);
  });
});
