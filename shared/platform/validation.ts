/**
 * Validation failures as the API answers them: `400 INVALID_INPUT` with the offending field paths,
 * or the code a schema names for one of its checks (`coded`), never the validator's raw output.
 */
import * as v from "valibot";
import { ApiError, type ErrorCode, errorCatalogue } from "./errors";

const CODE_PREFIX = "code:";

/**
 * A validation message that carries its own error code: when a check with this message fails, the
 * request is answered with that code instead of `INVALID_INPUT`. The first coded failure in
 * schema order wins.
 *
 * @example amount: v.optional(v.custom(isMinorUnitAmount, coded("AMOUNT_INVALID")))
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
