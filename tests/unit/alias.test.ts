import { describe, expect, it } from "vitest";
import {
  ALIAS_PATTERN,
  aliasVerdict,
  MAX_SUGGESTIONS,
  normaliseAlias,
  pickSuggestions,
  RESERVED_ALIASES,
  suggestionCandidates,
} from "../../shared/aliases/alias";

describe("normaliseAlias", () => {
  it.each([
    ["alice", "alice"],
    ["@alice", "alice"],
    ["  @Alice  ", "alice"],
    ["ALICE_99", "alice_99"],
    ["@@alice", "alice"],
    ["ana.maria", "anamaria"],
    ["ana maria", "anamaria"],
    ["al-ice!", "alice"],
    ["alice@", "alice"],
    ["ali🙂ce", "alice"],
    // letters and digits outside a-z0-9 stay (composed), for the verdict to refuse
    ["José", "josé"],
    ["Jose\u0301", "josé"],
    ["Мария", "мария"],
    ["", ""],
  ])("%j becomes %j", (input, alias) => {
    expect(normaliseAlias(input)).toBe(alias);
  });
});

describe("aliasVerdict", () => {
  it.each([
    ["é", "é", "ALIAS_INVALID_CHARS"],
    ["josé", "josé", "ALIAS_INVALID_CHARS"],
    ["ana٣", "ana٣", "ALIAS_INVALID_CHARS"],
    ["a.b", "ab", "ALIAS_TOO_SHORT"],
    ["ad.min", "admin", "ALIAS_RESERVED"],
    ["ab", "ab", "ALIAS_TOO_SHORT"],
    ["", "", "ALIAS_TOO_SHORT"],
    ["a".repeat(31), "a".repeat(31), "ALIAS_TOO_LONG"],
    ["1alice", "1alice", "ALIAS_MUST_START_WITH_LETTER"],
    ["_alice", "_alice", "ALIAS_MUST_START_WITH_LETTER"],
    ["alice_", "alice_", "ALIAS_TRAILING_UNDERSCORE"],
    ["al__ice", "al__ice", "ALIAS_DOUBLE_UNDERSCORE"],
    ["a__", "a__", "ALIAS_TRAILING_UNDERSCORE"],
    ["@Admin", "admin", "ALIAS_RESERVED"],
    ["payment", "payment", "ALIAS_RESERVED"],
  ])("%j is refused as %s with %j echoed", (input, alias, code) => {
    expect(aliasVerdict(input)).toEqual({ alias, formatOk: false, formatCode: code });
  });

  it.each(["abc", "a".repeat(30), "ana_maria", "a1_b2_c3", "@Alice", "ana.maria", " @Ana-Maria! "])("%j is valid", (input) => {
    const verdict = aliasVerdict(input);
    expect(verdict).toMatchObject({ formatOk: true, formatCode: null });
    expect(verdict.alias).toMatch(ALIAS_PATTERN);
  });
});

describe("RESERVED_ALIASES", () => {
  it("holds about ninety words, each otherwise a valid alias", () => {
    expect(RESERVED_ALIASES.size).toBeGreaterThanOrEqual(85);
    expect(RESERVED_ALIASES.size).toBeLessThanOrEqual(95);
    for (const word of RESERVED_ALIASES) {
      expect(word).toMatch(ALIAS_PATTERN);
      expect(aliasVerdict(word).formatCode).toBe("ALIAS_RESERVED");
    }
  });

  it.each(["admin", "support", "security", "legal", "official", "api", "login", "receipt", "mandate", "payment"])(
    "includes the spec's %s",
    (word) => expect(RESERVED_ALIASES.has(word)).toBe(true),
  );
});

describe("suggestionCandidates", () => {
  it("is deterministic, valid, distinct and never the alias itself", () => {
    for (const alias of ["ana", "ana_maria", "a".repeat(30), `${"b".repeat(29)}1`, `${"c".repeat(28)}_d`]) {
      const candidates = suggestionCandidates(alias);
      expect(candidates).toEqual(suggestionCandidates(alias));
      expect(candidates.length).toBeGreaterThanOrEqual(MAX_SUGGESTIONS);
      expect(new Set(candidates).size).toBe(candidates.length);
      expect(candidates).not.toContain(alias);
      for (const candidate of candidates) expect(aliasVerdict(candidate)).toMatchObject({ formatOk: true, alias: candidate });
    }
  });

  it("appends 1 to 9, cutting the base short at 30 characters", () => {
    expect(suggestionCandidates("ana")).toEqual(["ana1", "ana2", "ana3", "ana4", "ana5", "ana6", "ana7", "ana8", "ana9"]);
    expect(suggestionCandidates("a".repeat(30))[0]).toBe(`${"a".repeat(29)}1`);
  });
});

describe("pickSuggestions", () => {
  it("keeps at most three free candidates in candidate order", () => {
    const candidates = ["x1", "x2", "x3", "x4", "x5"];
    expect(pickSuggestions(candidates, { x1: false, x2: true, x3: true, x4: true, x5: true })).toEqual(["x2", "x3", "x4"]);
    expect(pickSuggestions(candidates, { x1: false, x5: true })).toEqual(["x5"]);
    expect(pickSuggestions(candidates, {})).toEqual([]);
  });
});
