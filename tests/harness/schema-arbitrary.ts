/**
 * fast-check arbitraries read from valibot schemas: values a schema's shape, types, lengths,
 * patterns, ranges and options allow. What a schema cannot say (a `check`, a `custom`, a value that
 * must name a fixture) comes from `overrides`, by dot path. Used by the generated-input test
 * (tests/platform/fuzz.test.ts) to build requests that get deep into each function.
 */
import fc from "fast-check";

/** The parts of a valibot schema or action this reader follows (valibot's own object shape). */
interface Node {
  kind: string;
  type: string;
  pipe?: readonly Node[];
  requirement?: unknown;
  entries?: Record<string, Node>;
  wrapped?: Node;
  options?: readonly (Node | string | number)[];
  item?: Node;
  literal?: unknown;
}

/** Arbitraries for the fields a schema cannot describe, by dot path (`ceiling.currency`). */
export type Overrides = Record<string, fc.Arbitrary<unknown>>;

/** Strings longer than this are never drawn unless a schema requires them: they add nothing but bytes. */
const LONGEST_DRAWN = 48;

/**
 * An arbitrary of the values `schema` describes; an optional field is sometimes absent.
 *
 * @example fc.sample(arbitraryOf(revokeSchema, { mandate_id: fc.constant(id) }), 3)
 */
export function arbitraryOf(schema: unknown, overrides: Overrides = {}, path = ""): fc.Arbitrary<unknown> {
  if (path in overrides) return overrides[path];
  const node = schema as Node;
  // A pipe of schemas (`v.pipe(jsonObject, v.strictObject(…), v.transform(…), v.variant(…))`) ends in
  // the schema the value must finally satisfy; the schemas before it accept whatever it accepts.
  const schemas = (node.pipe ?? []).slice(1).filter((step) => step.kind === "schema");
  if (schemas.length > 0) return arbitraryOf(schemas[schemas.length - 1], overrides, path);
  const actions = (node.pipe ?? []).slice(1);
  const requirement = (type: string) => actions.find((action) => action.type === type)?.requirement;
  switch (node.type) {
    case "string":
      return stringArbitrary(requirement);
    case "number":
      return numberArbitrary(
        requirement,
        actions.some((action) => action.type === "integer" || action.type === "safe_integer"),
      );
    case "boolean":
      return fc.boolean();
    case "literal":
      return fc.constant(node.literal);
    case "picklist":
      return fc.constantFrom(...(node.options as (string | number)[]));
    case "optional":
    case "nullish":
      return fc.option(arbitraryOf(node.wrapped, overrides, path), { nil: undefined, freq: 3 });
    case "object":
    case "strict_object":
    case "loose_object":
      return objectArbitrary(node.entries ?? {}, overrides, path);
    case "array": {
      const min = (requirement("min_length") ?? requirement("length") ?? 0) as number;
      const max = (requirement("max_length") ?? requirement("length") ?? Math.max(min, 4)) as number;
      return fc.array(arbitraryOf(node.item, overrides, `${path}[]`), { minLength: min, maxLength: Math.min(max, Math.max(min, 4)) });
    }
    case "union":
    case "variant":
      return fc.oneof(...(node.options as Node[]).map((option) => arbitraryOf(option, overrides, path)));
    case "never":
      return fc.constant(undefined);
    default:
      // unknown, custom: the schema says nothing a generator could use
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectArbitrary(entries: Record<string, Node>, overrides: Overrides, path: string): fc.Arbitrary<unknown> {
  const fields = Object.fromEntries(
    Object.entries(entries).map(([key, entry]) => [key, arbitraryOf(entry, overrides, path ? `${path}.${key}` : key)]),
  );
  // an optional field drawn as undefined is left out, as a client leaves it out
  return fc.record(fields).map((record) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)));
}

function stringArbitrary(requirement: (type: string) => unknown): fc.Arbitrary<string> {
  if (requirement("uuid")) return fc.uuid();
  if (requirement("iso_timestamp") || requirement("iso_date")) {
    const date = fc.date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2030-12-31T00:00:00Z"), noInvalidDate: true });
    return date.map((at) => (requirement("iso_date") ? at.toISOString().slice(0, 10) : at.toISOString()));
  }
  const min = (requirement("min_length") ?? requirement("length") ?? 0) as number;
  const max = (requirement("max_length") ?? requirement("length") ?? LONGEST_DRAWN) as number;
  const pattern = requirement("regex");
  if (pattern instanceof RegExp) {
    // A pattern sets its own lengths: only a declared bound may narrow them. LONGEST_DRAWN here would
    // leave a pattern of 64 hex digits with no string to draw, and the filter would search forever.
    const longest = (requirement("max_length") ?? requirement("length") ?? Number.POSITIVE_INFINITY) as number;
    return fc.stringMatching(pattern).filter((text) => text.length >= min && text.length <= longest);
  }
  const usual = fc.string({ minLength: min, maxLength: Math.min(max, Math.max(min, LONGEST_DRAWN)) });
  // the edges of the allowed lengths, where off-by-one lives
  return fc.oneof({ weight: 6, arbitrary: usual }, { weight: 1, arbitrary: fc.constantFrom(min, max).map((length) => "a".repeat(length)) });
}

function numberArbitrary(requirement: (type: string) => unknown, integer: boolean): fc.Arbitrary<number> {
  const min = requirement("min_value") as number | undefined;
  const max = requirement("max_value") as number | undefined;
  if (integer) {
    const lowest = min ?? Number.MIN_SAFE_INTEGER;
    const highest = max ?? Number.MAX_SAFE_INTEGER;
    // the edges of the range and of the integer types a database might hold it in
    const edges = [lowest, highest, 2 ** 31 - 1, 2 ** 31].filter((n) => n >= lowest && n <= highest);
    const usual = fc.integer({ min: Math.max(lowest, -1_000_000), max: Math.min(highest, 1_000_000) });
    return fc.oneof({ weight: 6, arbitrary: usual }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
  }
  return fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true, noDefaultInfinity: true });
}
