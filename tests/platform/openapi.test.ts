/**
 * The resource API's OpenAPI 3.1 document, as the service serves it: a valid 3.1 document (an
 * independent validator), every route of the app in it, and every status and code it lists for an
 * operation one the surface documents (docs/resource-api.md's error table) at the status the error
 * catalogue answers it with, so the document, the routes and the prose cannot drift apart.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import resourceApi from "../../functions/resource-api/index";
import { functionApps, NOT_IN_FUNCTION_API_DOCUMENT } from "../../scripts/local/function-api-document";
import { openApiPath } from "../../shared/edge/openapi";
import { functionNames, mountOf } from "../../shared/kernel/registry";
import { eventTypes } from "../../shared/webhooks/events";
import { documentedAnswers, EVERY_FUNCTION } from "../harness/documented-answers";
import { v1 } from "../harness/resource-api";
import { serviceUnderTest } from "../harness/service";

type Operation = {
  responses: Record<string, { content?: { "application/json": { schema: any } } }>;
  requestBody?: unknown;
  parameters?: { name: string; in: string }[];
};

async function served() {
  const res = await v1("/openapi.json");
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return res.body as { openapi: string; paths: Record<string, Record<string, Operation>> };
}

const routesOf = (app: { routes: readonly { method: string; path: string }[] }) => [
  ...new Set(app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`)),
];

/** Every `method path` of a document. */
const operationsOf = (document: { paths: Record<string, Record<string, Operation>> }) =>
  Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));

/** Every `method path status code` a document lists. */
function listedAnswers(document: { paths: Record<string, Record<string, Operation>> }): string[] {
  const listed: string[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const codes: string[] = response.content?.["application/json"]?.schema.allOf?.[1].properties.code.enum ?? [];
        for (const code of codes) listed.push(`${method} ${path} ${status} ${code}`);
      }
    }
  }
  return listed;
}

/** The document `load` fetches (without a key) is a valid OpenAPI 3.1 document, says an independent validator. */
function itIsAValidDocument(load: () => Promise<{ openapi: string }>) {
  it("is a valid OpenAPI 3.1 document, served without a key", async () => {
    const document = await load();
    expect(document.openapi).toBe("3.1.0");
    const validator = new Validator();
    const result = await validator.validate(document as never);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });
}

