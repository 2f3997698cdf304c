/** The function API's document in the `openapi` function's assets: scripts/local/build.ts writes it, index.ts serves it. */
export const FUNCTION_API_DOCUMENT_FILE = "/function-api.json";
