/**
 * Requests for the generated-input test (tests/platform/fuzz.test.ts), as data drawn by fast-check:
 * a route of a function (./fuzz-plans.ts) with its valid-ish input, then mutated with hostile values
 * (wrong types, NUL, lone surrogates, huge and negative numbers, deep nesting, unknown fields), and
 * headers that are each sometimes missing or malformed.
 */
import fc from "fast-check";
import { type FunctionPlan, type RoutePlan, sometimes } from "./fuzz-plans";

/** A JSON value written into the body exactly as this text (`1e3`, `-0`, 100,000 nested arrays). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Who a request's credentials are, as the sender chooses them for the function's policy. */
type KeyPlan = "right" | "secret" | "publishable" | "live" | "missing" | "revoked" | "unknown" | "legacy" | "both" | { malformed: string };
/** What `Authorization` carries besides a route's own bearer credential. */
type AuthorizationPlan = "user" | "service" | "wrong-service" | "missing" | { raw: string };
type ReplayPlan = "good" | "missing" | "reused" | { raw: string };
type IdempotencyPlan = "fresh" | "missing" | "reused" | { raw: string };

export interface Recipe {
  fn: string;
  route: RoutePlan;
  method: string;
  /** Appended to the route's path: mostly nothing, else a path no route has. */
  suffix: string;
  body:
    | { kind: "none" }
    | { kind: "json"; value: unknown }
    | { kind: "form"; value: unknown }
    | { kind: "raw"; text: string }
    | { kind: "bytes"; bytes: number[] };
  query: { kind: "none" } | { kind: "params"; value: Record<string, unknown> } | { kind: "raw"; text: string };
  key: KeyPlan;
  /** Absent: the route's own bearer credential, if it has one. */
  authorization?: AuthorizationPlan;
  timestamp: ReplayPlan;
  nonce: ReplayPlan;
  idempotency: IdempotencyPlan;
  scenario?: string;
  contentType: string | null;
  accept?: string;
  version?: string;
  language?: string;
  requestId?: string;
  /** What was made hostile, for the figures and for failure reports; empty: a request as a client means it. */
  hostile: string[];
}

// ---------------------------------------------------------------- hostile values

const raw = (text: string) => new RawJson(text);
const nestedArrays = (depth: number) => raw(`${"[".repeat(depth)}${"]".repeat(depth)}`);
const nestedObjects = (depth: number) => raw(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);

/** Text no column can store, text that looks like something else, and text of every length. */
const hostileText = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x\udc00y",
    "\udbff\ud800",
    "\ud83d\ude00",
    "\u202e\u0301",
    "",
    " ",
    "\t\n",
    "' OR 1=1 --",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "%00",
    "\\",
    '"',
    "null",
    "mdt_00000000000000000000000000000000",
    "sub_000000000000000000000000000000000000000000000000",
    "*",
    "purchase*",
    "9999-12-31T23:59:59Z",
    "0000-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "+275760-09-13T00:00:00.000Z",
  ),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.integer({ min: 65, max: 70_000 }).map((length) => "x".repeat(length)),
);

/** Numbers at and past every edge, some only expressible as written. */
const hostileNumber = fc.oneof(
  fc.constantFrom(
    0,
    -1,
    1.5,
    -0.5,
    2147483648,
    -2147483649,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    raw("-0"),
    raw("1.0"),
    raw("1e3"),
    raw("1E+2"),
    raw("1e400"),
    raw("-1e400"),
    raw("1e-400"),
    raw("9007199254740993"),
    raw("123456789012345678901234567890"),
    raw("-9223372036854775809"),
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Any value a client should never send where a field is expected. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, true, false, [], {}, [1, 2], { a: 1 }, "x", 0) },
  { weight: 4, arbitrary: hostileText },
  { weight: 3, arbitrary: hostileNumber },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.integer({ min: 20, max: 150_000 }).map(nestedArrays), fc.integer({ min: 20, max: 45_000 }).map(nestedObjects)),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Whole bodies that are not what any function reads. */
