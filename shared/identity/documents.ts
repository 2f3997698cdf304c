import * as v from "valibot";
import { cosineSimilarity } from "../engine";
import { FACE_MATCH_GATE } from "./presence";

/**
 * A document attestation inside a capture: what the device read from an identity document (type,
 * issuing country, expiry) and the face embedding of the document photo, computed on the device by
 * the same model as the live face. Neither the image nor the document number ever leaves the
 * device. It becomes a document record when the photo matches the live face and it is unexpired.
 */
export const documentTypes = ["passport", "national_id", "driving_licence", "residence_permit"] as const;

export const documentAttestationSchema = v.strictObject({
  type: v.picklist(documentTypes),
  issuing_country: v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, "ISO 3166-1 alpha-2")),
  expires_on: v.pipe(v.string(), v.isoDate()),
  face_embedding: v.pipe(v.array(v.pipe(v.number(), v.finite(), v.minValue(-1), v.maxValue(1))), v.length(128)),
});

type DocumentAttestation = v.InferOutput<typeof documentAttestationSchema>;

interface VerifiedDocument {
  document_type: DocumentAttestation["type"];
  issuing_country: string;
  expires_on: string;
  face_match_score: number;
}

/** The attestation as a document record, or null when it is expired or its photo is someone else. */
export function verifyDocument(attestation: DocumentAttestation, liveEmbedding: readonly number[], now: Date): VerifiedDocument | null {
  const score = cosineSimilarity(attestation.face_embedding, liveEmbedding);
  if (score < FACE_MATCH_GATE || attestation.expires_on < now.toISOString().slice(0, 10)) return null;
  return {
    document_type: attestation.type,
    issuing_country: attestation.issuing_country,
    expires_on: attestation.expires_on,
    face_match_score: Math.round(score * 10_000) / 10_000,
  };
}
