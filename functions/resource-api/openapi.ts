/**
 * The resource API's OpenAPI 3.1 document, `GET /v1/openapi.json`: built from the routes of the
 * app (shared/platform/openapi.ts), with this surface's lowercase codes and bearer secret keys.
 */
import { openApiDocument, type RoutedApp } from "../../shared/platform/openapi";
import { currentVersion } from "./version";

export function resourceApiDocument(app: RoutedApp) {
  return openApiDocument(app, {
    title: "Human-authorisation service: resource API",
    version: currentVersion,
    description:
      "The versioned resource API. Errors are {error, code} with lowercase codes; every keyed response carries Service-RateLimit-Limit, -Remaining and -Reset, and a 429 Retry-After. docs/resource-api.md describes each rule.",
    spellCode: (code) => code.toLowerCase(),
    securitySchemes: {
      secretKey: { type: "http", scheme: "bearer", description: "A secret key: sk_live_… (production) or sk_test_… (sandbox)." },
    },
  });
}
