/**
 * The trust list's entries (docs/documents.md): Country Signing CA certificates as rows, and the
 * CSCAs of an ICAO master list (ICAO 9303 part 12, 9: a CMS SignedData of CscaMasterList), whose
 * signature is checked before any certificate is taken from it.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { toHex } from "../lib/crypto";
import type { TrustAnchorRow } from "./rpc";

/** id-icao-cscaMasterList. */
export const CSCA_MASTER_LIST = "2.23.136.1.1.2";

/** A CSCA certificate (DER) as a trust-list row; a certificate that is no CA is refused. */
export async function trustAnchorOf(der: Uint8Array<ArrayBuffer>): Promise<TrustAnchorRow> {
  const certificate = new x509.X509Certificate(der);
  const constraints = certificate.getExtension(x509.BasicConstraintsExtension);
  if (constraints && !constraints.ca) throw new Error(`${certificate.subject} is not a CA certificate`);
  return {
    fingerprint: toHex(await crypto.subtle.digest("SHA-256", der)),
    subject: certificate.subject,
    key_identifier: certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId ?? null,
    country: certificate.subjectName.getField("C")[0] ?? null,
    certificate: btoa(String.fromCharCode(...der)),
    not_before: certificate.notBefore.toISOString(),
    not_after: certificate.notAfter.toISOString(),
  };
}

/**
 * The CSCA certificates of a master list, once its signature verifies under the Master List Signer
 * certificate it carries and that certificate was issued by one of the list's own CSCAs (the
 * issuing state's, as ICAO prescribes); anything else is an error saying what failed.
 */
export async function masterListCertificates(
  bytes: Uint8Array<ArrayBuffer>,
): Promise<{ signer: string; certificates: Uint8Array<ArrayBuffer>[] }> {
  const parsed = asn1js.fromBER(bytes);
  if (parsed.offset === -1) throw new Error("not a DER/BER encoded master list");
  const signedData = new pkijs.SignedData({ schema: new pkijs.ContentInfo({ schema: parsed.result }).content });
  const { eContentType, eContent } = signedData.encapContentInfo;
  if (eContentType !== CSCA_MASTER_LIST || !eContent) throw new Error(`content type ${eContentType} is not a CSCA master list`);
  const verified = await signedData.verify({ signer: 0, checkChain: false, extendedMode: true }).catch((error: Error) => {
    throw new Error(`the master list's signature does not verify: ${error.message}`);
  });
  if (!verified.signatureVerified || !verified.signerCertificate) throw new Error("the master list's signature does not verify");

  const list = asn1js.fromBER(eContent.getValue()).result as asn1js.Sequence;
  const set = list.valueBlock.value[1] as asn1js.Set;
  const certificates = set.valueBlock.value.map((c) => new Uint8Array(c.toBER()));
  const signer = new x509.X509Certificate(verified.signerCertificate.toSchema().toBER());
  for (const der of certificates) {
    const csca = new x509.X509Certificate(der);
    if (csca.subject === signer.issuer && (await signer.verify({ publicKey: csca, signatureOnly: true }).catch(() => false))) {
      return { signer: signer.subject, certificates };
    }
  }
  throw new Error(`the Master List Signer ${signer.subject} was issued by no CSCA of the list`);
}
