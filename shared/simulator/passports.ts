/**
 * Sandbox eMRTDs (docs/documents.md): a test Country Signing CA, passports whose chips it signed
 * through a Document Signer, each in one of the cases the verifier must tell apart, and ICAO
 * master lists for the trust-list import. Real ASN.1 and CMS, signed with WebCrypto: the evidence
 * is exactly what a device reading a chip would send.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { checkDigit } from "../identity/mrz";
import { type DocumentEvidence, LDS_SECURITY_OBJECT } from "../identity/passive-authentication";
import { CSCA_MASTER_LIST } from "../identity/trust-list";

/** The cases of `document passport create`, and the `reason` of the `403 DOCUMENT_REQUIRED` each one gets from the verifier. */
export const passportCases = {
  valid: null,
  tampered: "document_data_group_mismatch",
  "wrong-signer": "document_signature_invalid",
  expired: "document_certificate_expired",
  "unknown-csca": "document_issuer_untrusted",
} as const;
export type PassportCase = keyof typeof passportCases;

const SIGNED_DATA = "1.2.840.113549.1.7.2";
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY = 86_400_000;

/** A test CSCA as the CLI prints it: its certificate and private key (PKCS #8), base64. */
export interface TestCsca {
  country: string;
  certificate: string;
  private_key: string;
}

/** A self-signed Country Signing CA for `country` (ICAO code, `UTO` is ICAO's test state), valid ten years from `at`. */
export async function createTestCsca(country = "UTO", at = new Date()): Promise<TestCsca> {
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `C=${alpha2Of(country)}, O=Sandbox, CN=Sandbox CSCA ${country} ${randomSerial().slice(0, 8)}`,
    notBefore: new Date(at.getTime() - DAY),
    notAfter: new Date(at.getTime() + 3650 * DAY),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    country,
    certificate: base64(certificate.rawData),
    private_key: base64(await crypto.subtle.exportKey("pkcs8", keys.privateKey)),
  };
}

export interface PassportOptions {
  case: PassportCase;
  /** The capture's time the passport is made for (its certificates are valid then, or not, by case). */
  at?: Date;
  /** The MRZ expiry, ISO date; default five years after `at`. */
  expiresOn?: string;
  dateOfBirth?: string;
  /** What the device reports its portrait match to be; default 0.91. */
  portraitSimilarity?: number;
}

/** A test passport of `csca` in one case: the evidence the device sends, and its MRZ. */
export async function createTestPassport(csca: TestCsca, options: PassportOptions) {
  const at = options.at ?? new Date();
  const issuer = options.case === "unknown-csca" ? await createTestCsca(csca.country, at) : csca;
  const cscaCertificate = new x509.X509Certificate(bytesOf(issuer.certificate));
  const cscaKey = await crypto.subtle.importKey("pkcs8", bytesOf(issuer.private_key), ALGORITHM, false, ["sign"]);
  const signerKeys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const expiredSigner = options.case === "expired";
  const signer = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `C=${alpha2Of(csca.country)}, O=Sandbox, CN=Sandbox Document Signer`,
    issuer: cscaCertificate.subject,
    notBefore: new Date(at.getTime() - (expiredSigner ? 1200 : 30) * DAY),
    notAfter: new Date(at.getTime() + (expiredSigner ? -1 : 3650) * DAY),
    publicKey: signerKeys.publicKey,
    signingKey: cscaKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      await x509.AuthorityKeyIdentifierExtension.create(cscaCertificate.publicKey),
    ],
  });

  const mrz = td3Mrz({
    country: csca.country,
    expiresOn: options.expiresOn ?? new Date(at.getTime() + 5 * 365 * DAY).toISOString().slice(0, 10),
    dateOfBirth: options.dateOfBirth ?? "1990-04-12",
  });
  const dg1 = tlv([0x61], tlv([0x5f, 0x1f], new TextEncoder().encode(mrz)));
  const dg2 = tlv([0x75], crypto.getRandomValues(new Uint8Array(512)));
  const lds = ldsSecurityObject([
    [1, await sha256(dg1)],
    [2, await sha256(dg2)],
  ]);
  const sodKey =
    options.case === "wrong-signer" ? (await crypto.subtle.generateKey(ALGORITHM, false, ["sign"])).privateKey : signerKeys.privateKey;
  const sod = tlv([0x77], await signedContent(LDS_SECURITY_OBJECT, lds, signer, sodKey));
  // Tampered: the chip's DG1 altered after signing (another expiry), its hash no longer the SOD's.
  const sentDg1 = options.case === "tampered" ? tlv([0x61], tlv([0x5f, 0x1f], new TextEncoder().encode(tamperedMrz(mrz)))) : dg1;
  const evidence: DocumentEvidence = {
    sod: base64(sod),
    dg1: base64(sentDg1),
    dg2_hash: base64(await sha256(dg2)),
    portrait_similarity: options.portraitSimilarity ?? 0.91,
  };
  return { case: options.case, expected: passportCases[options.case], document: evidence, mrz };
}

