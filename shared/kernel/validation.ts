/**
 * Validation failures as the API answers them: `400 INVALID_INPUT` with the offending field paths,
 * or the code a schema names for one of its checks (`coded`), never the validator's raw output.
 */
import * as v from "valibot";
import { escapeUnstorable, tooDeepPath, unstorableTextPaths } from "../lib/json";
import { isMinorUnitAmount, isMinorUnitLiteral } from "../lib/money";
import { ApiError, type ErrorCode, errorCatalogue } from "./errors";

export const CODE_PREFIX = "code:";

/**
 * A validation message that carries its own error code: when a check with this message fails, the
 * request is answered with that code instead of `INVALID_INPUT`. The first coded failure in
 * schema order wins.
 *
 * @example scope: v.pipe(v.string(), v.check(isScope, coded("UNKNOWN_SCOPE")))
 */
export function coded(code: ErrorCode): string {
  return `${CODE_PREFIX}${code}`;
}

/** The error for failed validation: the first coded issue's code, else `INVALID_INPUT` with the field paths. */
function validationFailure(issues: readonly v.BaseIssue<unknown>[]): ApiError {
  const code = issues.find((issue) => issue.message.startsWith(CODE_PREFIX))?.message.slice(CODE_PREFIX.length);
  if (code && code in errorCatalogue) return new ApiError(code as ErrorCode);
  const fields = [...new Set(issues.map((issue) => v.getDotPath(issue) ?? "body"))];
  return new ApiError("INVALID_INPUT", { fields });
}

/**
 * Validates `data` against `schema`, throwing the validation failure.
 *
 * @example const input = parseWith(revokeSchema, body);
 */
export function parseWith<S extends v.GenericSchema>(schema: S, data: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, data);
  if (!result.success) throw validationFailure(result.issues);
  return result.output;
}

/**
 * How deeply input may nest objects and arrays (the input itself is level 1). The deepest input the
 * API reads is 4 levels (`face_template.signals.pulse`); past this, nothing is read further
 * (docs/decisions.md, D-013).
 */
export const MAX_INPUT_DEPTH = 32;

/** The source text of the number at a path of the input, when the text is known (`writtenNumbers`). */
type WrittenAt = (path: readonly string[]) => string | undefined;

/**
 * Input as every surface reads it (the `input` middleware for bodies and query strings, the MCP
 * tools for their arguments): nesting deeper than MAX_INPUT_DEPTH, then text no column can store,
 * are `400 INVALID_INPUT`; money fields are judged as written when `writtenAt` knows the text; then
 * the schema (parseWith).
 *
 * @example const body = parseInput(revokeSchema, JSON.parse(text), writtenNumbers(text));
 */
export function parseInput<S extends v.GenericSchema>(schema: S, value: unknown, writtenAt?: WrittenAt): v.InferOutput<S> {
  refuseDeepNesting(value);
  refuseUnstorableText(value);
  return parseWith(schema, writtenAt ? moneyAsWritten(schema, value, writtenAt) : value);
}

/**
 * Refuses input nested deeper than MAX_INPUT_DEPTH: `400 INVALID_INPUT` naming the top-level field
 * under which it is too deep (`body` when the input itself is an array). Checked before any other
 * walk over the input, each of which would cost at least its depth per value.
 */
function refuseDeepNesting(value: unknown): void {
  const path = tooDeepPath(value, MAX_INPUT_DEPTH);
  if (!path) return;
  const field = Array.isArray(value) || path.length === 0 ? "body" : path[0];
  throw new ApiError("INVALID_INPUT", { fields: [field] }, DEEP_NESTING_MESSAGE);
}

const DEEP_NESTING_MESSAGE = `The input nests objects and arrays more than ${MAX_INPUT_DEPTH} levels deep.`;

/**
 * Refuses input holding text no Postgres column can store (a NUL, an unpaired surrogate), in any
 * string or object key: `400 INVALID_INPUT` naming each such field.
 */
function refuseUnstorableText(value: unknown): void {
  const paths = unstorableTextPaths(value);
  if (paths.length === 0) return;
  const fields = paths.map((path) => (path.length ? path.map(escapeUnstorable).join(".") : "body"));
  throw new ApiError("INVALID_INPUT", { fields: [...new Set(fields)] }, UNSTORABLE_MESSAGE);
}

const UNSTORABLE_MESSAGE = "A string holds a NUL character or an unpaired UTF-16 surrogate, which cannot be stored.";

/**
 * Money as written: `value` with, at each money path of the schema (`money`) that holds a number
 * whose literal is not plain digits (`1299.0`, `1e3`, `-0`), that literal's text instead, so the
 * schema's or the operation's money check refuses it (`AMOUNT_INVALID`) in its usual order. The
 * objects on such a path are copied; `value` itself is left as it was.
 */
