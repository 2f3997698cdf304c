import { describe, expect, it } from "vitest";
import {
  FACE_COSINE_AT_GATE,
  FACE_MATCH_GATE,
  matchScore,
  NEAR_MISS_COSINE_GAP,
  sameFace,
  searchOutcome,
} from "../../shared/identity/face-match";

describe("face matching in the model's space (D-385)", () => {
  it("scores the gate's cosine at the spec's 0.75, identity at 1, and never outside [0, 1]", () => {
    expect(matchScore(FACE_COSINE_AT_GATE)).toBe(FACE_MATCH_GATE);
    expect(matchScore(1)).toBe(1);
    expect(matchScore(-1)).toBe(0);
    expect(matchScore(0.99)).toBeGreaterThan(matchScore(0.98));
  });

  it("refuses every pair of distinct real persons measured, and the reported pair", () => {
    // The reported pair (cosine 0.894) and the closest distinct pair of `npm run bench:faces` (0.959).
    for (const cosine of [0.894, 0.921, 0.959]) {
      expect(sameFace(cosine)).toBe(false);
      expect(matchScore(cosine)).toBeLessThan(FACE_MATCH_GATE);
    }
    expect(sameFace(0.975)).toBe(true);
  });

  it("tells a match from a near miss by the runner-up's gap", () => {
    expect(searchOutcome(null, null)).toBe("none");
    expect(searchOutcome(0.95, null)).toBe("none");
    expect(searchOutcome(0.99, null)).toBe("matched");
    expect(searchOutcome(0.99, 0.9)).toBe("matched");
    expect(searchOutcome(0.99, 0.99 - NEAR_MISS_COSINE_GAP / 2)).toBe("near_miss");
    expect(searchOutcome(0.99, 0.99 - NEAR_MISS_COSINE_GAP)).toBe("matched");
  });
});
