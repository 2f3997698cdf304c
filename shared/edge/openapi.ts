/**
 * OpenAPI 3.1 documents built from the routes themselves (docs/resource-api.md#openapi): every
 * middleware that can answer something says so where it is defined (`withDoc`: the input schema
 * and its coded errors, the key policy and its errors, the Idempotency-Key store …), and a route
 * adds what only its handler knows with `documented({summary, success, answers})`. The document
 * walks an app's routes and merges what each handler of a route says, so a route appears as soon
 * as it exists, with the request schema it validates and the codes its middleware and handler
 * can answer, each at the one status the error catalogue gives it.
 */
import type { MiddlewareHandler } from "hono";
import type * as v from "valibot";
import { type ErrorCode, errorCatalogue } from "../kernel/errors";
import { jsonSchemaOf } from "../kernel/json-schema";
import { CODE_PREFIX } from "../kernel/validation";

/** What one piece of a route (a middleware, or the route's own marker) tells the document. */
export interface RouteDoc {
  summary?: string;
  description?: string;
  /** The answer of success (default 200), with the schema of its body when the route declares one. */
  success?: { status: number; description: string; schema?: v.GenericSchema; contentType?: string };
  /** Other answers that are not errors: a page that answers a redirect or the same page again (the console's sign-in). */
  alsoAnswers?: readonly { status: number; description: string; contentType: string }[];
  input?: { source: "json" | "query" | "json-or-query" | "form"; schema: v.GenericSchema };
  /** The error codes this piece can answer. */
  answers?: readonly ErrorCode[];
  /** Whether a refusal is also answered as an HTML page, to a request that asks for one (the console's: D-700). */
  refusalPages?: boolean;
  /** The credentials it accepts, any one of them (security schemes' names in the document). */
  security?: readonly string[];
  /** The request headers it reads. */
  headers?: readonly { name: string; description: string }[];
}

const DOC = Symbol.for("service.openapi.route-doc");
const COMPOSED = "__COMPOSED_HANDLER";

/** Attaches `doc` to a middleware or handler, and answers it. */
export function withDoc<H extends object>(handler: H, doc: RouteDoc): H {
  Object.defineProperty(handler, DOC, { value: doc });
  return handler;
}

/** A route's own documentation, as the first middleware of the route (it does nothing when the request runs). */
export function documented(doc: RouteDoc): MiddlewareHandler {
  return withDoc(async function documentedRoute(_c, next) {
    await next();
  }, doc);
}

/** What `handler` (or the handler it composes) declares, if anything. */
export function docOf(handler: unknown): RouteDoc | undefined {
  const direct = (handler as Record<symbol, RouteDoc | undefined>)[DOC];
  if (direct) return direct;
  const composed = (handler as Record<string, unknown>)[COMPOSED];
  return composed ? docOf(composed) : undefined;
}

/** The coded errors a valibot schema can answer (`coded(...)` messages anywhere in it). */
export function codesOf(schema: unknown, seen = new Set<unknown>()): ErrorCode[] {
  if (typeof schema !== "object" || schema === null || seen.has(schema)) return [];
  seen.add(schema);
  const codes = new Set<ErrorCode>();
  for (const value of Object.values(schema)) {
    if (typeof value === "string" && value.startsWith(CODE_PREFIX)) codes.add(value.slice(CODE_PREFIX.length) as ErrorCode);
    else if (typeof value === "object") for (const code of codesOf(value, seen)) codes.add(code);
  }
  return [...codes];
}

/** Codes every route can answer: the service's own failures. */
const EVERY_ROUTE: readonly ErrorCode[] = ["INTERNAL_ERROR", "DATABASE_UNAVAILABLE"];

interface DocumentOptions {
  title: string;
  version: string;
  description: string;
  /** Codes as the surface spells them (the resource API: lowercase). */
  spellCode: (code: ErrorCode) => string;
  securitySchemes: Record<string, Record<string, unknown>>;
  /** Headers every response of the surface carries (or may carry), by name, with what they say. */
  responseHeaders?: Record<string, string>;
  /** The requests the service sends (OpenAPI 3.1 `webhooks`), by name. */
  webhooks?: Record<string, Record<string, unknown>>;
}