describe("GET /v1/openapi.json", () => {
  itIsAValidDocument(served);

  it("gives examples of the main request bodies, each one its schema accepts", async () => {
    const document = await served();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const examples: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schema = (operation.requestBody as { content?: Record<string, { schema: any }> } | undefined)?.content?.["application/json"]
          ?.schema;
        for (const example of schema?.examples ?? []) {
          const validate = ajv.compile(schema);
          expect(validate(example), `${method} ${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
          examples.push(`${method} ${path}`);
        }
      }
    }
    expect(new Set(examples)).toEqual(
      new Set([
        "post /v1/identity/claims",
        "post /v1/identity/recognitions",
        "post /v1/identity/attributes",
        "post /v1/sessions",
        "post /v1/mandates/{id}/check",
        "post /v1/api_keys",
        "post /v1/api_keys/{id}/roll",
        "post /v1/webhook_endpoints",
        "post /v1/webhook_endpoints/{id}",
        "post /v1/webhook_endpoints/{id}/rotate_secret",
        "post /v1/webhook_events/replay",
        "post /v1/account",
        "post /v1/owners",
        "post /v1/themes/{surface}/draft",
        "post /v1/themes/{surface}/validate",
        "post /v1/theme_assets",
      ]),
    );
  });

  it("gives an example row of each read view, which the row's schema accepts, and each view's filters as query parameters", async () => {
    const document = await served();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const views = {
      "/v1/receipts": ["facetoken", "action", "code"],
      "/v1/consents": ["facetoken", "status"],
      "/v1/disclosures": ["facetoken", "status"],
    };
    for (const [path, filters] of Object.entries(views)) {
      const operation = document.paths[path].get;
      const row = (operation.responses["200"] as any).content["application/json"].schema.properties.data.items;
      expect(row.examples, path).toHaveLength(1);
      const validate = ajv.compile(row);
      expect(validate(row.examples[0]), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(operation.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual(
        expect.arrayContaining([...filters, "cursor", "limit"].map((name) => `query ${name}`)),
      );
    }
  });

  it("names every route of the app, with its request body or query and its path parameters", async () => {
    const document = await served();
    expect(operationsOf(document).sort()).toEqual(routesOf(resourceApi).sort());
    expect(document.paths["/v1/sessions"].post.requestBody).toMatchObject({
      content: { "application/json": { schema: { type: "object", required: expect.arrayContaining(["mode", "return_url"]) } } },
    });
    expect(document.paths["/v1/mandates"].get.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual(
      expect.arrayContaining(["query limit", "query cursor", "query status", "header Service-Version"]),
    );
    expect(document.paths["/v1/sessions/{id}"].get.parameters).toContainEqual(expect.objectContaining({ name: "id", in: "path" }));
    // a route that declares its answer's schema has it in the document
    expect(document.paths["/v1/sessions"].post.responses["201"]).toMatchObject({
      content: {
        "application/json": { schema: { type: "object", required: expect.arrayContaining(["id", "status", "mode", "expires_at"]) } },
      },
    });
  });

  it("declares every event of the catalogue as a webhook, with its envelope and signature header, and each route's success body", async () => {
    const document = (await served()) as unknown as {
      webhooks: Record<string, { post: { parameters: { name: string }[]; requestBody: { content: Record<string, { schema: any }> } } }>;
      paths: Record<string, Record<string, Operation>>;
    };
    expect(Object.keys(document.webhooks).sort()).toEqual([...eventTypes].sort());
    for (const [type, webhook] of Object.entries(document.webhooks)) {
      expect(webhook.post.parameters.map((p) => p.name)).toContain("Service-Signature");
      expect(webhook.post.requestBody.content["application/json"].schema.properties.type).toEqual({ const: type });
    }
    // every keyed operation says what it answers, field by field (not a bare object)
    for (const [path, operations] of Object.entries(document.paths)) {
      if (path.endsWith("/openapi.json") || path.includes("/reference")) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))![1];
        expect(success.content?.["application/json"]?.schema.properties, `${method} ${path}`).toBeDefined();
      }
    }
  });

  it("lists for each operation only codes the surface documents, each at its one status; keyed writes list the Idempotency-Key answers", async () => {
    const document = await served();
    const documented = documentedAnswers().functions.get("resource-api")!.answers;
    const listed = listedAnswers(document);
    for (const line of listed) {
      const [method, path, status, code] = line.split(" ");
      expect(documented, `${method} ${path}: ${status} ${code} is not in docs/resource-api.md`).toContain(`${status} ${code}`);
    }
    expect(listed).toEqual(
      expect.arrayContaining([
        "post /v1/sessions 400 invalid_return_url",
        "post /v1/sessions 409 idempotency_in_flight",
        "post /v1/sessions 422 idempotency_key_reused",
        "get /v1/sessions/{id} 404 not_found",
        "post /v1/mandates 403 proof_invalid",
        "get /v1/receipts/{id}/verify 429 rate_limited",
      ]),
    );
    expect(listed.filter((line) => line.startsWith("get /v1/receipts/{id}/verify")).some((line) => line.includes("api_key"))).toBe(false);
  });
});

/** The reference pages: each page's path and the document it reads. */
const REFERENCE_PAGES = [
  { page: "/v1/reference", document: "/v1/openapi.json", notFoundCode: "route_not_found" },
  { page: "/functions/v1/openapi/reference", document: "/functions/v1/openapi", notFoundCode: "ROUTE_NOT_FOUND" },
];

describe.each(REFERENCE_PAGES)("GET $page", ({ page: pagePath, document, notFoundCode }) => {
  const base = () => new URL(`${serviceUnderTest().baseUrl}${pagePath}`);

  it("is the reference page under a CSP allowing only this origin, loading only what this Worker serves", async () => {
    const page = await fetch(base());
    const text = await page.text();
    expect(page.status, text).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    const sources = csp.split(";").flatMap((directive) => directive.trim().split(/\s+/).slice(1));
    expect(new Set(sources)).toEqual(new Set(["'none'", "'self'", "data:"]));
    const configuration = JSON.parse(
      text
        .match(/data-configuration="([^"]+)"/)![1]
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, "&"),
    );
    // the configuration turns off what Scalar would fetch from its own hosts
    expect(configuration).toMatchObject({ url: document, withDefaultFonts: false, telemetry: false, agent: { disabled: true } });
    expect(configuration.proxyUrl).toBeUndefined();
    const files = [...text.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, url]) => url);
    const referenced = [...files, configuration.url as string].map((url) => new URL(url, base()));
    expect(referenced.map((url) => url.pathname).sort()).toEqual([document, `${pagePath}/standalone.js`, `${pagePath}/style.css`].sort());
    for (const url of referenced) {
      expect(url.origin).toBe(base().origin);
      const asset = await fetch(url);
      expect(asset.status, url.pathname).toBe(200);
      expect((await asset.arrayBuffer()).byteLength, url.pathname).toBeGreaterThan(1000);
    }
    const script = await fetch(new URL(`${pagePath}/standalone.js`, base()));
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    expect(script.headers.get("content-security-policy")).toBe(csp);
  });

  it("answers 404 for any other file under it", async () => {
    for (const path of ["/other.js", "/assets/standalone.js", "/standalone.js/x"]) {
      const res = await fetch(`${base()}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { code: string }).code, path).toBe(notFoundCode);
    }
  });
});