function moneyAsWritten(schema: v.GenericSchema, value: unknown, writtenAt: WrittenAt): unknown {
  let judged = value;
  for (const path of moneyPaths(schema)) {
    const parents = [judged];
    for (const key of path.slice(0, -1))
      parents.push(isRecord(parents.at(-1)) ? (parents.at(-1) as Record<string, unknown>)[key] : undefined);
    const last = path[path.length - 1];
    const parent = parents.at(-1);
    if (!isRecord(parent) || typeof parent[last] !== "number") continue;
    const written = writtenAt(path);
    if (written === undefined || isMinorUnitLiteral(written)) continue;
    // copy the objects from the field up to the root, with the literal in place of the number
    let replaced: unknown = written;
    for (let depth = path.length - 1; depth >= 0; depth--)
      replaced = { ...(parents[depth] as Record<string, unknown>), [path[depth]]: replaced };
    judged = replaced;
  }
  return judged;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A field whose absence (or null) is answered with `code` instead of `INVALID_INPUT`; present, it
 * must satisfy `schema`.
 *
 * @example face_template: requiredAs("FACE_TEMPLATE_REQUIRED", v.unknown())
 */
export function requiredAs<S extends v.GenericSchema>(code: ErrorCode, schema: S) {
  const required = v.pipe(
    v.optional(v.unknown(), null),
    v.check((value) => value !== null && value !== undefined, coded(code)),
    schema,
  );
  return Object.defineProperty(required, REQUIRED_AS, { value: code });
}

const REQUIRED_AS = Symbol.for("service.validation.required-as");

/** Whether a schema is a field `requiredAs` made: optional to valibot (so its own code answers), required to its callers. */
export function isRequiredAs(schema: object): boolean {
  return REQUIRED_AS in schema;
}

/**
 * An optional `ttl_seconds`: an integer from `range.min` to `range.max`, `range.default` when absent;
 * anything else is answered with `code`.
 *
 * @example ttl_seconds: ttlSeconds({ default: 120, min: 30, max: 600 }, "INVALID_HANDOFF_TTL")
 */
export function ttlSeconds(range: { default: number; min: number; max: number }, code: ErrorCode) {
  const message = coded(code);
  return v.optional(
    v.pipe(v.number(message), v.integer(message), v.minValue(range.min, message), v.maxValue(range.max, message)),
    range.default,
  );
}

/** The first item of a body schema's pipe: anything but a JSON object (an array, a string …) is `INVALID_INPUT` on `body`. */
export const jsonObject = v.custom<Record<string, unknown>>(
  (body) => typeof body === "object" && body !== null && !Array.isArray(body),
  "must be a JSON object",
);

const moneySchemas = new WeakSet<object>();

/**
 * Marks `schema` as a money field. The input middleware judges the number there as it was written
 * in the body: a literal with a fraction, an exponent or a sign (`1299.0`, `1e3`, `-0`) reaches the
 * schema as its source text, which no money check accepts (`isMinorUnitAmount`).
 *
 * @example ceiling: v.object({ amount: v.optional(money(v.unknown())) }) // judged later, by the operation
 */
export function money<S extends v.GenericSchema>(schema: S): S {
  moneySchemas.add(schema);
  return schema;
}

/** Whether `schema` is a money field (`money`): an integer in the minor unit. */
export function isMoney(schema: object): boolean {
  return moneySchemas.has(schema);
}

/** A money field judged by the schema: a non-negative integer in the minor unit as written, else `400 AMOUNT_INVALID`. */
export const minorUnitAmount = money(v.custom<number>(isMinorUnitAmount, coded("AMOUNT_INVALID")));

/** The parts of a valibot schema the money walk follows. */
interface SchemaParts {
  pipe?: readonly { kind: string }[];
  wrapped?: unknown;
  entries?: Record<string, unknown>;
  options?: readonly unknown[];
}

const moneyPathCache = new WeakMap<object, string[][]>();

/**
 * The paths of the fields `money` marks in `schema`, through objects, optional and nullable
 * wrappers, unions and pipes.
 */
export function moneyPaths(schema: v.GenericSchema): string[][] {
  let paths = moneyPathCache.get(schema);
  if (!paths) {
    const found = new Map<string, string[]>();
    collectMoneyPaths(schema, [], found);
    moneyPathCache.set(schema, (paths = [...found.values()]));
  }
  return paths;
}

function collectMoneyPaths(schema: unknown, path: string[], found: Map<string, string[]>): void {
  if (moneySchemas.has(schema as object)) {
    found.set(JSON.stringify(path), path);
    return;
  }
  const parts = schema as SchemaParts;
  if (parts.pipe) {
    for (const item of parts.pipe) if (item.kind === "schema") collectMoneyPaths(item, path, found);
  } else if (parts.wrapped) {
    collectMoneyPaths(parts.wrapped, path, found);
  } else if (parts.entries) {
    for (const [key, entry] of Object.entries(parts.entries)) collectMoneyPaths(entry, [...path, key], found);
  } else if (parts.options) {
    for (const option of parts.options) collectMoneyPaths(option, path, found);
  }
}

/** An Idempotency-Key (spec 8): 8 to 200 printable characters, no space. */
export const idempotencyKeySchema = v.pipe(v.string(), v.minLength(8), v.maxLength(200), v.regex(/^[\x21-\x7e]*$/));

/**
 * An Idempotency-Key as sent: undefined when absent, null when not 8 to 200 printable characters
 * (the header of the functions, the `idempotency_key` argument of the MCP tool).
 */
export function idempotencyKey(value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  return v.is(idempotencyKeySchema, value) ? value : null;
}

/** The limits of a merchant's metadata (sessions, claims, attributes). */
export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

/** An object whose values are all strings (the merchant's own strings, returned unchanged). */
function isStringRecord(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(([key, item]) => key.length > 0 && typeof item === "string");
}

function withinMetadataLimits(metadata: Record<string, string>): boolean {
  const entries = Object.entries(metadata);
  return (
    entries.length <= METADATA_LIMITS.keys &&
    entries.every(([key, item]) => [...key].length <= METADATA_LIMITS.keyLength && [...item].length <= METADATA_LIMITS.valueLength)
  );
}

/** The merchant's own strings, returned unchanged on reads and webhooks (`INVALID_METADATA`, `METADATA_TOO_LARGE`). */
export const metadataSchema = v.pipe(
  v.custom<Record<string, string>>(isStringRecord, coded("INVALID_METADATA")),
  v.check(withinMetadataLimits, coded("METADATA_TOO_LARGE")),
);
