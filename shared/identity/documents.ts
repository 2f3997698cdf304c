/**
 * Document evidence inside a capture (docs/documents.md): the device reads an eMRTD's chip and
 * sends EF.SOD and EF.DG1 as read, the hash of EF.DG2 (the portrait, which never leaves the device)
 * and its own match of that portrait to the live face. The server verifies it by passive
 * authentication against the environment's trust list at the capture's time; only then is it a
 * document record. Nothing the caller merely asserts becomes one. This module is the evidence's
 * shape only; its verification (document-verification.ts) brings the CMS and X.509 libraries, so a
 * function that only validates input does not bundle them.
 */
import * as v from "valibot";
import type { ErrorCode } from "../kernel/errors";

export { documentTypes } from "./mrz";

/** Base64 (RFC 4648 section 4, padded) of at most `max` characters. */
const base64 = (max: number) =>
  v.pipe(v.string(), v.maxLength(max), v.regex(/^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, "base64"));

/** What document evidence can be refused with (passive authentication, then its binding to one person). */
export const documentEvidenceCodes = [
  "DOCUMENT_UNREADABLE",
  "DOCUMENT_DATA_GROUP_MISMATCH",
  "DOCUMENT_SIGNATURE_INVALID",
  "DOCUMENT_ISSUER_UNTRUSTED",
  "DOCUMENT_CERTIFICATE_EXPIRED",
  "DOCUMENT_EXPIRED",
  "DOCUMENT_PORTRAIT_MISMATCH",
  "DOCUMENT_ALREADY_BOUND",
] as const satisfies readonly ErrorCode[];

/** EF.SOD is a few KiB with its certificate; DG1 under 100 bytes; a data group hash at most SHA-512's 64 bytes. */
export const documentEvidenceSchema = v.strictObject({
  sod: base64(32_768),
  dg1: base64(256),
  dg2_hash: base64(88),
  portrait_similarity: v.pipe(v.number(), v.finite(), v.minValue(-1), v.maxValue(1)),
});
