/**
 * Attestation statements as authenticators make them, for the software authenticator
 * (./authenticator.ts): a test CA made in the test (WebCrypto and @peculiar/x509, real X.509), an
 * attestation certificate it issues, and the `packed` (full and self), `fido-u2f` and `tpm`
 * statements of WebAuthn Level 3 section 8 over a registration's authenticator data and client
 * data. Nothing here knows what the service will decide; a test says which CA signs, and whether
 * the statement's signature is broken on purpose.
 */
import "reflect-metadata";
import { createHash, createPrivateKey, type KeyObject, sign } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { AttributeTypeAndValue, AttributeValue, GeneralName, GeneralNames, Name, RelativeDistinguishedName } from "@peculiar/asn1-x509";
import * as x509 from "@peculiar/x509";

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY = 86_400_000;

/** SHA-256 of bytes or of a string's UTF-8, as WebAuthn hashes the RP id, client data and authenticator data. */
export const sha256 = (data: Uint8Array | string) => new Uint8Array(createHash("sha256").update(data).digest());

/** The bytes of `parts`, one after another. */
export function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const uint16 = (n: number) => new Uint8Array([(n >> 8) & 255, n & 255]);
/** A TPM2B: two bytes of length, then the bytes. */
const tpm2b = (bytes: Uint8Array) => concat(uint16(bytes.length), bytes);

/** A certificate authority made in the test: its self-signed certificate (PEM) and its signing key. */
export interface AttestationCa {
  pem: string;
  certificate: x509.X509Certificate;
  privateKey: CryptoKey;
}

/** A new attestation CA named `name`, valid from a day ago for ten years. */
export async function createAttestationCa(name: string): Promise<AttestationCa> {
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}, O=Test Authenticators, C=PT`,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 3650 * DAY),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 1, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { pem: certificate.toString("pem"), certificate, privateKey: keys.privateKey };
}

function serial(): string {
  return `01${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex")}`;
}

/** The id-fido-gen-ce-aaguid extension (1.3.6.1.4.1.45724.1.1.4): the AAGUID as an OCTET STRING. */
function aaguidExtension(aaguid: Uint8Array): x509.Extension {
  return new x509.Extension("1.3.6.1.4.1.45724.1.1.4", false, concat(new Uint8Array([0x04, aaguid.length]), aaguid));
}

/** An attestation key and the certificate `ca` issued it: what an authenticator model carries. */
interface AttestationKey {
  der: Uint8Array;
  privateKey: KeyObject;
}

async function issueAttestationCertificate(
  ca: AttestationCa,
  kind: "packed" | "fido-u2f" | "tpm",
  aaguid: Uint8Array,
): Promise<AttestationKey> {
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const common = {
    serialNumber: serial(),
    issuer: ca.certificate.subject,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 365 * DAY),
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: ALGORITHM,
  };
  const basic = new x509.BasicConstraintsExtension(false, undefined, true);
  const authority = await x509.AuthorityKeyIdentifierExtension.create(ca.certificate.publicKey);
  let certificate: x509.X509Certificate;
  if (kind === "tpm") {
    // An AIK certificate (TPM 2.0 attestation, WebAuthn 8.3.1): empty subject, the TPM's
    // manufacturer, model and version in a critical subjectAltName, the AIK purpose in the EKU.
    const tpmName = new Name(
      [
        ["2.23.133.2.1", "id:494E5443"], // Intel
        ["2.23.133.2.2", "Test TPM"],
        ["2.23.133.2.3", "id:00020000"],
      ].map(
        ([type, value]) =>
          new RelativeDistinguishedName([new AttributeTypeAndValue({ type, value: new AttributeValue({ utf8String: value }) })]),
      ),
    );
    const san = AsnConvert.serialize(new GeneralNames([new GeneralName({ directoryName: tpmName })]));
    certificate = await x509.X509CertificateGenerator.create({
      ...common,
      subject: "",
      extensions: [
        basic,
        authority,
        new x509.Extension("2.5.29.17", true, san),
        new x509.ExtendedKeyUsageExtension(["2.23.133.8.3"], false),
        aaguidExtension(aaguid),
      ],
    });
  } else {
    certificate = await x509.X509CertificateGenerator.create({
      ...common,
      subject: "C=PT, O=Test Authenticators, OU=Authenticator Attestation, CN=Test Authenticator Attestation",
      extensions: kind === "packed" ? [basic, authority, aaguidExtension(aaguid)] : [basic, authority],
    });
  }
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return {
    der: new Uint8Array(certificate.rawData),
    privateKey: createPrivateKey({ key: Buffer.from(pkcs8), format: "der", type: "pkcs8" }),
  };
}

/**
 * Which statement the authenticator makes: `packed` with a certificate `ca` issued (full) or
 * without one (self, signed by the credential key), `fido-u2f` or `tpm` with `ca`'s certificate.
 * `brokenSignature`: the statement's signature is over other bytes (what a forged statement is).
 */
