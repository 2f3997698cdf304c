/**
 * The local router worker: maps `/functions/v1/<name>` to that function's own worker, as the edge
 * does in production where each function is deployed as its own Worker. Unknown names answer
 * `404 FUNCTION_NOT_FOUND`.
 */
import { errorResponse } from "../../shared/platform/errors";
import { bindingName } from "./binding-name";

interface ServiceBinding {
  fetch(request: Request): Promise<Response>;
}

interface RouterEnv {
  FUNCTIONS: string[];
  [binding: string]: unknown;
}

const FUNCTION_PATH = /^\/functions\/v1\/([^/]+)(?:\/|$)/;

export default {
  async fetch(request: Request, env: RouterEnv): Promise<Response> {
    const name = FUNCTION_PATH.exec(new URL(request.url).pathname)?.[1];
    if (!name || !env.FUNCTIONS.includes(name)) return errorResponse("FUNCTION_NOT_FOUND");
    const target = env[bindingName(name)] as ServiceBinding;
    return target.fetch(request);
  },
};
