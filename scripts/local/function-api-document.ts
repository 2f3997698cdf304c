/**
 * The function API's OpenAPI 3.1 document (docs/functions.md, "openapi"), built from the routes of
 * every function's app, as the resource API's is from its own (shared/edge/openapi.ts). Each
 * function is its own Worker and no Worker may import another's app, so the document is built here,
 * at build time, and served as a static asset of the `openapi` function (scripts/local/build.ts).
 */

import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openApiDocument, type RoutedApp } from "../../shared/edge/openapi";
import { cronsOf, functionNames } from "../../shared/kernel/registry";
import { FUNCTIONS_DIR } from "./functions";

/** Functions the document leaves out, and why: two surfaces of their own, and every cron (it serves no route). */
export const NOT_IN_FUNCTION_API_DOCUMENT: Record<string, string> = {
  mcp: "the agents' surface: OAuth 2.1 and MCP's JSON-RPC (docs/mcp.md)",
  "resource-api": "its own document, GET /v1/openapi.json",
  ...Object.fromEntries(functionNames.filter((name) => cronsOf(name).length > 0).map((name) => [name, "a cron; it serves no route"])),
};

/** The functions the document covers, each with its app (routes under its mount). */
export async function functionApps(): Promise<{ name: string; app: RoutedApp }[]> {
  const names = functionNames.filter((name) => !(name in NOT_IN_FUNCTION_API_DOCUMENT));
  return Promise.all(
    names.map(async (name) => {
      const module = await import(pathToFileURL(join(FUNCTIONS_DIR, name, "index.ts")).href);
      return { name, app: module.default as RoutedApp };
    }),
  );
}

/** The function API's document: every route of every function it covers. */
export async function functionApiDocument() {
  const apps = await functionApps();
  return openApiDocument(
    { routes: apps.flatMap(({ app }) => app.routes) },
    {
      title: "Human-authorisation service: function API",
      version: "1.0.0-beta",
      description:
        "The function API, /functions/v1/<name>: one function per operation. Errors are {error, code} with uppercase codes; docs/functions.md describes each function, its headers and its answers.",
      spellCode: (code) => code,
      securitySchemes: {
        secretKey: { type: "apiKey", in: "header", name: "x-service-api-key", description: "A secret key: sk_live_… or sk_test_…." },
        publishableKey: {
          type: "apiKey",
          in: "header",
          name: "x-service-api-key",
          description: "A publishable key (pk_live_… or pk_test_…) or a secret key.",
        },
        userToken: { type: "http", scheme: "bearer", description: "A first-party session JWT of the person." },
        serviceRole: { type: "http", scheme: "bearer", description: "The service role key (svc_…), for the service's own servers." },
      },
    },
  );
}
