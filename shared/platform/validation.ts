/**
 * Validation failures as the API answers them: `400 INVALID_INPUT` with the offending field paths,
 * or the code a schema names for one of its checks (`coded`), never the validator's raw output.
 */
import * as v from "valibot";
import { isMinorUnitAmount } from "../lib/money";
import { ApiError, type ErrorCode, errorCatalogue } from "./errors";

const CODE_PREFIX = "code:";

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
 * A field whose absence (or null) is answered with `code` instead of `INVALID_INPUT`; present, it
 * must satisfy `schema`.
 *
 * @example face_template: requiredAs("FACE_TEMPLATE_REQUIRED", v.unknown())
 */
export function requiredAs<S extends v.GenericSchema>(code: ErrorCode, schema: S) {
  return v.pipe(
    v.optional(v.unknown(), null),
    v.check((value) => value !== null && value !== undefined, coded(code)),
    schema,
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

const IDEMPOTENCY_KEY_FORMAT = /^[\x21-\x7e]{8,200}$/;

/**
 * An Idempotency-Key as sent: undefined when absent, null when not 8 to 200 printable characters
 * (the header of the functions, the `idempotency_key` argument of the MCP tool).
 */
export function idempotencyKey(value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  return IDEMPOTENCY_KEY_FORMAT.test(value) ? value : null;
}
