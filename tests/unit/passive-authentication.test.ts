/**
 * The verifier of document evidence on the sandbox passports `document passport create` makes:
 * the valid one accepted with what it records, each failing case refused with its own code, and
 * the steps around them (what is hashed, signed, chained and dated) each able to fail on its own.
 */
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { beforeAll, describe, expect, it } from "vitest";
import { checkDigit, mrzOfDg1, parseMrz } from "../../shared/identity/mrz";
import { type DocumentEvidence, passiveAuthentication, type TrustAnchorLookup } from "../../shared/identity/passive-authentication";
import { masterListCertificates, trustAnchorOf } from "../../shared/identity/trust-list";
import { ApiError } from "../../shared/kernel/errors";
import {
  base64,
  bytesOf,
  createMasterList,
  createTestCsca,
  createTestPassport,
  type PassportCase,
  passportCases,
  type TestCsca,
} from "../../shared/simulator/passports";

const GATE = 0.75;
const NOW = new Date("2026-11-24T12:00:00Z");
let csca: TestCsca;
let trusted: TrustAnchorLookup;

beforeAll(async () => {
  csca = await createTestCsca("UTO", new Date("2026-01-01T00:00:00Z"));
  trusted = async () => [bytesOf(csca.certificate)];
});

/** The code the verifier refuses with, with its extra fields; `accepted` when it accepts. */
async function outcome(document: DocumentEvidence, at = NOW, anchors = trusted) {
  try {
    await passiveAuthentication(document, at, anchors, GATE);
    return { code: "accepted" };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // Every refusal is 403 DOCUMENT_REQUIRED; its cause is the reason (D-427).
    expect(error.code).toBe("DOCUMENT_REQUIRED");
    const { reason, required: _, accepted_documents: __, ...particulars } = error.extra;
    return { code: reason, ...particulars };
  }
}