export type AttestationPlan = ({ format: "packed"; ca?: AttestationCa } | { format: "fido-u2f" | "tpm"; ca: AttestationCa }) & {
  brokenSignature?: boolean;
};

/** What the statement signs over: the registration's own parts. */
export interface AttestationInput {
  authData: Uint8Array;
  clientDataHash: Uint8Array;
  rpIdHash: Uint8Array;
  credentialId: Uint8Array;
  aaguid: Uint8Array;
  /** The credential's P-256 public key coordinates. */
  x: Uint8Array;
  y: Uint8Array;
  /** The credential's own private key (self attestation signs with it). */
  credentialKey: KeyObject;
}

/** The AAGUID a plan's authenticator reports: zeros for fido-u2f (U2F has none), a test model's otherwise. */
export function aaguidOf(plan: AttestationPlan | undefined): Uint8Array {
  if (!plan || plan.format === "fido-u2f") return new Uint8Array(16);
  return new Uint8Array(Buffer.from("7e57ae57a11d4e0fa7dee0a7ee57a7ed", "hex"));
}

/** The attestation statement `plan` asks for: `fmt` and `attStmt` of the attestation object. */
export async function attestationStatement(
  plan: AttestationPlan,
  input: AttestationInput,
): Promise<{ fmt: string; attStmt: Map<string, unknown> }> {
  const tamper = (bytes: Uint8Array) => (plan.brokenSignature ? concat(bytes, new Uint8Array([0])) : bytes);
  if (plan.format === "packed" && !plan.ca) {
    const sig = sign("sha256", tamper(concat(input.authData, input.clientDataHash)), input.credentialKey);
    return {
      fmt: "packed",
      attStmt: new Map<string, unknown>([
        ["alg", -7],
        ["sig", new Uint8Array(sig)],
      ]),
    };
  }
  const key = await issueAttestationCertificate(plan.ca!, plan.format, input.aaguid);
  if (plan.format === "packed") {
    const sig = sign("sha256", tamper(concat(input.authData, input.clientDataHash)), key.privateKey);
    return {
      fmt: "packed",
      attStmt: new Map<string, unknown>([
        ["alg", -7],
        ["sig", new Uint8Array(sig)],
        ["x5c", [key.der]],
      ]),
    };
  }
  if (plan.format === "fido-u2f") {
    const publicKey = concat(new Uint8Array([0x04]), input.x, input.y);
    const signed = concat(new Uint8Array([0x00]), input.rpIdHash, input.clientDataHash, input.credentialId, publicKey);
    const sig = sign("sha256", tamper(signed), key.privateKey);
    return {
      fmt: "fido-u2f",
      attStmt: new Map<string, unknown>([
        ["sig", new Uint8Array(sig)],
        ["x5c", [key.der]],
      ]),
    };
  }
  // tpm: the credential key as a TPMT_PUBLIC (ECC P-256), and a TPMS_ATTEST of it whose extraData
  // is the hash of what a packed statement signs; the AIK signs the TPMS_ATTEST.
  const pubArea = concat(
    uint16(0x0023), // TPM_ALG_ECC
    uint16(0x000b), // nameAlg: SHA-256
    new Uint8Array([0x00, 0x04, 0x00, 0x72]), // objectAttributes: fixedTPM, fixedParent, sensitiveDataOrigin, userWithAuth, sign
    tpm2b(new Uint8Array()), // authPolicy
    uint16(0x0010), // symmetric: TPM_ALG_NULL
    uint16(0x0010), // scheme: TPM_ALG_NULL
    uint16(0x0003), // curve: TPM_ECC_NIST_P256
    uint16(0x0010), // kdf: TPM_ALG_NULL
    tpm2b(input.x),
    tpm2b(input.y),
  );
  const certInfo = concat(
    new Uint8Array([0xff, 0x54, 0x43, 0x47]), // TPM_GENERATED_VALUE
    uint16(0x8017), // TPM_ST_ATTEST_CERTIFY
    tpm2b(new Uint8Array()), // qualifiedSigner
    tpm2b(sha256(concat(input.authData, input.clientDataHash))), // extraData
    new Uint8Array(17), // clockInfo: clock, resetCount, restartCount, safe
    new Uint8Array(8), // firmwareVersion
    tpm2b(concat(uint16(0x000b), sha256(pubArea))), // attested name: nameAlg and the hash of pubArea
    tpm2b(new Uint8Array()), // attested qualifiedName
  );
  const sig = sign("sha256", tamper(certInfo), key.privateKey);
  return {
    fmt: "tpm",
    attStmt: new Map<string, unknown>([
      ["ver", "2.0"],
      ["alg", -7],
      ["x5c", [key.der]],
      ["sig", new Uint8Array(sig)],
      ["certInfo", certInfo],
      ["pubArea", pubArea],
    ]),
  };
}
