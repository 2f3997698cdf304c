import {
  evaluatePresence,
  type PresenceBaseline,
  type PresenceDescriptor,
  type PresenceModality,
  type PresenceResult,
  parseDescriptor,
} from "../engine";
import { ApiError } from "../kernel/errors";
import type { ForcedScenario } from "./scenario";

/** A validated descriptor, or `400 INVALID_INPUT` naming the offending fields under `face_template`. */
export function descriptorFrom(faceTemplate: unknown, captureNonce: string | undefined): PresenceDescriptor {
  if (captureNonce === undefined) throw new ApiError("INVALID_INPUT", { fields: ["capture_nonce"] });
  const parsed = parseDescriptor(faceTemplate, { path: "face_template" });
  if (!parsed.ok) throw new ApiError("INVALID_INPUT", { fields: parsed.fields });
  if (parsed.descriptor.capture_nonce !== captureNonce) {
    throw new ApiError("INVALID_INPUT", { fields: ["capture_nonce", "face_template.capture_nonce"] });
  }
  return parsed.descriptor;
}

/**
 * A face-only capture (D-428) is judged on the light challenge's reflection: its descriptor must be
 * version 2 with `signals.light`, else `400 INVALID_INPUT` naming the version.
 */
export function assertFaceOnlyDescriptor(descriptor: PresenceDescriptor): void {
  if (descriptor.version !== 2 || !descriptor.signals.light) throw new ApiError("INVALID_INPUT", { fields: ["face_template.version"] });
}

interface Judgement {
  result: PresenceResult;
  /** The refusal, if any: the engine's reason, or the one a sandbox scenario forced. */
  refusal: string | null;
  livenessPassed: boolean;
  coercion: boolean;
}

/**
 * Runs the presence engine on a descriptor at the request's instant (a capture older than five
 * minutes is stale) against the identity's baseline, then applies a forced sandbox scenario —
 * which can only turn an acceptance into a refusal, never the reverse.
 */
export function judge(
  descriptor: PresenceDescriptor,
  now: Date,
  baseline: PresenceBaseline | null,
  scenario: ForcedScenario | null,
  modality: PresenceModality = "face_voice",
): Judgement {
  const result = evaluatePresence(descriptor, { baseline, expectedNonce: descriptor.capture_nonce, now, modality });
  let livenessPassed = result.liveness.passed && result.reason !== "capture_stale";
  let coercion = result.coercion.signal;
  let refusal: string | null = result.reason;
  if (scenario === "liveness_fail") {
    livenessPassed = false;
    refusal = "liveness_fail";
  } else if (scenario === "vrc_coerced" && refusal === null) {
    coercion = true;
    refusal = "coercion_detected";
  }
  return { result, refusal, livenessPassed, coercion };
}