const hostileRawBody = fc.oneof(
  fc.constantFrom(
    "",
    "null",
    "[]",
    "{",
    '{"a":}',
    '"\\u0000"',
    '"\\ud800"',
    "[1,2,3]",
    "true",
    "1e400",
    "\ufeff{}",
    "{}garbage",
    '{"a":1,"a":2}',
    "NaN",
    "{'a':1}",
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    `{"x":"${"y".repeat(300_000)}"}`,
    `${"[".repeat(131_000)}${"]".repeat(131_000)}`,
    `{"x":${"[".repeat(60_000)}${"1,".repeat(40_000)}1${"]".repeat(60_000)},"amount":1}`,
  ),
  fc.string({ unit: "binary", maxLength: 60 }),
);

type Mutation =
  | { kind: "set"; path: string[]; value: unknown }
  | { kind: "delete"; path: string[] }
  | { kind: "add"; path: string[]; key: string; value: unknown };

/** Paths of every object and array (and of each array's first item) a mutation may aim at. */
function pathsOf(value: unknown, path: string[] = [], found: string[][] = []): string[][] {
  found.push(path);
  if (value instanceof RawJson || typeof value !== "object" || value === null) return found;
  const entries = Array.isArray(value) ? value.slice(0, 1).map((item, index) => [String(index), item] as const) : Object.entries(value);
  for (const [key, child] of entries) pathsOf(child, [...path, key], found);
  return found;
}

function containerAt(value: unknown, path: string[]): unknown {
  let at = value;
  for (const key of path) at = at !== null && typeof at === "object" && !(at instanceof RawJson) ? (at as any)[key] : undefined;
  return at;
}

/** `value` with one mutation applied; the original is never changed (RawJson leaves are shared). */
function mutate(value: unknown, mutation: Mutation): unknown {
  const path = mutation.path;
  if (mutation.kind === "set" && path.length === 0) return mutation.value;
  const edit = (node: unknown, depth: number): unknown => {
    if (node === null || typeof node !== "object" || node instanceof RawJson) return node;
    const key = path[depth];
    const last = depth === path.length - 1;
    if (mutation.kind === "add" && depth === path.length) {
      if (Array.isArray(node)) return [...node, mutation.value];
      // fromEntries defines `__proto__` as an own key, as JSON.parse does
      return Object.fromEntries([...Object.entries(node), [mutation.key, mutation.value]]);
    }
    if (Array.isArray(node)) {
      const copy = [...node];
      if (last && mutation.kind === "delete") copy.splice(Number(key), 1);
      else if (last && mutation.kind === "set") copy[Number(key)] = mutation.value;
      else copy[Number(key)] = edit(copy[Number(key)], depth + 1);
      return copy;
    }
    const entries = Object.entries(node).filter(([k]) => !(last && mutation.kind === "delete" && k === key));
    return Object.fromEntries(
      entries.map(([k, v]) => [k, k !== key ? v : last && mutation.kind === "set" ? mutation.value : edit(v, depth + 1)]),
    );
  };
  return edit(value, 0);
}

function mutations(value: unknown): fc.Arbitrary<Mutation[]> {
  const paths = pathsOf(value);
  const inner = paths.filter((path) => path.length > 0);
  const containers = paths.filter((path) => {
    const at = containerAt(value, path);
    return at !== null && typeof at === "object" && !(at instanceof RawJson);
  });
  const unknownKey = fc.oneof(
    fc.constantFrom("user_id", "__proto__", "constructor", "prototype", "toString", "merchant_id", "mandate_id", "bypass", ""),
    fc.string({ maxLength: 12 }),
    fc.string({ unit: "binary", maxLength: 6 }),
  );
  const options: fc.WeightedArbitrary<Mutation>[] = [
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("set" as const), path: fc.constantFrom(...paths), value: hostileValue }) },
  ];
  if (inner.length)
    options.push({ weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), path: fc.constantFrom(...inner) }) });
  if (containers.length) {
    options.push({
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("add" as const),
        path: fc.constantFrom(...containers),
        key: unknownKey,
        value: fc.oneof(hostileValue, fc.jsonValue({ maxDepth: 2 })),
      }),
    });
  }
  return fc.array(fc.oneof(...options), { minLength: 1, maxLength: 3 });
}

// ---------------------------------------------------------------- headers

/** What an HTTP client lets through in a header value: visible ASCII, space, and the bytes 0x80 to 0xff. */
const headerText = fc.string({
  unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((code) => String.fromCharCode(code)),
  maxLength: 80,
});

