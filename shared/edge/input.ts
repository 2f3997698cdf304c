/**
 * The one way a request's input is read: a middleware validates the JSON body, the query string,
 * or either (GET reads the query, POST the body) against a valibot schema and sets `input`.
 * Failures are answered as shared/platform/validation.ts says.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type * as v from "valibot";
import { ApiError, type ErrorCode } from "../kernel/errors";
import { parseInput } from "../kernel/validation";
import { writtenNumbers } from "../lib/json";
import type { AppEnv } from "./app";
import { codesOf, withDoc } from "./openapi";

/** Every function's request body limit, the MCP endpoint's included. */
const MAX_BODY_BYTES = 256 * 1024;

/** A request body as sent and as parsed. */
interface JsonBody {
  text: string;
  value: unknown;
}

/**
 * Reads a request body as JSON: at most 256 KiB (`413 PAYLOAD_TOO_LARGE`), `application/json`
 * (`415`), parseable (`400 INVALID_JSON`); an empty body is `{}`.
 */
async function readJsonBody(request: Request): Promise<JsonBody> {
  const text = await boundedBodyText(request);
  if (text.trim() === "") return { text: "{}", value: {} };
  const type = request.headers.get("content-type") ?? "application/json";
  if (!/^application\/(.+\+)?json\b/i.test(type)) throw new ApiError("UNSUPPORTED_MEDIA_TYPE");
  try {
    return { text, value: JSON.parse(text) };
  } catch {
    throw new ApiError("INVALID_JSON");
  }
}

/** A request's body as text, at most 256 KiB (`413 PAYLOAD_TOO_LARGE`), by its declared length first. */
export async function boundedBodyText(request: Request): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
  const text = await request.text();
  if (text.length > MAX_BODY_BYTES) throw new ApiError("PAYLOAD_TOO_LARGE");
  return text;
}

/**
 * Where the input comes from: the body, the query string, or the query on GET and the body
 * otherwise; or an HTML form's fields (`application/x-www-form-urlencoded`), for the service's own
 * server-rendered pages (the console, D-623).
 */
type InputSource = "json" | "query" | "json-or-query" | "form";

/** A form's fields as strings (a repeated field as its list), at most 256 KiB; `415` for another body. */
export async function readFormBody(request: Request): Promise<Record<string, string | string[]>> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) throw new ApiError("UNSUPPORTED_MEDIA_TYPE");
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(await boundedBodyText(request))) {
    const held = fields[name];
    fields[name] = held === undefined ? value : [...(Array.isArray(held) ? held : [held]), value];
  }
  return fields;
}

/** The request's form fields, read once (a CSRF guard before the input reads them too). */
export async function formOf(c: Context): Promise<Record<string, string | string[]>> {
  const held = c.get("formFields" as never) as Record<string, string | string[]> | undefined;
  if (held) return held;
  const fields = await readFormBody(c.req.raw.clone());
  c.set("formFields" as never, fields as never);
  return fields;
}

/**
 * The JSON body of `request` (a copy of it: the request's own body is left for `input()`) if `input("json",
 * schema)` would take it, with the text as sent; null where it would refuse it, or where the parsed JSON is not
 * `worthValidating` (the schema is then not run). For a route that answers some valid requests another way before
 * its middleware runs (the sink's stand-in in one call, D-740).
 */
export async function validJsonBody<S extends v.GenericSchema>(
  request: Request,
  schema: S,
  worthValidating: (value: unknown) => boolean = () => true,
): Promise<{ input: v.InferOutput<S>; text: string } | null> {
  try {
    const body = await readJsonBody(request.clone());
    if (!worthValidating(body.value)) return null;
    return { input: parseInput(schema, body.value, writtenNumbers(body.text)), text: body.text };
  } catch {
    return null;
  }
}

/** A route whose input middleware has validated `input`. */
export type WithInput<T> = { Variables: { input: T; rawBody: string | null } };

/**
 * Validates the request's input against `schema` with `parseInput` (./validation.ts: nesting,
 * unstorable text, money as written, then the schema) and sets `input`, and `rawBody`, the body as
 * parsed and serialised again, for request hashes.
 *
 * @example app.post("/", apiKeyAuth("secret"), input("json", revokeSchema), (c) => revoke(c.var.input))
 */
export function input<S extends v.GenericSchema>(source: InputSource, schema: S): MiddlewareHandler<AppEnv & WithInput<v.InferOutput<S>>> {
  const bodyAnswers: ErrorCode[] = source === "query" ? [] : ["INVALID_JSON", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"];
  return withDoc(validateInput, { input: { source, schema }, answers: ["INVALID_INPUT", ...bodyAnswers, ...codesOf(schema)] });
  async function validateInput(c: Context<AppEnv & WithInput<v.InferOutput<S>>>, next: Next) {
    const fromQuery = source === "query" || (source === "json-or-query" && c.req.method === "GET");
    if (fromQuery) {
      c.set("input", parseInput(schema, c.req.query()));
      c.set("rawBody", null);
    } else if (source === "form") {
      // The CSRF token is the guard's (cookie-session.ts), not the operation's input.
      const { csrf_token: _guarded, ...fields } = await formOf(c);
      c.set("input", parseInput(schema, fields));
      c.set("rawBody", null);
    } else {
      const body = await readJsonBody(c.req.raw);
      c.set("input", parseInput(schema, body.value, writtenNumbers(body.text)));
      c.set("rawBody", JSON.stringify(body.value));
    }
    return next();
  }
}
