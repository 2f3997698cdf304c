/**
 * The claim catalogue of disclose-claims (shared/consent/claims.ts), pure: how each field is checked
 * and resolved, the age arithmetic at its edges, and that a derived claim carries no source value.
 */
import { describe, expect, it } from "vitest";
import { checkRequestedFields, type RequestedField, resolveClaim } from "../../shared/consent/claims";
import type { DisclosureSubject } from "../../shared/consent/rpc";

const subject = (birthDate: string | null, document = true): DisclosureSubject => ({
  identity_id: "00000000-0000-4000-8000-000000000001",
  subject_ref: `sub_${"a".repeat(48)}`,
  enrolled_at: "2026-01-02T23:30:00+00:00",
  assurance_level: "face_voice_doc",
  document: document
    ? {
        document_type: "passport",
        issuing_country: "PRT",
        expires_on: "2031-01-01",
        verified_at: "2026-01-02T23:30:00Z",
        portrait_similarity: 0.91,
        date_of_birth: birthDate,
      }
    : null,
});

const ageOver = (threshold: number, birthDate: string, today: string) => {
  const claim = resolveClaim({ key: `age_over_${threshold}`, disclosure_type: "zk_proof" }, subject(birthDate), today);
  return claim.status === "disclosed" && claim.disclosure_type === "zk_proof" ? claim.zk_proof.result : null;
};

describe("claims", () => {
  it("counts age in whole years, a 29 February birthday reached on 1 March in common years", () => {
    expect(ageOver(18, "2008-11-24", "2026-11-23")).toBe(false);
    expect(ageOver(18, "2008-11-24", "2026-11-24")).toBe(true);
    expect(ageOver(18, "2008-02-29", "2026-02-28")).toBe(false);
    expect(ageOver(18, "2008-02-29", "2026-03-01")).toBe(true);
    expect(ageOver(150, "1900-01-01", "2026-01-01")).toBe(false);
  });

  it("a derived claim carries its circuit, its public input and a boolean: never the birth date", () => {
    const claim = resolveClaim({ key: "age_over_21", disclosure_type: "zk_proof" }, subject("1999-12-31"), "2026-11-24");
    expect(claim).toEqual({
      key: "age_over_21",
      disclosure_type: "zk_proof",
      status: "disclosed",
      zk_proof: { circuit_id: "age_over", public_input: { threshold: 21 }, result: true },
    });
    expect(JSON.stringify(claim)).not.toContain("1999");
  });

  it("issuing_country_in compares against a sorted set of the public countries", () => {
    const field: RequestedField = {
      key: "issuing_country_in",
      disclosure_type: "zk_proof",
      public_input: { countries: ["PRT", "BRA", "PRT"] },
    };
    expect(resolveClaim(field, subject(null), "2026-11-24")).toMatchObject({
      zk_proof: { public_input: { countries: ["BRA", "PRT"] }, result: true },
    });
    expect(resolveClaim(field, subject(null, false), "2026-11-24")).toMatchObject({ status: "unavailable", reason: "no_document" });
  });

  it("enrolled_on is the UTC day", () => {
    expect(resolveClaim({ key: "enrolled_on", disclosure_type: "value" }, subject(null), "2026-11-24")).toMatchObject({
      value: "2026-01-02",
    });
  });

  it("refuses unknown keys, other disclosure types and circuits that do not fit, naming the key", () => {
    const refusal = (field: RequestedField) => {
      try {
        checkRequestedFields([field]);
        return null;
      } catch (error) {
        return { code: (error as { code: string }).code, key: (error as { extra: { key: string } }).extra.key };
      }
    };
    expect(refusal({ key: "shoe_size", disclosure_type: "value" })).toEqual({ code: "UNKNOWN_CLAIM", key: "shoe_size" });
    expect(refusal({ key: "identity_document", disclosure_type: "value" })).toEqual({
      code: "DISCLOSURE_TYPE_NOT_SUPPORTED",
      key: "identity_document",
    });
    expect(refusal({ key: "age_over_0", disclosure_type: "zk_proof" })).toEqual({ code: "INVALID_CIRCUIT", key: "age_over_0" });
    expect(refusal({ key: "age_over_151", disclosure_type: "zk_proof" })).toEqual({ code: "INVALID_CIRCUIT", key: "age_over_151" });
    expect(refusal({ key: "age_over_018", disclosure_type: "zk_proof" })).toEqual({ code: "INVALID_CIRCUIT", key: "age_over_018" });
    expect(refusal({ key: "document_valid", disclosure_type: "zk_proof", circuit_id: "age_over" })).toEqual({
      code: "INVALID_CIRCUIT",
      key: "document_valid",
    });
    expect(refusal({ key: "issuing_country_in", disclosure_type: "zk_proof", public_input: { countries: [] } })).toEqual({
      code: "INVALID_CIRCUIT",
      key: "issuing_country_in",
    });
    // The MRZ's ICAO codes, not ISO alpha-2: "BR" names no issuing state a verified document states.
    expect(refusal({ key: "issuing_country_in", disclosure_type: "zk_proof", public_input: { countries: ["BR"] } })).toEqual({
      code: "INVALID_CIRCUIT",
      key: "issuing_country_in",
    });
    expect(
      refusal({ key: "age_over_65", disclosure_type: "zk_proof", circuit_id: "age_over", public_input: { threshold: 65 } }),
    ).toBeNull();
  });
});
