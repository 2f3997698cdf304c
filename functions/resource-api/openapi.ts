/**
 * The resource API's OpenAPI 3.1 document, `GET /v1/openapi.json`: built from the routes of the
 * app (shared/edge/openapi.ts), with this surface's lowercase codes and bearer secret keys.
 */
import { openApiDocument, type RoutedApp } from "../../shared/edge/openapi";
import { eventCatalogue } from "../../shared/webhooks/events";
import { currentVersion } from "./version";

/**
 * Every event the service sends to a merchant's endpoint (docs/webhooks.md), from the event
 * catalogue: the envelope (resource API 2.4) with its type and the fields of its data, the
 * signature header, and the answer the service expects.
 */
function webhooks() {
  return Object.fromEntries(
    Object.entries(eventCatalogue).map(([type, event]) => [
      type,
      {
        post: {
          summary: type,
          description: `${event.firesWhen} Deduplicate on \`id\`; verify \`Service-Signature\` over the raw body first (docs/webhooks.md, "Signature").`,
          parameters: [
            {
              name: "Service-Signature",
              in: "header",
              required: true,
              description:
                "t=<unix seconds>,v1=<hex HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint secret>[,v1=… during a rotation]",
              schema: { type: "string" },
            },
            {
              name: "Service-Event-Id",
              in: "header",
              required: true,
              description: "The event's id, as in the body.",
              schema: { type: "string" },
            },
          ],
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["id", "type", "created_at", "api_version", "attempt", "data"],
                  properties: {
                    id: { type: "string", description: "The event id: the same on every attempt and replay." },
                    type: { const: type },
                    created_at: { type: "string", format: "date-time" },
                    api_version: { type: "string", description: "The dated version of the envelope and its data." },
                    attempt: { type: "integer", minimum: 1 },
                    data: { type: "object", properties: Object.fromEntries(event.data.map((field) => [field, {}])) },
                  },
                },
              },
            },
          },
          responses: {
            "200": {
              description: "Any 2xx acknowledges the delivery; anything else is retried for 72 hours (410 Gone disables the endpoint).",
            },
          },
        },
      },
    ]),
  );
}

export function resourceApiDocument(app: RoutedApp) {
  return openApiDocument(app, {
    title: "Human-authorisation service: resource API",
    version: currentVersion,
    description:
      "The versioned resource API. Errors are {error, code} with lowercase codes; every response carries Service-RateLimit-Limit, -Remaining and -Reset, and a 429 Retry-After. docs/resource-api.md describes each rule.",
    spellCode: (code) => code.toLowerCase(),
    securitySchemes: {
      secretKey: { type: "http", scheme: "bearer", description: "A secret key: sk_live_… (production) or sk_test_… (sandbox)." },
    },
    webhooks: webhooks(),
    responseHeaders: {
      "Service-Version": "The dated version that answered.",
      "Service-RateLimit-Limit":
        "The most requests the budget holds: the key's (or its workspace's, when tighter), else the client address's.",
      "Service-RateLimit-Remaining": "What is left of it.",
      "Service-RateLimit-Reset": "Seconds until it grows again.",
      "Retry-After": "On 429 rate_limited and 409 idempotency_in_flight: seconds to wait before retrying.",
      "Idempotency-Status":
        "replayed when this answers an earlier request with the same Idempotency-Key again (the stored answer, or a check's consumption as the mandate's ledger replays it, with idempotent_replay true).",
    },
  });
}