/** An ICAO master list (a CMS SignedData of CscaMasterList) of `cscas`, signed by a list signer that `signerCsca` issued. */
export async function createMasterList(cscas: readonly TestCsca[], signerCsca: TestCsca): Promise<Uint8Array<ArrayBuffer>> {
  const issuer = new x509.X509Certificate(bytesOf(signerCsca.certificate));
  const issuerKey = await crypto.subtle.importKey("pkcs8", bytesOf(signerCsca.private_key), ALGORITHM, false, ["sign"]);
  const keys = await crypto.subtle.generateKey(ALGORITHM, false, ["sign", "verify"]);
  const listSigner = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `C=${alpha2Of(signerCsca.country)}, O=Sandbox, CN=Sandbox Master List Signer`,
    issuer: issuer.subject,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 365 * DAY),
    publicKey: keys.publicKey,
    signingKey: issuerKey,
    signingAlgorithm: ALGORITHM,
    extensions: [await x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey)],
  });
  const list = new asn1js.Sequence({
    value: [new asn1js.Integer({ value: 0 }), new asn1js.Set({ value: cscas.map((c) => asn1js.fromBER(bytesOf(c.certificate)).result) })],
  });
  return signedContent(CSCA_MASTER_LIST, new Uint8Array(list.toBER()), listSigner, keys.privateKey);
}

/** ContentInfo(SignedData) over `content` of type `contentType`, signed by `signer`'s key with signed attributes. */
async function signedContent(
  contentType: string,
  content: Uint8Array<ArrayBuffer>,
  signer: x509.X509Certificate,
  key: CryptoKey,
): Promise<Uint8Array<ArrayBuffer>> {
  const certificate = pkijs.Certificate.fromBER(signer.rawData);
  const signedData = new pkijs.SignedData({
    version: 3,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({
      eContentType: contentType,
      eContent: new asn1js.OctetString({ valueHex: content }),
    }),
    signerInfos: [
      new pkijs.SignerInfo({
        version: 1,
        sid: new pkijs.IssuerAndSerialNumber({ issuer: certificate.issuer, serialNumber: certificate.serialNumber }),
        signedAttrs: new pkijs.SignedAndUnsignedAttributes({
          type: 0,
          attributes: [
            new pkijs.Attribute({ type: "1.2.840.113549.1.9.3", values: [new asn1js.ObjectIdentifier({ value: contentType })] }),
            new pkijs.Attribute({ type: "1.2.840.113549.1.9.4", values: [new asn1js.OctetString({ valueHex: await sha256(content) })] }),
          ],
        }),
      }),
    ],
    certificates: [certificate],
  });
  await signedData.sign(key, 0, "SHA-256");
  return new Uint8Array(new pkijs.ContentInfo({ contentType: SIGNED_DATA, content: signedData.toSchema(true) }).toSchema().toBER());
}

function ldsSecurityObject(groups: [number, Uint8Array][]): Uint8Array<ArrayBuffer> {
  const sha256Id = new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: "2.16.840.1.101.3.4.2.1" }), new asn1js.Null()] });
  const hashes = groups.map(
    ([number, hash]) => new asn1js.Sequence({ value: [new asn1js.Integer({ value: number }), new asn1js.OctetString({ valueHex: hash })] }),
  );
  return new Uint8Array(
    new asn1js.Sequence({ value: [new asn1js.Integer({ value: 0 }), sha256Id, new asn1js.Sequence({ value: hashes })] }).toBER(),
  );
}

/** A TD3 (passport) MRZ of a sandbox holder, with its check digits. */
function td3Mrz({ country, expiresOn, dateOfBirth }: { country: string; expiresOn: string; dateOfBirth: string }): string {
  const state = country.padEnd(3, "<");
  const line1 = `P<${state}SANDBOX<<TEST<PERSON`.padEnd(44, "<");
  const number = `S${Math.floor(Math.random() * 1e8)
    .toString()
    .padStart(8, "0")}`;
  const yymmdd = (iso: string) => iso.slice(2).replaceAll("-", "");
  const [num, birth, expiry, optional] = [number, yymmdd(dateOfBirth), yymmdd(expiresOn), "<".repeat(14)].map((f) => f + checkDigit(f));
  const body = `${num}${state}${birth}F${expiry}${optional}`;
  return `${line1}${body}${checkDigit(num + birth + expiry + optional)}`;
}

/** The same MRZ with the expiry moved a year later (check digits recomputed: only the SOD can tell). */
function tamperedMrz(mrz: string): string {
  const year = (Number(mrz.slice(65, 67)) + 1) % 100;
  const expiry = `${String(year).padStart(2, "0")}${mrz.slice(67, 71)}`;
  const line2 = `${mrz.slice(44, 65)}${expiry}${checkDigit(expiry)}${mrz.slice(72, 87)}`;
  const composite = checkDigit(line2.slice(0, 10) + line2.slice(13, 20) + line2.slice(21, 43));
  return `${mrz.slice(0, 44)}${line2}${composite}`;
}

/** A certificate's `C=` is ISO 3166-1 alpha-2; ICAO's test state UTO has none, so its sandbox certificates say `UT`. */
function alpha2Of(country: string): string {
  return country.slice(0, 2);
}

function tlv(tag: number[], value: Uint8Array): Uint8Array<ArrayBuffer> {
  const n = value.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Uint8Array.from([...tag, ...length, ...value]);
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  bytes[0] &= 0x7f;
  return Buffer.from(bytes).toString("hex");
}

export function base64(bytes: ArrayBuffer | Uint8Array): string {
  return Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString("base64");
}

export function bytesOf(text: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(text, "base64"));
}
