/**
 * Passive authentication of an eMRTD read on the device (ICAO 9303 part 11, 5.1; docs/documents.md):
 * the Document Security Object (EF.SOD, a CMS SignedData over an LDSSecurityObject) holds the hash
 * of every data group; its signature is the Document Signer's, whose certificate must chain to a
 * Country Signing CA of the configured trust list, every certificate valid at the capture's time.
 * What this proves: the chip's data was written by the issuing state. What it does not: that the
 * chip was present (a copy of its files passes too) or that the portrait is the live face (the
 * device's claim, bound to the capture by the DG2 hash it names).
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { ApiError } from "../kernel/errors";
import { toHex } from "../lib/crypto";
import { documentRefused } from "./documents";
import { type MachineReadableZone, MrzError, mrzOfDg1, parseMrz, readTlv } from "./mrz";

/** id-icao-mrtd-security-ldsSecurityObject: the eContentType of every EF.SOD. */
export const LDS_SECURITY_OBJECT = "2.23.136.1.1.1";

/** The hash algorithms of data groups WebCrypto computes (SHA-224 has no WebCrypto name). */
const DIGESTS: Record<string, string> = {
  "1.3.14.3.2.26": "SHA-1",
  "2.16.840.1.101.3.4.2.1": "SHA-256",
  "2.16.840.1.101.3.4.2.2": "SHA-384",
  "2.16.840.1.101.3.4.2.3": "SHA-512",
};

/** What the device sends: the files read from the chip that the server checks, and its portrait match. */
export interface DocumentEvidence {
  /** EF.SOD as read (tag 77), base64. */
  sod: string;
  /** EF.DG1 as read (tag 61, the MRZ), base64. */
  dg1: string;
  /** The hash of EF.DG2 as read (the portrait), with the SOD's algorithm, base64. DG2 never leaves the device. */
  dg2_hash: string;
  /** The device's cosine similarity of DG2's portrait to this capture's live face. */
  portrait_similarity: number;
}

/** Where the verifier finds Country Signing CAs: the trust list's certificates (DER) that may have issued a DS certificate. */
export type TrustAnchorLookup = (issuer: { subject: string; keyIdentifier: string | null }) => Promise<Uint8Array<ArrayBuffer>[]>;

/** A document that passed passive authentication, as it goes on record. */
export interface VerifiedDocument extends MachineReadableZone {
  portrait_similarity: number;
  /** SHA-256 of the Document Signer certificate and of the Country Signing CA certificate (hex). */
  signer_fingerprint: string;
  csca_fingerprint: string;
  /**
   * SHA-256 of the LDSSecurityObject the SOD signs (hex): the data group hashes, the same for every
   * copy of the chip and unchangeable without breaking the signature (unlike the SOD's unsigned
   * parts, its certificate set for one), so it names the document.
   */
  lds_sha256: string;
}

/**
 * Verifies the evidence at `at` (the capture's time) and answers the document, or throws `403
 * DOCUMENT_REQUIRED` naming the failing step in `reason` (D-427): `document_unreadable` (with
 * `detail`), `document_data_group_mismatch` (with `data_group`), `document_signature_invalid`,
 * `document_issuer_untrusted`, `document_certificate_expired` (with `certificate`),
 * `document_expired`, `document_portrait_mismatch`, checked in that order.
 */
export async function passiveAuthentication(
  evidence: DocumentEvidence,
  at: Date,
  anchorsFor: TrustAnchorLookup,
  portraitGate: number,
): Promise<VerifiedDocument> {
  const sodBytes = base64Bytes(evidence.sod, "sod");
  const dg1 = base64Bytes(evidence.dg1, "dg1");
  const sod = readSod(sodBytes);

  const dg1Hash = new Uint8Array(await crypto.subtle.digest(sod.hashAlgorithm, dg1));
  if (!equalBytes(sod.hashes.get(1), dg1Hash) || !equalBytes(sod.hashes.get(2), base64Bytes(evidence.dg2_hash, "dg2_hash"))) {
    throw documentRefused("document_data_group_mismatch", { data_group: equalBytes(sod.hashes.get(1), dg1Hash) ? 2 : 1 });
  }

  const mrz = readMrz(dg1, at);
  const signer = await verifySodSignature(sod.signedData);
  const csca = await chainedAnchor(signer, anchorsFor);
  for (const [certificate, role] of [
    [signer, "document_signer"],
    [csca, "country_signing_ca"],
  ] as const) {
    if (at < certificate.notBefore || at > certificate.notAfter)
      throw documentRefused("document_certificate_expired", { certificate: role });
  }
  if (mrz.expires_on < at.toISOString().slice(0, 10)) throw documentRefused("document_expired");
  if (!(evidence.portrait_similarity >= portraitGate)) throw documentRefused("document_portrait_mismatch");

  return {
    ...mrz,
    portrait_similarity: Math.round(evidence.portrait_similarity * 10_000) / 10_000,
    signer_fingerprint: await fingerprint(signer),
    csca_fingerprint: await fingerprint(csca),
    lds_sha256: toHex(await crypto.subtle.digest("SHA-256", sod.securityObject)),
  };
}

