/** The descriptor's `face` (docs/presence-descriptor.md 3.1): embedding and quality from a few frames. Pure. */
import { REFERENCE_FACE_MODEL } from "../../shared/engine/descriptor";

/** One frame's detection: its confidence and the 128-d face descriptor of face-api. */
export interface FaceObservation {
  score: number;
  descriptor: ArrayLike<number>;
}

/** How many of the best frames are averaged. */
export const EMBEDDING_FRAMES = 5;

/**
 * The 5 observations with the highest score, their descriptors averaged component-wise and
 * L2-normalised (6 decimals), and the mean of their scores as the quality (3 decimals). Null
 * without an observation.
 */
export function summariseFace(observations: readonly FaceObservation[]): { model: string; embedding: number[]; quality: number } | null {
  const best = [...observations].sort((a, b) => b.score - a.score).slice(0, EMBEDDING_FRAMES);
  if (best.length === 0) return null;
  const length = best[0]!.descriptor.length;
  const sum = new Float64Array(length);
  for (const observation of best) for (let k = 0; k < length; k++) sum[k] = (sum[k] as number) + (observation.descriptor[k] as number);
  const norm = Math.hypot(...sum);
  const embedding = Array.from(sum, (x) => (norm > 0 ? Math.round((x / norm) * 1e6) / 1e6 : 0));
  const quality = best.reduce((total, observation) => total + observation.score, 0) / best.length;
  return { model: REFERENCE_FACE_MODEL, embedding, quality: Math.round(Math.min(1, Math.max(0, quality)) * 1000) / 1000 };
}
