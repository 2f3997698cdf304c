import type { AppContext } from "../platform/app";
import { ApiError } from "../platform/errors";

export const scenarios = ["success", "liveness_fail", "vrc_coerced", "subject_mismatch", "duplicate_enroll"] as const;
export type Scenario = (typeof scenarios)[number];
/** A scenario that forces a failure path; `success` forces nothing and is reported as null. */
export type ForcedScenario = Exclude<Scenario, "success">;

/**
 * The sandbox scenario header (`x-service-scenario`, spec section 1). Sandbox keys only: with a
 * live principal the header is `400 SCENARIO_NOT_ALLOWED`. `success` injects nothing; the real
 * engine still judges the real descriptor, so the sandbox never fabricates an approval — the
 * other values only ever force a refusal.
 */
export function forcedScenario(c: AppContext): ForcedScenario | null {
  const header = c.req.header("x-service-scenario");
  if (header === undefined) return null;
  if (c.var.principal?.environment !== "test") throw new ApiError("SCENARIO_NOT_ALLOWED");
  if (!(scenarios as readonly string[]).includes(header)) throw new ApiError("INVALID_SCENARIO");
  return header === "success" ? null : (header as ForcedScenario);
}
