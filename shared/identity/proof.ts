/**
 * What the resource API's identity routes share: the presence proof v1 the device SDK emits
 * (shared/engine/proof.ts), judged live at the request's instant, and the person it shows as this
 * merchant knows them: the facetoken (the merchant's subject_ref of the person).
 */
import * as v from "valibot";
import { MAX_PROOF_LENGTH, type PresenceDescriptor, type PresenceProof, parseProof } from "../engine";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { matchScore, sameFace } from "./face-match";
import { judge } from "./presence";
import { SUBJECT_REF, subjectRef } from "./subject-ref";
import { bestMatch, type Templates } from "./template-store";

/** What a proof looks like, for the documents' examples (its descriptor is cut short: a real one is some 60 KB). */
export const PROOF_EXAMPLE =
  "pp1.eyJkZXNjcmlwdG9yIjp7InZlcnNpb24iOjJ9LCJjb25zZW50Ijp7InZlcnNpb24iOiIyMDI2LTExIiwicmV0ZW50aW9uX2RheXMiOjM2NX19";

/** The `proof` field of a body: a string; what it carries is judged by `proofFrom`. */
export const proofField = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(MAX_PROOF_LENGTH),
  v.description(
    'The presence proof the device SDK emits: "pp1." then the unpadded base64url of the UTF-8 JSON {"descriptor": <presence descriptor of one capture (docs/presence-descriptor.md)>, "consent": {"version", "retention_days"}}. Forward it unchanged; a capture proves one act, within five minutes of captured_at.',
  ),
);

/** The `facetoken` field of a body: a pseudonym this service gave the merchant (`sub_` and 48 hex). */
export const facetokenField = v.pipe(v.string(), v.regex(SUBJECT_REF, "a facetoken (sub_ and 48 hex)"));

/** The proof a string carries, or `400 INVALID_INPUT` naming `proof` or the descriptor's fields at fault. */
export function proofFrom(proof: string): PresenceProof {
  const parsed = parseProof(proof);
  if (!parsed.ok) throw new ApiError("INVALID_INPUT", { fields: parsed.fields });
  return parsed.proof;
}

/**
 * The engine's judgement of the proof's descriptor at `now` (a capture older than five minutes is
 * stale); a refusal is `403 LIVENESS_REQUIRED` with the engine's reason.
 */
export function judgedLive(descriptor: PresenceDescriptor, now: Date) {
  const judgement = judge(descriptor, now, null, null);
  if (!judgement.livenessPassed) throw new ApiError("LIVENESS_REQUIRED", { reason: judgement.refusal });
  return judgement;
}

/** What a merchant's templates and pseudonyms need. */
export interface RecognitionKeys {
  templates: Templates;
  subjectRefSecret: string;
}

/**
 * The facetoken of the person whose protected embedding this is, among the persons with an active
 * consent with the merchant (never another merchant's), with the similarity; null when nobody
 * reaches the 0.75 gate or the match is an erased identity. A read: nothing is written.
 */
export async function recognisedBy(
  keys: RecognitionKeys,
  tenant: Tenant,
  protectedEmbedding: number[],
): Promise<{ facetoken: string; identityId: string; similarity: number } | null> {
  const match = await bestMatch(keys.templates, tenant.environment, protectedEmbedding, tenant.merchantId).catch((error) => {
    throw error instanceof ApiError && error.code === "DATABASE_UNAVAILABLE" ? new ApiError("TEMPLATE_STORE_UNAVAILABLE") : error;
  });
  if (!match?.reachable || !sameFace(match.similarity)) return null;
  const facetoken = await subjectRef(keys.subjectRefSecret, match.identity_id, tenant.merchantId);
  return { facetoken, identityId: match.identity_id, similarity: matchScore(match.similarity) };
}
