/**
 * What an OpenAPI document says an operation can answer: an answer of a route the document names
 * must be a status it lists, with a code its error response lists (or none on success), and a body
 * its response's schema accepts. The generated-input test asks for the status and code; every call
 * the harness makes (http.ts) asks for all three (./contract.ts).
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Document = {
  paths: Record<string, Record<string, unknown>>;
  webhooks?: Record<string, unknown>;
  components?: Record<string, unknown>;
};
type Response = { content?: Record<string, { schema?: Record<string, any> }> };

export interface DocumentedOperations {
  /**
   * The problem with an answer to `method path`, or null when the document lists it (or names no such
   * route). `code` null: a refusal answered as a page, which its response must declare (`text/html`).
   */
  problemOf(method: string, path: string, status: number, code: string | null): string | null;
  /** The problem with an answer's body (JSON parsed, or the text), or null when its response's schema accepts it. */
  bodyProblemOf(method: string, path: string, status: number, contentType: string, body: unknown): string | null;
  /** The problem with a webhook delivery's body, or null when the document's `webhooks` entry for its type accepts it. */
  webhookProblemOf(body: { type?: unknown }): string | null;
}

export function documentedOperations(document: Document): DocumentedOperations {
  const operations = Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
      responses: (operation as { responses: Record<string, Response> }).responses,
    })),
  );
  const find = (method: string, path: string) => operations.find((o) => o.method === method && o.pattern.test(path));
  // One validator per response schema, compiled on first use; `$ref`s resolve against the document's components.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "document", components: document.components ?? {} });
  const validators = new Map<object, ValidateFunction>();
  const validatorOf = (schema: Record<string, unknown>) => {
    let validate = validators.get(schema);
    if (!validate) {
      validate = ajv.compile({ $id: `response-${validators.size}`, ...rebase(schema) });
      validators.set(schema, validate);
    }
    return validate;
  };
  return {
    problemOf(method, path, status, code) {
      const operation = find(method, path);
      if (!operation) return null;
      const response = operation.responses[String(status)];
      if (!response) return `${method} ${operation.template} answered ${status}, which the OpenAPI document does not list`;
      if (code === null)
        return response.content?.["text/html"]
          ? null
          : `${method} ${operation.template} answered ${status} as a page, which the document does not list`;
      const codes: string[] | undefined = response.content?.["application/json"]?.schema?.allOf?.[1]?.properties?.code?.enum;
      if (codes ? !codes.includes(code) : code !== "")
        return `${method} ${operation.template} answered ${status} ${code}, which the OpenAPI document does not list`;
      return null;
    },
    bodyProblemOf(method, path, status, contentType, body) {
      const operation = find(method, path);
      const response = operation?.responses[String(status)];
      if (!operation || !response?.content) return null;
      const mediaType = contentType.split(";")[0].trim().toLowerCase();
      // A declared range (`image/*`, `*/*`) covers the types it names.
      const range = Object.keys(response.content).find(
        (type) => type === "*/*" || (type.endsWith("/*") && mediaType.startsWith(type.slice(0, -1))),
      );
      const declared = response.content[mediaType] ?? (range ? response.content[range] : undefined);
      if (!declared)
        return `${method} ${operation.template} answered ${status} as ${mediaType || "no content type"}; the document declares ${Object.keys(response.content).join(", ")}`;
      if (mediaType !== "application/json" || !declared.schema) return null;
      const validate = validatorOf(declared.schema);
      if (validate(body)) return null;
      const errors = (validate.errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message}`).join("; ");
      return `${method} ${operation.template} answered ${status} with a body its documented schema refuses: ${errors}`;
    },
    webhookProblemOf(body) {
      const type = String(body.type);
      const webhook = document.webhooks?.[type] as { post: { requestBody: Response } } | undefined;
      const schema = webhook?.post.requestBody.content?.["application/json"]?.schema;
      if (!schema) return `a ${type} event, which the document's webhooks do not name`;
      const validate = validatorOf(schema);
      if (validate(body)) return null;
      return `a ${type} event the document's schema refuses: ${(validate.errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message}`).join("; ")}`;
    },
  };
}

/** `schema` with its `#/components/…` references pointing into the document's components. */
function rebase(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) =>
      key === "$ref" && typeof value === "string" && value.startsWith("#/") ? [key, `document${value}`] : [key, rebase(value)],
    ),
  );
}
