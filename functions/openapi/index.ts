/**
 * GET /functions/v1/openapi: the function API's OpenAPI 3.1 document. It is built from the routes of
 * every function's app at build time (scripts/local/function-api-document.ts: no Worker may import
 * another's app) and served from this Worker's static assets, with its reference page at
 * `/functions/v1/openapi/reference` (shared/edge/reference.ts).
 */

import { createFunctionApp } from "../../shared/edge/app";
import { staticAsset } from "../../shared/edge/assets";
import { documented } from "../../shared/edge/openapi";
import { mountReference } from "../../shared/edge/reference";
import { mountOf } from "../../shared/kernel/registry";
import { FUNCTION_API_DOCUMENT_FILE } from "./file";

const app = createFunctionApp("openapi");

app.get("/", documented({ summary: "This document" }), async (c) => {
  const response = await staticAsset(c, "openapi", FUNCTION_API_DOCUMENT_FILE);
  response.headers.set("content-type", "application/json; charset=utf-8");
  response.headers.set("cache-control", "public, max-age=300");
  return response;
});

mountReference(app, { functionName: "openapi", title: "Function API reference", documentUrl: mountOf("openapi") });

export default app;