describe("GET /functions/v1/openapi", () => {
  async function functionApiDocument() {
    const res = await fetch(`${serviceUnderTest().baseUrl}/functions/v1/openapi`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    return (await res.json()) as { openapi: string; paths: Record<string, Record<string, Operation>> };
  }

  itIsAValidDocument(functionApiDocument);

  it("names every route of every function but those it says it leaves out, each under its function's mount", async () => {
    const document = await functionApiDocument();
    const apps = await functionApps();
    expect([...apps.map(({ name }) => name), ...Object.keys(NOT_IN_FUNCTION_API_DOCUMENT)].sort()).toEqual([...functionNames].sort());
    expect(operationsOf(document).sort()).toEqual(apps.flatMap(({ app }) => routesOf(app)).sort());
    for (const { name, app } of apps)
      expect(
        routesOf(app).every((route) => route.includes(mountOf(name))),
        name,
      ).toBe(true);
    const issue = document.paths["/functions/v1/mandate-issue"].post;
    expect(issue.requestBody).toMatchObject({
      content: { "application/json": { schema: { type: "object", required: expect.arrayContaining(["granted_to", "scopes"]) } } },
    });
    expect(issue.parameters?.map((p) => `${p.in} ${p.name}`)).toEqual(
      expect.arrayContaining(["header x-service-timestamp", "header x-service-nonce"]),
    );
    expect(Object.keys(issue.responses)).toContain("201");
    expect(document.paths["/functions/v1/merchant-theme-get/assets/{path}"].get.parameters).toContainEqual(
      expect.objectContaining({ name: "path", in: "path" }),
    );
  });

  it("lists for each operation only codes docs/functions.md documents for its function, each at its one status", async () => {
    const document = await functionApiDocument();
    const documented = documentedAnswers().functions;
    const everyFunction = documented.get(EVERY_FUNCTION)!.answers;
    const listed = listedAnswers(document);
    for (const line of listed) {
      const [method, path, status, code] = line.split(" ");
      const name = path.split("/")[3];
      expect(
        [...(documented.get(name)?.answers ?? []), ...everyFunction],
        `${method} ${path}: ${status} ${code} is not in docs/functions.md under ${name} or "Every function"`,
      ).toContain(`${status} ${code}`);
    }
    expect(listed).toEqual(
      expect.arrayContaining([
        "post /functions/v1/mandate-issue 401 INVALID_API_KEY",
        "post /functions/v1/mandate-issue 409 NONCE_REUSED",
        "post /functions/v1/mandate-issue 400 INVALID_INPUT",
        "get /functions/v1/openapi 500 INTERNAL_ERROR",
      ]),
    );
    expect(document.paths["/functions/v1/mandate-issue"].post).toMatchObject({ security: [{ secretKey: [] }] });
  });

  it("declares each JSON answer's body field by field (every route but the document itself)", async () => {
    const document = await functionApiDocument();
    for (const [path, operations] of Object.entries(document.paths)) {
      if (path === "/functions/v1/openapi") continue;
      for (const [method, operation] of Object.entries(operations)) {
        // Every success answer with a JSON body (the console's actions answer 303 with a page's link: no JSON to declare).
        const successes = Object.entries(operation.responses).filter(([status]) => /^[23]/.test(status));
        expect(successes.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const [, success] of successes) {
          const json = success.content?.["application/json"]?.schema;
          if (json) expect(json.properties ?? json.anyOf, `${method} ${path}`).toBeDefined();
        }
      }
    }
  });

  it("lists, over each function's routes, every code docs/functions.md documents for that function", async () => {
    const document = await functionApiDocument();
    const documented = documentedAnswers().functions;
    const listedByFunction = new Map<string, Set<string>>();
    for (const line of listedAnswers(document)) {
      const [, path, status, code] = line.split(" ");
      const name = path.split("/")[3];
      listedByFunction.set(name, (listedByFunction.get(name) ?? new Set()).add(`${status} ${code}`));
    }
    for (const { name } of await functionApps()) {
      const coded = [...(documented.get(name)?.answers ?? [])].filter((answer) => !answer.endsWith(" ") && !answer.startsWith("2"));
      const unlisted = coded.filter((answer) => !listedByFunction.get(name)?.has(answer));
      expect(unlisted, `${name}: in docs/functions.md, not in the document`).toEqual([]);
    }
  });
});
