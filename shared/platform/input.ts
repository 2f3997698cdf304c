/**
 * The one way a request's input is read: a middleware validates the JSON body, the query string,
 * or either (GET reads the query, POST the body) against a valibot schema and sets `input`.
 * Failures are answered as shared/platform/validation.ts says.
 */
import type { MiddlewareHandler } from "hono";
import type * as v from "valibot";
import { escapeUnstorable, numberLiterals, pathKey, tooDeepPath, unstorableTextPaths } from "../lib/json";
import { isMinorUnitLiteral } from "../lib/money";
import type { AppEnv } from "./app";
import { ApiError } from "./errors";
import { moneyPaths, parseWith } from "./validation";

const MAX_BODY_BYTES = 256 * 1024;
/**
 * How deeply a body may nest objects and arrays (the body itself is level 1). The deepest body the
 * API reads is 4 levels (`face_template.signals.pulse`); past this, nothing is read further
 * (docs/decisions.md).
 */
export const MAX_BODY_DEPTH = 32;

/** A request body as sent and as parsed. */
export interface JsonBody {
  text: string;
  value: unknown;
}

/**
 * Reads a request body as JSON: at most 256 KiB (`413 PAYLOAD_TOO_LARGE`), `application/json`
 * (`415`), parseable (`400 INVALID_JSON`); an empty body is `{}`.
 */
export async function readJsonBody(request: Request): Promise<JsonBody> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
  const text = await request.text();
  if (text.length > MAX_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
  if (text.trim() === "") return { text: "{}", value: {} };
  const type = request.headers.get("content-type") ?? "application/json";
  if (!/^application\/(.+\+)?json\b/i.test(type)) throw new ApiError("UNSUPPORTED_MEDIA_TYPE");
  try {
    return { text, value: JSON.parse(text) };
  } catch {
    throw new ApiError("INVALID_JSON");
  }
}

/**
 * Refuses a body nested deeper than MAX_BODY_DEPTH: `400 INVALID_INPUT` naming the top-level field
 * under which it is too deep (`body` when the body itself is an array). Checked before any other
 * walk over the body, each of which would cost at least its depth per value.
 */
function refuseDeepNesting(value: unknown): void {
  const path = tooDeepPath(value, MAX_BODY_DEPTH);
  if (!path) return;
  const field = Array.isArray(value) || path.length === 0 ? "body" : path[0];
  throw new ApiError("INVALID_INPUT", { fields: [field] }, DEEP_NESTING_MESSAGE);
}

const DEEP_NESTING_MESSAGE = `The request body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep.`;

/**
 * Refuses input holding text no Postgres column can store (a NUL, an unpaired surrogate), in any
 * string or object key of the body or the query: `400 INVALID_INPUT` naming each such field.
 */
function refuseUnstorableText(raw: unknown): void {
  const paths = unstorableTextPaths(raw);
  if (paths.length === 0) return;
  const fields = paths.map((path) => (path.length ? path.map(escapeUnstorable).join(".") : "body"));
  throw new ApiError("INVALID_INPUT", { fields: [...new Set(fields)] }, UNSTORABLE_MESSAGE);
}

const UNSTORABLE_MESSAGE = "A string holds a NUL character or an unpaired UTF-16 surrogate, which cannot be stored.";

/**
 * Money as written: at each money path of the schema (`money` in ./validation.ts) where the body
 * has a number whose literal is not plain digits (`1299.0`, `1e3`, `-0`), the value becomes that
 * literal's text, so the schema's or the operation's money check refuses it (`AMOUNT_INVALID`) in
 * its usual order.
 */
function moneyAsWritten(schema: v.GenericSchema, body: JsonBody): void {
  const paths = moneyPaths(schema);
  if (paths.length === 0) return;
  let literals: Map<string, string> | undefined;
  for (const path of paths) {
    let parent: unknown = body.value;
    for (const key of path.slice(0, -1)) parent = isRecord(parent) ? parent[key] : undefined;
    const last = path[path.length - 1];
    if (!isRecord(parent) || typeof parent[last] !== "number") continue;
    literals ??= numberLiterals(body.text);
    const written = literals.get(pathKey(path));
    if (written !== undefined && !isMinorUnitLiteral(written)) parent[last] = written;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where the input comes from: the body, the query string, or the query on GET and the body otherwise. */
type InputSource = "json" | "query" | "json-or-query";

/** A route whose input middleware has validated `input`. */
export type WithInput<T> = { Variables: { input: T; rawBody: string | null } };

/**
 * Validates the request's input against `schema` and sets `input` (and `rawBody`, the body as
 * parsed and serialised again, for request hashes). Before the schema, a body nested too deeply and
 * text that cannot be stored are refused, and money fields are judged as written.
 *
 * @example app.post("/", apiKeyAuth("secret"), input("json", revokeSchema), (c) => revoke(c.var.input))
 */
export function input<S extends v.GenericSchema>(source: InputSource, schema: S): MiddlewareHandler<AppEnv & WithInput<v.InferOutput<S>>> {
  return async function validateInput(c, next) {
    const fromQuery = source === "query" || (source === "json-or-query" && c.req.method === "GET");
    let raw: unknown;
    if (fromQuery) {
      raw = c.req.query();
      refuseUnstorableText(raw);
      c.set("rawBody", null);
    } else {
      const body = await readJsonBody(c.req.raw);
      refuseDeepNesting(body.value);
      refuseUnstorableText(body.value);
      c.set("rawBody", JSON.stringify(body.value));
      moneyAsWritten(schema, body);
      raw = body.value;
    }
    c.set("input", parseWith(schema, raw));
    return next();
  };
}
