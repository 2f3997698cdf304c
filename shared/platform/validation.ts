import * as v from "valibot";
import type { AppContext } from "./app";
import { ApiError, type ErrorCode } from "./errors";

const MAX_BODY_BYTES = 256 * 1024;

/**
 * The validation hook: valibot issues become `400 INVALID_INPUT` with the list of offending field
 * paths (`fields`), never the validator's raw output.
 */
export function validationFailure(issues: readonly v.BaseIssue<unknown>[], code: ErrorCode = "INVALID_INPUT"): ApiError {
  const fields = [...new Set(issues.map((issue) => v.getDotPath(issue) ?? "body"))];
  return new ApiError(code, { fields });
}

/** Validates `data` against `schema`, throwing the validation hook's error on failure. */
export function parseWith<S extends v.GenericSchema>(schema: S, data: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, data);
  if (!result.success) throw validationFailure(result.issues);
  return result.output;
}

/** Reads the body as JSON (size-limited; an empty body is `{}`), without validating it. */
export async function readJson(c: AppContext): Promise<unknown> {
  const declared = Number(c.req.header("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
  const text = await c.req.text();
  if (text.length > MAX_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
  if (text.trim() === "") return {};
  const type = c.req.header("content-type") ?? "application/json";
  if (!/^application\/(.+\+)?json\b/i.test(type)) throw new ApiError("UNSUPPORTED_MEDIA_TYPE");
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("INVALID_JSON");
  }
}

/**
 * The validated JSON body.
 *
 * @example const input = await validJson(c, v.object({ alias: v.string() }));
 */
export async function validJson<S extends v.GenericSchema>(c: AppContext, schema: S): Promise<v.InferOutput<S>> {
  return parseWith(schema, await readJson(c));
}

/** The validated query string (each parameter's last value). */
export function validQuery<S extends v.GenericSchema>(c: AppContext, schema: S): v.InferOutput<S> {
  return parseWith(schema, c.req.query());
}
