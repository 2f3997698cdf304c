import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { isMoney, isRequiredAs } from "./validation";

/**
 * A valibot schema as JSON Schema (draft 2020-12, OpenAPI 3.1's dialect). Checks JSON Schema cannot
 * say (the coded ones, cross-field rules) stay with the schema when the request runs; money fields,
 * which valibot checks with a function, are integers from 0.
 */
export function jsonSchemaOf(schema: v.GenericSchema): Record<string, unknown> {
  const converted = toJsonSchema(schema, {
    target: "draft-2020-12",
    errorMode: "ignore",
    overrideSchema: ({ valibotSchema, jsonSchema }) => {
      if (isMoney(valibotSchema)) return { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
      const entries = (valibotSchema as { entries?: Record<string, object> }).entries;
      const requiredAs = entries ? Object.keys(entries).filter((name) => isRequiredAs(entries[name])) : [];
      if (requiredAs.length === 0 || typeof jsonSchema !== "object") return undefined;
      return { ...jsonSchema, required: [...new Set([...(jsonSchema.required ?? []), ...requiredAs])] };
    },
  }) as Record<string, unknown>;
  const { $schema: _dialect, ...rest } = converted;
  return rest;
}