/** One operation's merged documentation: what every handler of the route said. */
function operationOf(docs: RouteDoc[], path: string, options: DocumentOptions) {
  const merged = Object.assign({}, ...docs) as RouteDoc;
  const answers = [...new Set([...docs.flatMap((doc) => doc.answers ?? []), ...EVERY_ROUTE])];
  const byStatus = new Map<number, string[]>();
  for (const code of answers) {
    const [status] = errorCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), options.spellCode(code)]);
  }
  const success = merged.success ?? { status: 200, description: "OK" };
  const responses: Record<string, unknown> = {
    [success.status]: {
      description: success.description,
      content: success.contentType
        ? { [success.contentType]: { schema: { type: "string" } } }
        : { "application/json": { schema: success.schema ? jsonSchemaOf(success.schema) : { type: "object" } } },
    },
  };
  for (const other of merged.alsoAnswers ?? [])
    responses[other.status] = { description: other.description, content: { [other.contentType]: { schema: { type: "string" } } } };
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: codes.map((code) => `\`${code}\``).join(", "),
      content: {
        "application/json": {
          schema: { allOf: [{ $ref: "#/components/schemas/Error" }, { properties: { code: { enum: codes.sort() } } }] },
        },
        ...(merged.refusalPages ? { "text/html": { schema: { type: "string" } } } : {}),
      },
    };
  }
  const headers = Object.fromEntries(
    Object.entries(options.responseHeaders ?? {}).map(([name, description]) => [name, { description, schema: { type: "string" } }]),
  );
  if (Object.keys(headers).length) for (const response of Object.values(responses)) Object.assign(response as object, { headers });
  // Answered by the HTTP layer before any route: headers (or the URL) past what the runtime reads.
  responses[431] = { description: "The request's headers or URL are too large; answered before the route, without a body." };
  const parameters: Record<string, unknown>[] = [...path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  for (const doc of docs)
    for (const header of doc.headers ?? [])
      parameters.push({ name: header.name, in: "header", description: header.description, schema: { type: "string" } });
  const input = merged.input;
  const operation: Record<string, unknown> = { responses };
  if (merged.summary) operation.summary = merged.summary;
  if (merged.description) operation.description = merged.description;
  operation.security = (merged.security ?? []).map((scheme) => ({ [scheme]: [] }));
  if (input?.source === "query") {
    const schema = jsonSchemaOf(input.schema) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      parameters.push({ name, in: "query", required: schema.required?.includes(name) ?? false, schema: property });
  } else if (input?.source === "form") {
    operation.requestBody = { required: true, content: { "application/x-www-form-urlencoded": { schema: jsonSchemaOf(input.schema) } } };
  } else if (input) {
    operation.requestBody = { required: true, content: { "application/json": { schema: jsonSchemaOf(input.schema) } } };
  }
  if (parameters.length) operation.parameters = parameters;
  return operation;
}

/** A Hono route path as OpenAPI writes it: `:id` and `:path{.+}` are `{id}` and `{path}`, a trailing `*` is `{path}`. */
export function openApiPath(path: string): string {
  return (
    path
      .replace(/\/+$/, "")
      .replace(/:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g, "{$1}")
      .replace(/\/\*$/, "/{path}") || "/"
  );
}

/** What the document reads of an app: its routes (Hono's `app.routes`). */
export interface RoutedApp {
  routes: readonly { method: string; path: string; handler: unknown }[];
}

/** The OpenAPI 3.1 document of `app`'s routes (every method but `ALL`, the app's own middleware). */
export function openApiDocument(app: RoutedApp, options: DocumentOptions) {
  const routes = new Map<string, { method: string; path: string; docs: RouteDoc[] }>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue;
    const path = openApiPath(route.path);
    const key = `${route.method} ${path}`;
    const entry = routes.get(key) ?? { method: route.method.toLowerCase(), path, docs: [] };
    const doc = docOf(route.handler);
    if (doc) entry.docs.push(doc);
    routes.set(key, entry);
  }
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { method, path, docs } of routes.values()) {
    paths[path] = { ...paths[path], [method]: operationOf(docs, path, options) };
  }
  return {
    openapi: "3.1.0",
    info: { title: options.title, version: options.version, description: options.description },
    paths,
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    components: {
      securitySchemes: options.securitySchemes,
      schemas: {
        Error: {
          type: "object",
          required: ["error", "code"],
          description:
            "Every error. Some codes carry more fields: fields (the invalid input's fields), retry_after_seconds (429, 409 in flight, 503), facetoken (already_claimed: the person held), allowance and resets_at (allowance_exhausted), supported_versions (unsupported_version), reason (refusals that say why).",
          properties: {
            error: { type: "string", description: "What went wrong, in English." },
            code: { type: "string", description: "What went wrong, as a stable code: branch on it." },
            fields: { type: "array", items: { type: "string" } },
            retry_after_seconds: { type: "integer", minimum: 1 },
            facetoken: { type: "string" },
            allowance: { type: "integer" },
            resets_at: { type: "string", format: "date-time" },
            supported_versions: { type: "array", items: { type: "string" } },
            reason: { type: "string" },
          },
          additionalProperties: true,
        },
      },
    },
  };
}
