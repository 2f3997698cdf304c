/**
 * The local fallback worker: Miniflare routes `/functions/v1/<name>` straight to that function's
 * own worker (scripts/local/server.ts), as the edge does where each function is its own Worker;
 * a Worker with its own mount (the resource API at `/v1`) takes that path; every other path reaches
 * this worker and is answered `404 FUNCTION_NOT_FOUND`.
 */
import { errorResponse } from "../../shared/kernel/errors";

export default {
  fetch(): Response {
    return errorResponse("FUNCTION_NOT_FOUND");
  },
};
