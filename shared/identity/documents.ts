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
import { ApiError } from "../kernel/errors";
import { documentTypes } from "./mrz";

export { documentTypes };

/** Base64 (RFC 4648 section 4, padded) of at most `max` characters. */
const base64 = (max: number) =>
  v.pipe(v.string(), v.maxLength(max), v.regex(/^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, "base64"));

/**
 * Why an act has no valid document (spec 4.4 rule 3, D-427): the `reason` of `403 DOCUMENT_REQUIRED`.
 * `document_missing`: none on record and none presented; the others name what was wrong with the
 * document presented (passive authentication's steps in their order, then its binding to one person).
 */
export const documentRefusalReasons = [
  "document_missing",
  "document_unreadable",
  "document_data_group_mismatch",
  "document_signature_invalid",
  "document_issuer_untrusted",
  "document_certificate_expired",
  "document_expired",
  "document_portrait_mismatch",
  "document_already_bound",
] as const;
export type DocumentRefusalReason = (typeof documentRefusalReasons)[number];

/**
 * `403 DOCUMENT_REQUIRED` (spec 4.4 rule 3), whatever was wrong: the precise cause in `reason`, its
 * particulars beside it (`data_group`, `certificate`, `detail`), and what would be accepted (D-427).
 */
export function documentRefused(reason: DocumentRefusalReason, particulars: Record<string, unknown> = {}): ApiError {
  return new ApiError("DOCUMENT_REQUIRED", {
    reason,
    ...particulars,
    required: "a valid identity document on record",
    accepted_documents: documentTypes,
  });
}

/** EF.SOD is a few KiB with its certificate; DG1 under 100 bytes; a data group hash at most SHA-512's 64 bytes. */
export const documentEvidenceSchema = v.strictObject({
  sod: base64(32_768),
  dg1: base64(256),
  dg2_hash: base64(88),
  portrait_similarity: v.pipe(v.number(), v.finite(), v.minValue(-1), v.maxValue(1)),
});
