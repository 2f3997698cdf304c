/**
 * Face matching in the model's own space (D-385). The reference model (face-api's recognition
 * net, a dlib-style ResNet) puts every two faces close together: distinct real persons measured
 * 0.78 to 0.959 in cosine of the device's L2-normalised embeddings, one person under other
 * cameras, light and occluders 0.95 to 1 (docs/presence-descriptor.md 3.1, `npm run bench:faces`).
 * A gate on raw cosine at 0.75 therefore matched everyone. The comparison stays the cosine of the
 * normalised embeddings (the norm the device drops carries no identity: 1.3 to 1.55 on every face),
 * at a gate of cosine 0.965, and the number the service reports and gates on is the calibrated
 * match score: 0.75 at that cosine, 1 at identity, falling 6.25 times as fast as the cosine. So
 * the spec's gate (0.75 on `confidence`) holds, in the model's real space. At that gate none of
 * the 327,645 pairs of 810 other persons' portraits matched: a false-match rate of at most 1.2 in
 * 100,000 per comparison (95%; `bench:faces --impostors`, D-807).
 */

/** The spec's match gate on the calibrated score (function-api 4.2, limits table). */
export const FACE_MATCH_GATE = 0.75;

/** The cosine of normalised embeddings of the reference model at which the score is the gate. */
export const FACE_COSINE_AT_GATE = 0.965;

/**
 * A near miss: the best candidate reaches the gate but the second best is within this much cosine
 * of it. Identification answers no one then (two enrolled persons both resemble the live face,
 * and which one it is rests on noise); the gap matters more as the gallery grows.
 */
export const NEAR_MISS_COSINE_GAP = 0.01;

/** The calibrated match score of a cosine of normalised embeddings: 0.75 at the gate, in [0, 1]. */
export function matchScore(cosine: number): number {
  const score = 1 - ((1 - cosine) * (1 - FACE_MATCH_GATE)) / (1 - FACE_COSINE_AT_GATE);
  return Math.min(1, Math.max(0, Math.round(score * 10_000) / 10_000));
}

/** Whether a cosine of normalised embeddings is the same face. */
export const sameFace = (cosine: number): boolean => cosine >= FACE_COSINE_AT_GATE;

/** How a 1:N search ended: the best candidate's cosine and the runner-up's (null when there is none). */
export type SearchOutcome = "matched" | "near_miss" | "none";

/** `matched` when the best reaches the gate clear of the runner-up, `near_miss` when it reaches it without that gap. */
export function searchOutcome(best: number | null, second: number | null): SearchOutcome {
  if (best === null || !sameFace(best)) return "none";
  return second !== null && best - second < NEAR_MISS_COSINE_GAP ? "near_miss" : "matched";
}
