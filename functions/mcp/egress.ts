/**
 * What the MCP worker may fetch when a client names the URL (its metadata document, its
 * `jwks_uri`): the public Internet only, besides the backends the deployment configured
 * (shared/kernel/egress.ts). Its own module, so that another worker which validates an agent's
 * bearer (oauth.ts) does not take the guard with it.
 */
import type { Config } from "../../shared/kernel/config";
import { type EgressPolicy, guardGlobalFetch } from "../../shared/kernel/egress";

let egressPolicy: EgressPolicy = { configuredOrigins: new Set(), allowLoopback: false };
guardGlobalFetch(() => egressPolicy);

/** Sets the egress policy from this request's configuration, before anything may fetch. */
export function applyEgressPolicy(config: Config): void {
  const configured = [config.LOCAL_RATE_LIMIT_URL, config.UPSTASH_REDIS_REST_URL].filter((url) => url !== undefined);
  egressPolicy = {
    configuredOrigins: new Set(configured.map((url) => new URL(url).origin)),
    allowLoopback: config.OAUTH_CIMD_ALLOW_LOOPBACK === "1",
  };
}
