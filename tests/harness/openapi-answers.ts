/**
 * What an OpenAPI document says an operation can answer, for the generated-input test: an answer
 * of a route the document names must be a status it lists, with a code its error response lists
 * (or none on success).
 */
type Document = { paths: Record<string, Record<string, unknown>> };

export interface DocumentedOperations {
  /** The problem with an answer to `method path`, or null when the document lists it (or names no such route). */
  problemOf(method: string, path: string, status: number, code: string): string | null;
}

export function documentedOperations(document: Document): DocumentedOperations {
  const operations = Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
      responses: (operation as { responses: Record<string, any> }).responses,
    })),
  );
  return {
    problemOf(method, path, status, code) {
      const operation = operations.find((o) => o.method === method && o.pattern.test(path));
      if (!operation) return null;
      const response = operation.responses[String(status)];
      if (!response) return `${method} ${operation.template} answered ${status}, which the OpenAPI document does not list`;
      const codes: string[] | undefined = response.content?.["application/json"]?.schema?.allOf?.[1]?.properties?.code?.enum;
      if (codes ? !codes.includes(code) : code !== "")
        return `${method} ${operation.template} answered ${status} ${code}, which the OpenAPI document does not list`;
      return null;
    },
  };
}
