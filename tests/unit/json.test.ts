import { describe, expect, it } from "vitest";
import { escapeUnstorable, hasUnstorableText, numberLiterals, pathKey, tooDeepPath, unstorableTextPaths } from "../../shared/lib/json";
import { isMinorUnitAmount, isMinorUnitLiteral } from "../../shared/lib/money";

describe("numberLiterals", () => {
  it("records every number literal as written, by path, through strings with escapes, keys with escapes and arrays", () => {
    const text = '{"a": 1.0, "s": "x\\"1.5\\\\", "k\\u0041": [1e3, {"amount": -0}, [], 7], "e": 1E+2, "t": [true, null, false, 3]}';
    expect(Object.fromEntries(numberLiterals(text))).toEqual({
      [pathKey(["a"])]: "1.0",
      [pathKey(["kA", "0"])]: "1e3",
      [pathKey(["kA", "1", "amount"])]: "-0",
      [pathKey(["kA", "3"])]: "7",
      [pathKey(["e"])]: "1E+2",
      [pathKey(["t", "3"])]: "3",
    });
    expect(numberLiterals("12.50").get(pathKey([]))).toBe("12.50");
  });

  it("keeps the last literal of a repeated key, as JSON.parse does", () => {
    expect(numberLiterals('{"amount": 1.0, "amount": 5}').get(pathKey(["amount"]))).toBe("5");
    expect(numberLiterals('{"c": {"amount": 5}, "c": {"amount": 5.0}}').get(pathKey(["c", "amount"]))).toBe("5.0");
  });

  it("walks a body nested far deeper than the call stack allows", () => {
    const deep = `${"[".repeat(200_000)}1.5${"]".repeat(200_000)}`;
    expect(numberLiterals(deep).size).toBe(1);
    expect(unstorableTextPaths(JSON.parse(deep.replace("1.5", '"\\u0000"')))).toHaveLength(1);
  });
});

describe("tooDeepPath", () => {
  it("names the first container past the limit, counting the value itself as level 1", () => {
    expect(tooDeepPath({ a: [[1]] }, 3)).toBeNull();
    expect(tooDeepPath({ a: [[1]] }, 2)).toEqual(["a", "0"]);
    expect(tooDeepPath({ ok: { x: 1 }, b: [{ c: {} }] }, 3)).toEqual(["b", "0", "c"]);
    expect(tooDeepPath("text", 1)).toBeNull();
    expect(tooDeepPath([], 0)).toEqual([]);
  });

  it("walks a body nested far deeper than the call stack allows", () => {
    const deep = JSON.parse(`{"a": ${"[".repeat(200_000)}${"]".repeat(200_000)}}`);
    expect(tooDeepPath(deep, 32)).toEqual(["a", ...Array(31).fill("0")]);
  });
});

describe("money as written", () => {
  it.each(["0", "7", "1299", "9007199254740991"])("%s is money", (literal) => expect(isMinorUnitLiteral(literal)).toBe(true));
  it.each(["1299.0", "1e3", "1E3", "100.00", "-0", "-1", "0.0", "1e-0"])("%s is a float as written", (literal) =>
    expect(isMinorUnitLiteral(literal)).toBe(false),
  );
  it("refuses negative zero as a parsed value too", () => {
    expect(isMinorUnitAmount(-0)).toBe(false);
    expect(isMinorUnitAmount(0)).toBe(true);
  });
});

describe("unstorable text", () => {
  it("finds NULs and unpaired surrogates in values and keys, and lets paired surrogates through", () => {
    expect(hasUnstorableText("ok \ud83d\ude00")).toBe(false);
    expect(["a\u0000", "\ud800", "x\udc00", "\ude00\ud83d"].map(hasUnstorableText)).toEqual([true, true, true, true]);
    const paths = unstorableTextPaths({ a: ["ok", "\ud800"], "b\u0000": { c: "fine" }, d: { e: "\u0000" } });
    expect(paths).toEqual([["a", "1"], ["b\u0000"], ["d", "e"]]);
    expect(escapeUnstorable("b\u0000\ud800")).toBe("b\\u0000\\ud800");
  });
});