function unreadable(reason: string): ApiError {
  return documentRefused("document_unreadable", { detail: reason });
}

function base64Bytes(text: string, field: string): Uint8Array<ArrayBuffer> {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    throw unreadable(`${field}_not_base64`);
  }
}

/** EF.SOD (tag 77 around a ContentInfo): the SignedData and the data group hashes it signs. */
function readSod(bytes: Uint8Array<ArrayBuffer>): {
  signedData: pkijs.SignedData;
  securityObject: Uint8Array<ArrayBuffer>;
  hashAlgorithm: string;
  hashes: Map<number, Uint8Array>;
} {
  try {
    if (bytes[0] !== 0x77) throw unreadable("sod_not_ef_sod");
    const wrapper = readTlv(bytes, 0);
    if (wrapper.end !== bytes.length) throw unreadable("sod_malformed");
    const signedData = new pkijs.SignedData({
      schema: new pkijs.ContentInfo({ schema: berOf(bytes.subarray(wrapper.valueStart, wrapper.end)) }).content,
    });
    const { eContentType, eContent } = signedData.encapContentInfo;
    if (eContentType !== LDS_SECURITY_OBJECT || !eContent) throw unreadable("sod_not_lds_security_object");
    const securityObject = new Uint8Array(eContent.getValue());
    const [, algorithm, groups] = (berOf(securityObject) as asn1js.Sequence).valueBlock.value as [
      asn1js.Integer,
      asn1js.Sequence,
      asn1js.Sequence,
    ];
    const hashAlgorithm = DIGESTS[(algorithm.valueBlock.value[0] as asn1js.ObjectIdentifier).valueBlock.toString()];
    if (!hashAlgorithm) throw unreadable("unsupported_hash_algorithm");
    const hashes = new Map<number, Uint8Array>();
    for (const group of groups.valueBlock.value as asn1js.Sequence[]) {
      const [number, hash] = group.valueBlock.value as [asn1js.Integer, asn1js.OctetString];
      hashes.set(number.valueBlock.valueDec, new Uint8Array(hash.getValue()));
    }
    return { signedData, securityObject, hashAlgorithm, hashes };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw unreadable("sod_malformed");
  }
}

function berOf(bytes: Uint8Array): asn1js.AsnType {
  const parsed = asn1js.fromBER(bytes);
  if (parsed.offset === -1 || parsed.offset !== bytes.length) throw unreadable("sod_malformed");
  return parsed.result;
}

function readMrz(dg1: Uint8Array, at: Date): MachineReadableZone {
  try {
    return parseMrz(mrzOfDg1(dg1), at);
  } catch (error) {
    if (error instanceof MrzError) throw unreadable("dg1_malformed");
    throw error;
  }
}

/** The SOD's signature by the certificate it carries; that certificate, as the Document Signer. */
async function verifySodSignature(signedData: pkijs.SignedData): Promise<x509.X509Certificate> {
  const carried = signedData.certificates?.find((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
  if (signedData.signerInfos.length !== 1 || !carried) throw unreadable("sod_without_document_signer");
  // A key WebCrypto cannot import (a Brainpool curve) says nothing about the signature: it is not verifiable here.
  const importable = await new x509.X509Certificate(carried.toSchema().toBER()).publicKey.export().then(
    () => true,
    () => false,
  );
  if (!importable) throw unreadable("unsupported_signature_algorithm");
  const result = await signedData.verify({ signer: 0, checkChain: false, extendedMode: true }).catch(() => null);
  if (!result?.signatureVerified || !result.signerCertificate) throw documentRefused("document_signature_invalid");
  return new x509.X509Certificate(result.signerCertificate.toSchema().toBER());
}

/** The trust list's Country Signing CA whose key signed the Document Signer certificate. */
async function chainedAnchor(signer: x509.X509Certificate, anchorsFor: TrustAnchorLookup): Promise<x509.X509Certificate> {
  const keyIdentifier = signer.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId ?? null;
  for (const der of await anchorsFor({ subject: signer.issuer, keyIdentifier })) {
    const csca = new x509.X509Certificate(der);
    if (csca.subject === signer.issuer && (await signer.verify({ publicKey: csca, signatureOnly: true }).catch(() => false))) return csca;
  }
  throw documentRefused("document_issuer_untrusted");
}

async function fingerprint(certificate: x509.X509Certificate): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", certificate.rawData));
}

function equalBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && a.every((byte, i) => byte === b[i]);
}