describe("passive authentication", () => {
  it("accepts the valid passport and answers what goes on record", async () => {
    const { document } = await createTestPassport(csca, { case: "valid", at: NOW, expiresOn: "2030-05-31", dateOfBirth: "1985-02-28" });
    const verified = await passiveAuthentication(document, NOW, trusted, GATE);
    expect(verified).toMatchObject({
      document_type: "passport",
      issuing_country: "UTO",
      expires_on: "2030-05-31",
      date_of_birth: "1985-02-28",
      portrait_similarity: 0.91,
      csca_fingerprint: (await trustAnchorOf(bytesOf(csca.certificate))).fingerprint,
    });
    expect(verified.signer_fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(verified.lds_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each(Object.entries(passportCases).filter(([, code]) => code !== null) as [PassportCase, string][])(
    "refuses the %s passport with %s",
    async (kind, code) => {
      const { document, expected } = await createTestPassport(csca, { case: kind, at: NOW });
      expect(expected).toBe(code);
      expect((await outcome(document)).code).toBe(code);
    },
  );

  it("names the data group that does not match, and the certificate that is out of its validity", async () => {
    const { document } = await createTestPassport(csca, { case: "valid", at: NOW });
    expect(await outcome({ ...document, dg2_hash: base64(new Uint8Array(32)) })).toEqual({
      code: "document_data_group_mismatch",
      data_group: 2,
    });
    const tampered = (await createTestPassport(csca, { case: "tampered", at: NOW })).document;
    expect(await outcome(tampered)).toEqual({ code: "document_data_group_mismatch", data_group: 1 });
    const expired = (await createTestPassport(csca, { case: "expired", at: NOW })).document;
    expect(await outcome(expired)).toEqual({ code: "document_certificate_expired", certificate: "document_signer" });
  });

  it("checks validity at the capture's time: before the signer's validity, after the CSCA's", async () => {
    const { document } = await createTestPassport(csca, { case: "valid", at: NOW });
    expect((await outcome(document, new Date(NOW.getTime() - 40 * 86_400_000))).code).toBe("document_certificate_expired");
    const shortCsca = await createTestCsca("UTO", new Date("2016-06-01T00:00:00Z"));
    const underOld = await createTestPassport(shortCsca, { case: "valid", at: new Date("2026-05-01T00:00:00Z"), expiresOn: "2030-01-01" });
    const old = async () => [bytesOf(shortCsca.certificate)];
    expect(await outcome(underOld.document, new Date("2026-05-01T00:00:00Z"), old)).toEqual({ code: "accepted" });
    expect(await outcome(underOld.document, new Date("2026-07-01T00:00:00Z"), old)).toEqual({
      code: "document_certificate_expired",
      certificate: "country_signing_ca",
    });
  });

  it("refuses an expired document and a portrait the device matched below the gate", async () => {
    const expired = await createTestPassport(csca, { case: "valid", at: NOW, expiresOn: "2026-11-23" });
    expect((await outcome(expired.document)).code).toBe("document_expired");
    const lastDay = await createTestPassport(csca, { case: "valid", at: NOW, expiresOn: "2026-11-24" });
    expect((await outcome(lastDay.document)).code).toBe("accepted");
    const portrait = await createTestPassport(csca, { case: "valid", at: NOW, portraitSimilarity: 0.7499 });
    expect((await outcome(portrait.document)).code).toBe("document_portrait_mismatch");
  });

  it("finds no issuer when the trust list is empty or holds another CSCA of the same name", async () => {
    const { document } = await createTestPassport(csca, { case: "valid", at: NOW });
    expect((await outcome(document, NOW, async () => [])).code).toBe("document_issuer_untrusted");
    const other = await createTestCsca("UTO", new Date("2026-01-01T00:00:00Z"));
    expect((await outcome(document, NOW, async () => [bytesOf(other.certificate)])).code).toBe("document_issuer_untrusted");
  });

  it("names the document by what its signature covers: a copy with another certificate set is the same document", async () => {
    const { document } = await createTestPassport(csca, { case: "valid", at: NOW });
    const sod = bytesOf(document.sod);
    const content = new pkijs.ContentInfo({ schema: asn1js.fromBER(sod.subarray(4)).result });
    const signedData = new pkijs.SignedData({ schema: content.content });
    signedData.certificates = [...(signedData.certificates ?? []), pkijs.Certificate.fromBER(bytesOf(csca.certificate))];
    const reencoded = new Uint8Array(
      new pkijs.ContentInfo({ contentType: content.contentType, content: signedData.toSchema(true) }).toSchema().toBER(),
    );
    const copy = Uint8Array.from([0x77, 0x82, reencoded.length >> 8, reencoded.length & 0xff, ...reencoded]);
    expect(base64(copy)).not.toBe(document.sod);
    const original = await passiveAuthentication(document, NOW, trusted, GATE);
    const altered = await passiveAuthentication({ ...document, sod: base64(copy) }, NOW, trusted, GATE);
    expect(altered.lds_sha256).toBe(original.lds_sha256);
  });

  it("answers document_unreadable with a detail for what is not an EF.SOD", async () => {
    const { document } = await createTestPassport(csca, { case: "valid", at: NOW });
    const sod = bytesOf(document.sod);
    expect(await outcome({ ...document, sod: base64(new TextEncoder().encode("hello")) })).toEqual({
      code: "document_unreadable",
      detail: "sod_not_ef_sod",
    });
    expect(await outcome({ ...document, sod: base64(sod.subarray(0, sod.length - 10)) })).toEqual({
      code: "document_unreadable",
      detail: "sod_malformed",
    });
    expect(await outcome({ ...document, sod: "%%%" })).toEqual({ code: "document_unreadable", detail: "sod_not_base64" });
  });
});

describe("the MRZ", () => {
  it("computes ICAO check digits (the specimen of ICAO 9303 part 4)", () => {
    expect(checkDigit("L898902C3")).toBe("6");
    expect(checkDigit("740812")).toBe("2");
    expect(checkDigit("120415")).toBe("9");
  });

  it("reads TD1, TD2 and TD3, and refuses a check digit that does not add up", () => {
    const td3 = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<L898902C36UTO7408122F1204159ZE184226B<<<<<10";
    expect(parseMrz(td3, NOW)).toEqual({
      document_type: "passport",
      issuing_country: "UTO",
      expires_on: "2012-04-15",
      date_of_birth: "1974-08-12",
    });
    const td1 = "I<UTOD231458907<<<<<<<<<<<<<<<7408122F1204159UTO<<<<<<<<<<<6ERIKSSON<<ANNA<MARIA<<<<<<<<<<";
    expect(parseMrz(td1, NOW)).toMatchObject({ document_type: "national_id", expires_on: "2012-04-15", date_of_birth: "1974-08-12" });
    const td2 = "IRUTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<D231458907UTO7408122F1204159<<<<<<<6";
    expect(parseMrz(td2, NOW)).toMatchObject({ document_type: "residence_permit", issuing_country: "UTO" });
    expect(() => parseMrz(td3.replace("1204159", "1204158"), NOW)).toThrow(/check digit/);
  });

  it("takes the MRZ out of DG1's data objects", async () => {
    const { document, mrz } = await createTestPassport(csca, { case: "valid", at: NOW });
    expect(mrzOfDg1(bytesOf(document.dg1))).toBe(mrz);
  });
});

describe("master lists", () => {
  it("gives the CSCAs of a list whose signer one of them issued, and refuses one whose signer none did", async () => {
    const other = await createTestCsca("UTO", NOW);
    const list = await createMasterList([csca, other], csca);
    const { certificates } = await masterListCertificates(list);
    expect(certificates.map((c) => base64(c))).toEqual([csca.certificate, other.certificate]);
    await expect(masterListCertificates(await createMasterList([other], csca))).rejects.toThrow(/issued by no CSCA of the list/);
    const broken = list.slice();
    broken[broken.length - 5] ^= 0xff;
    await expect(masterListCertificates(broken)).rejects.toThrow(/signature does not verify|not a DER/);
  });
});