const keyPlan = (route: RoutePlan): fc.Arbitrary<KeyPlan> =>
  fc
    .oneof(
      { weight: 40, arbitrary: fc.constant("right" as const) },
      { weight: 2, arbitrary: fc.constantFrom<KeyPlan>("secret", "publishable", "live", "legacy", "both") },
      { weight: 3, arbitrary: fc.constantFrom<KeyPlan>("missing", "revoked", "unknown") },
      {
        weight: 2,
        arbitrary: fc
          .oneof(
            headerText,
            fc.constantFrom("sk_test_", "sk_test_short", `pk_live_${"a".repeat(129)}`, `sk_prod_${"a".repeat(40)}`, "Bearer sk_test_x"),
          )
          .map((malformed) => ({ malformed })),
      },
    )
    .map((key) => (route.key === "none" && key === "right" ? "missing" : key));

const replayPlan = (good: number): fc.Arbitrary<ReplayPlan> =>
  fc.oneof(
    { weight: good, arbitrary: fc.constant("good" as const) },
    { weight: 1, arbitrary: fc.constantFrom<ReplayPlan>("missing", "reused") },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          headerText,
          fc.constantFrom(
            "-1",
            "0",
            "1e9",
            " 1700000000",
            "99999999999999999999999999999999999",
            "\u00b9\u00b2\u00b3",
            String(Date.now()),
            "abc",
          ),
        )
        .map((text) => ({ raw: text })),
    },
  );

const idempotencyPlan: fc.Arbitrary<IdempotencyPlan> = fc.oneof(
  { weight: 20, arbitrary: fc.constant("fresh" as const) },
  { weight: 2, arbitrary: fc.constantFrom<IdempotencyPlan>("missing", "reused") },
  {
    weight: 2,
    arbitrary: fc
      .oneof(headerText, fc.constantFrom("short", "has space key", "x".repeat(201), "é-not-ascii-key", "x".repeat(200)))
      .map((text) => ({ raw: text })),
  },
);

/** A request for one of `plan`'s routes: usually what a client means, else with some of its parts hostile. */
export function recipeOf(plan: FunctionPlan): fc.Arbitrary<Recipe> {
  return fc.oneof(...plan.routes.map((route) => ({ weight: route.weight ?? 1, arbitrary: routeRecipe(plan.name, route) })));
}

