/** Verification of document evidence (documents.ts) by passive authentication against a trust list. */
import type * as v from "valibot";
import type { Statements } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type { Environment } from "../kernel/principal";
import type { documentEvidenceSchema } from "./documents";
import { FACE_MATCH_GATE } from "./face-match";
import { passiveAuthentication, type VerifiedDocument } from "./passive-authentication";
import type {} from "./rpc";

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
