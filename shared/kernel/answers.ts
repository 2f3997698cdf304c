/**
 * Building blocks of answer schemas: what a route documents it answers (shared/platform/openapi.ts
 * `success.schema`), each field described, so the OpenAPI documents say field by field what comes
 * back. Answers are open objects: a client must accept fields added later (docs/resource-api.md,
 * "OpenAPI").
 */
import * as v from "valibot";

/** `schema` with its description in the document. */
export function described<S extends v.GenericSchema>(schema: S, description: string) {
  return v.pipe(schema, v.description(description));
}

/** `schema` or null, with its description. */
export function orNull<S extends v.GenericSchema>(schema: S, description: string) {
  return described(v.nullable(schema), description);
}

/** An instant, ISO 8601 with its offset. */
export function instant(description: string) {
  return v.pipe(v.string(), v.isoTimestamp(), v.description(description));
}

/** The caller's metadata, returned unchanged. */
export const metadataAnswer = described(v.record(v.string(), v.string()), "The request's metadata (strings), returned unchanged.");