function routeRecipe(fn: string, route: RoutePlan): fc.Arbitrary<Recipe> {
  const pristineInput = route.body ?? fc.constant({});
  const input = pristineInput.chain((value) =>
    fc.oneof(
      { weight: 5, arbitrary: fc.constant({ value, hostile: [] as string[] }) },
      {
        weight: 5,
        arbitrary: mutations(value).map((list) => ({
          value: list.reduce(mutate, value),
          hostile: list.map((m) => `body.${m.kind}`),
        })),
      },
    ),
  );
  const method = fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom(...route.methods) },
    { weight: 1, arbitrary: fc.constantFrom("PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "GET", "POST") },
  );
  const suffix = fc.oneof(
    { weight: 30, arbitrary: fc.constant("") },
    { weight: 1, arbitrary: fc.constantFrom("/x", "/", "//", "/%00", "/..%2f") },
  );
  const bodyShape = fc.oneof(
    { weight: 20, arbitrary: fc.constant("typed" as const) },
    { weight: 1, arbitrary: fc.constant("raw" as const) },
    { weight: 1, arbitrary: fc.constant("bytes" as const) },
  );
  const ownBearer = route.bearer === "screen" || route.bearer === "agent" || route.bearer === "user";
  return fc
    .record({
      method,
      suffix,
      input,
      bodyShape,
      rawBody: hostileRawBody,
      bytes: fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 16 }),
      rawQuery: fc.constantFrom("%", "%zz", "%ED%A0%80", "%00", "%C0%80", "id=%ED%A0%80", "status=active&status=revoked", "a=1&a=2&a[b]=3"),
      queryShape: fc.oneof(
        { weight: 20, arbitrary: fc.constant("params" as const) },
        { weight: 1, arbitrary: fc.constant("raw" as const) },
      ),
      key: keyPlan(route),
      authorization: sometimes(
        fc.oneof(
          fc.constantFrom<AuthorizationPlan>("user", "service", "wrong-service", "missing"),
          fc
            .oneof(headerText, fc.constantFrom("Bearer", "Bearer ", "Basic abc", "Bearer a.b.c", "Bearer svc_", "Bearer hsc_x"))
            .map((text) => ({ raw: text })),
        ),
        route.userJwt || route.serviceRole || ownBearer ? 3 : 15,
      ),
      timestamp: replayPlan(route.replay ? 25 : 3),
      nonce: replayPlan(route.replay ? 25 : 3),
      idempotency: route.idempotency ? idempotencyPlan : fc.constantFrom<IdempotencyPlan>("missing", "missing", "missing", "fresh"),
      scenario: sometimes(
        fc.oneof(
          fc.constantFrom("success", "liveness_fail", "vrc_coerced", "subject_mismatch", "duplicate_enroll"),
          headerText.map((text) => text.trim() || "x"),
        ),
        route.scenario ? 6 : 20,
      ),
      contentType: fc.oneof(
        { weight: 30, arbitrary: fc.constant(route.input === "form" ? "application/x-www-form-urlencoded" : "application/json") },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            null,
            "text/plain",
            "application/problem+json",
            "application/json; charset=utf-16",
            "multipart/form-data",
            "application/jsonx",
            "application/x-www-form-urlencoded",
          ),
        },
      ),
      accept: route.jsonRpc
        ? often(fc.constant("application/json, text/event-stream"), fc.constantFrom(undefined, "text/html", "application/json"), 20)
        : fc.constant(undefined),
      version: route.version
        ? sometimes(often(fc.constant("2026-09-14"), fc.oneof(headerText, fc.constant("2020-01-01"))), 3)
        : fc.constant(undefined),
      requestId: sometimes(headerText, 10),
      language: sometimes(fc.oneof(fc.constantFrom("en", "pt-BR", "es", "pt", "fr", "*", "es;q=abc, pt;q=2"), headerText), 3),
    })
    .map((r) => {
      const hostile = [...r.input.hostile];
      const mark = (condition: boolean, label: string) => condition && hostile.push(label);
      mark(!route.methods.includes(r.method), "method");
      mark(r.suffix !== "", "path");
      mark(r.key !== "right" && route.key !== "none", `header.key.${typeof r.key === "string" ? r.key : "malformed"}`);
      mark(r.authorization !== undefined && r.authorization !== "user" && r.authorization !== "service", "header.authorization");
      mark(!!route.replay && r.timestamp !== "good", "header.timestamp");
      mark(!!route.replay && r.nonce !== "good", "header.nonce");
      mark(!!route.idempotency && r.idempotency !== "fresh", "header.idempotency-key");
      mark(r.scenario !== undefined && r.scenario !== "success", "header.scenario");
      mark(
        !r.contentType?.startsWith(route.input === "form" ? "application/x-www-form-urlencoded" : "application/json") ||
          r.contentType.includes("utf-16"),
        "header.content-type",
      );
      mark(!!route.jsonRpc && r.accept !== "application/json, text/event-stream", "header.accept");
      mark(r.version !== undefined && r.version !== "2026-09-14", "header.service-version");
      const readsBody = route.input === "json" || route.input === "form" || (route.input === "json-or-query" && r.method === "POST");
      const readsQuery = route.input === "query" || (route.input === "json-or-query" && r.method !== "POST");
      let body: Recipe["body"] = { kind: "none" };
      let query: Recipe["query"] = { kind: "none" };
      if (r.bodyShape === "raw") body = { kind: "raw", text: r.rawBody };
      else if (r.bodyShape === "bytes") body = { kind: "bytes", bytes: r.bytes };
      else if (readsBody) body = { kind: route.input === "form" ? "form" : "json", value: r.input.value };
      mark(r.bodyShape !== "typed", `body.${r.bodyShape}`);
      if (readsQuery) {
        query =
          r.queryShape === "raw" ? { kind: "raw", text: r.rawQuery } : { kind: "params", value: r.input.value as Record<string, unknown> };
        mark(r.queryShape === "raw", "query.raw");
      }
      return {
        fn,
        route,
        method: r.method,
        suffix: r.suffix,
        body,
        query,
        key: r.key,
        authorization: r.authorization,
        timestamp: r.timestamp,
        nonce: r.nonce,
        idempotency: r.idempotency,
        scenario: r.scenario,
        contentType: r.contentType,
        accept: r.accept,
        version: r.version,
        language: r.language,
        requestId: r.requestId,
        hostile,
      } satisfies Recipe;
    });
}

const often = <T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>, weight = 8) =>
  fc.oneof({ weight, arbitrary: usual }, { weight: 1, arbitrary: rare });
