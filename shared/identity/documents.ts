/**
 * Document evidence inside a capture (docs/documents.md): the device reads an eMRTD's chip and
 * sends EF.SOD and EF.DG1 as read, the hash of EF.DG2 (the portrait, which never leaves the device)
 * and its own match of that portrait to the live face. The server verifies it by passive
 * authentication against the environment's trust list at the capture's time; only then is it a
 * document record. Nothing the caller merely asserts becomes one.
 */
import * as v from "valibot";
import type { Statements } from "../platform/db/client";
import { rpc } from "../platform/db/rpc";
import type { Environment } from "../platform/principal";
import { passiveAuthentication, type VerifiedDocument } from "./passive-authentication";
import { FACE_MATCH_GATE } from "./presence";

export { documentTypes } from "./mrz";

/** Base64 (RFC 4648 section 4, padded) of at most `max` characters. */
const base64 = (max: number) =>
  v.pipe(v.string(), v.maxLength(max), v.regex(/^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, "base64"));

/** EF.SOD is a few KiB with its certificate; DG1 under 100 bytes; a data group hash at most SHA-512's 64 bytes. */
export const documentEvidenceSchema = v.strictObject({
  sod: base64(32_768),
  dg1: base64(256),
  dg2_hash: base64(88),
  portrait_similarity: v.pipe(v.number(), v.finite(), v.minValue(-1), v.maxValue(1)),
});

/**
 * The evidence as a document record, verified against `environment`'s trust list at `at` (the
 * capture's time), or the failing step's error (passive-authentication.ts). The portrait match
 * must clear the same gate as the live face.
 */
export function verifyDocument(
  sql: Statements,
  environment: Environment,
  evidence: v.InferOutput<typeof documentEvidenceSchema>,
  at: Date,
): Promise<VerifiedDocument> {
  return passiveAuthentication(
    evidence,
    at,
    async ({ subject, keyIdentifier }) => {
      const { certificates } = await rpc(sql, "document_trust_anchor_candidates", { environment, subject, key_identifier: keyIdentifier });
      return certificates.map((der) => Uint8Array.from(atob(der), (c) => c.charCodeAt(0)));
    },
    FACE_MATCH_GATE,
  );
}
