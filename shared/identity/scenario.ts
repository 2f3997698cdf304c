import { ApiError, type ErrorCode } from "../kernel/errors";
import type { Environment } from "../kernel/principal";

export const scenarios = ["success", "liveness_fail", "vrc_coerced", "subject_mismatch", "duplicate_enroll"] as const;
type Scenario = (typeof scenarios)[number];
/** A scenario that forces a failure path; `success` forces nothing and is reported as null. */
export type ForcedScenario = Exclude<Scenario, "success">;

/** The sandbox scenario header (spec section 1). */
export const SCENARIO_HEADER = "x-service-scenario";

/** What a scenario header can be refused with (forcedScenario). */
export const scenarioCodes = ["SCENARIO_NOT_ALLOWED", "INVALID_SCENARIO"] as const satisfies readonly ErrorCode[];

/**
 * The sandbox scenario a request asks for (`x-service-scenario`, spec section 1). Sandbox keys
 * only: with a live principal the header is `400 SCENARIO_NOT_ALLOWED`. `success` injects nothing;
 * the real engine still judges the real descriptor, so the sandbox never fabricates an approval —
 * the other values only ever force a refusal.
 */
export function forcedScenario(header: string | undefined, environment: Environment): ForcedScenario | null {
  if (header === undefined) return null;
  if (environment !== "test") throw new ApiError("SCENARIO_NOT_ALLOWED");
  if (!(scenarios as readonly string[]).includes(header)) throw new ApiError("INVALID_SCENARIO");
  return header === "success" ? null : (header as ForcedScenario);
}
