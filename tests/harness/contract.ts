/**
 * Every call the harness makes (http.ts) is checked against the OpenAPI document its surface serves:
 * the status, the code and the body must be ones the document lists for that route. So every test
 * that calls the service also tests the documents a merchant integrates from (docs/resource-api.md,
 * "OpenAPI"), and a route that answers what its document does not say fails the test that saw it.
 */
import { inject } from "vitest";
import { type DocumentedOperations, documentedOperations } from "./openapi-answers";

/** The documents of each surface, by the path its routes start with and where it serves its document. */
const SURFACES = [
  { prefix: "/v1/", document: "/v1/openapi.json" },
  { prefix: "/functions/v1/", document: "/functions/v1/openapi" },
] as const;

const loaded = new Map<string, Promise<DocumentedOperations>>();

/** A surface's document, read from the run's service: a test's own service may serve only some functions. */
function operationsOf(documentPath: string): Promise<DocumentedOperations> {
  const url = `${inject("baseUrl")}${documentPath}`;
  let operations = loaded.get(url);
  if (!operations) {
    operations = fetch(url).then(async (res) => {
      if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
      return documentedOperations(await res.json());
    });
    loaded.set(url, operations);
  }
  return operations;
}

/** Throws when a webhook delivery's body is not the event the resource API's document declares for its type. */
export async function expectDocumentedEvent(rawBody: string): Promise<void> {
  const problem = (await operationsOf("/v1/openapi.json")).webhookProblemOf(JSON.parse(rawBody));
  if (problem) throw new Error(`${problem}\n${rawBody.slice(0, 2000)}`);
}

/** Throws when the answer to `method url` is not one its surface's document lists. */
export async function expectDocumented(
  method: string,
  url: string,
  answer: { status: number; headers: Headers; body: unknown },
): Promise<void> {
  const { pathname } = new URL(url);
  const surface = SURFACES.find(({ prefix }) => pathname.startsWith(prefix));
  if (!surface) return;
  const operations = await operationsOf(surface.document);
  const code = typeof answer.body === "object" && answer.body !== null ? String((answer.body as { code?: unknown }).code ?? "") : "";
  // A refusal answered as a page (the console's, to a browser: D-700) has no code to compare.
  const page = /^text\/html\b/i.test(answer.headers.get("content-type") ?? "");
  const coded = answer.status >= 400 ? (page ? null : code) : "";
  const problem =
    operations.problemOf(method, pathname, answer.status, coded) ??
    operations.bodyProblemOf(method, pathname, answer.status, answer.headers.get("content-type") ?? "", answer.body);
  if (problem) throw new Error(`${problem}\n${JSON.stringify(answer.body)?.slice(0, 2000)}`);
}
