import { describe, expect, it } from "vitest";
import { encodeProof, MAX_PROOF_LENGTH, PROOF_PREFIX, PROOF_V2_PREFIX, parseProof } from "../../../shared/engine";
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

describe("the presence proof (v1, and v2 with the device)", () => {
  it("round-trips a descriptor with and without the consent, as pp1. and unpadded base64url", () => {
    const withConsent = encodeProof(descriptor, consent);
    expect(withConsent.startsWith(PROOF_PREFIX)).toBe(true);
    expect(withConsent.slice(PROOF_PREFIX.length)).toMatch(/^[A-Za-z0-9_-]+$/);
    // descriptorAsSent: the JSON the device's signature covers (a v2 proof's), kept as it came
    expect(parseProof(withConsent)).toEqual({ ok: true, proof: { descriptor, descriptorAsSent: descriptor, consent } });
    expect(parseProof(encodeProof(descriptor))).toEqual({ ok: true, proof: { descriptor, descriptorAsSent: descriptor } });
    expect(withConsent.length).toBeLessThan(MAX_PROOF_LENGTH);
  });

  it("carries exactly one device answer as pp2., and none as pp1.", () => {
    const device = { assertion: { id: "AAAA", response: {} } };
    const v2 = encodeProof(descriptor, consent, device);
    expect(v2.startsWith(PROOF_V2_PREFIX)).toBe(true);
    expect(parseProof(v2)).toEqual({ ok: true, proof: { descriptor, descriptorAsSent: descriptor, consent, device } });
    const json = (payload: unknown) => b64url(JSON.stringify(payload));
    const deviceRefused = { ok: false, fields: ["proof.device"] };
    expect(parseProof(`${PROOF_V2_PREFIX}${json({ descriptor })}`)).toEqual(deviceRefused);
    expect(parseProof(`${PROOF_V2_PREFIX}${json({ descriptor, device: { assertion: {}, registration: {} } })}`)).toEqual(deviceRefused);
    expect(parseProof(`${PROOF_V2_PREFIX}${json({ descriptor, device: { signature: "x" } })}`)).toEqual(deviceRefused);
    expect(parseProof(`${PROOF_PREFIX}${json({ descriptor, device })}`)).toEqual(deviceRefused);
  });

  it("reads the UTF-8 of the JSON, so a consent version outside ASCII survives", () => {
    const parsed = parseProof(encodeProof(descriptor, { version: "versão-ü-✓", retention_days: 30 }));
    expect(parsed.ok && parsed.proof.consent).toEqual({ version: "versão-ü-✓", retention_days: 30 });
  });

  it("names `proof` for anything that is no proof, and the descriptor's fields for a descriptor out of bounds", () => {
    const noProof = { ok: false, fields: ["proof"] };
    const json = JSON.stringify({ descriptor });
    for (const input of [
      "",
      "pp1.",
      "pp1.@@@@",
      "pp1.a",
      `pp3.${b64url(json)}`,
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
