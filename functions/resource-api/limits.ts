/**
 * The resource API's rate limits (resource API 8): a token bucket per key and per group of
 * endpoints, then one per workspace (the merchant in one environment) over all its keys. Sandbox
 * budgets are a tenth of production's (docs/resource-api.md). `Service-RateLimit-*` announce the
 * tighter of the two on every response that presented a well-formed key, and the client address's
 * budget on every other response (receipt verification's, or that of unkeyed requests).
 */

import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../shared/edge/app";
import { clientIp, type RateLimitRule, rateLimit } from "../../shared/edge/rate-limit";
import type { Environment } from "../../shared/kernel/principal";

/** Per second, with the burst the bucket holds: production's figures from the spec's table. */
const production = {
  check: { limit: 1000, burst: 2000 },
  recognitions: { limit: 200, burst: 400 },
  claims: { limit: 50, burst: 100 },
  attributes: { limit: 50, burst: 100 },
  sessions: { limit: 100, burst: 200 },
  writes: { limit: 100, burst: 200 },
  reads: { limit: 300, burst: 600 },
  management: { limit: 20, burst: 40 },
  workspace: { limit: 3000, burst: 5000 },
} as const;

export type LimitGroup = Exclude<keyof typeof production, "workspace">;

const SANDBOX_SHARE = 10;

/**
 * Groups whose budget is the same in both environments: managing the sandbox account is as much
 * work as managing the live one (docs/management.md, "Rate limits"; D-450).
 */
const SAME_IN_SANDBOX: ReadonlySet<string> = new Set(["management"]);

/** The rule of a group in an environment: `live` as the spec's table, `test` a tenth of it (management: the same). */
export function ruleOf(group: LimitGroup | "workspace", environment: Environment): RateLimitRule {
  const { limit, burst } = production[group];
  const share = environment === "live" || SAME_IN_SANDBOX.has(group) ? 1 : SANDBOX_SHARE;
  return { name: `v1-${group}-${environment}`, limit: limit / share, windowSeconds: 1, burst: burst / share };
}

/** Fair use of the public receipt verification, per client IP (no account, no key). */
export const receiptVerifyRule: RateLimitRule = { name: "v1-receipt-verify-ip", limit: 20, windowSeconds: 1, burst: 100 };

/** The prefix of the headers that announce a request's budget. */
export const RATE_LIMIT_HEADER_PREFIX = "service-ratelimit";

/**
 * Per client IP, what spends no key's budget: a request refused for its key (none, malformed,
 * publishable), the document and its reference page, an unknown route.
 */
export const unkeyedRule: RateLimitRule = { name: "v1-unkeyed-ip", limit: 20, windowSeconds: 1, burst: 100 };

const spendUnkeyed = rateLimit((c) => ({ rule: unkeyedRule, identifier: clientIp(c) }), { headerPrefix: RATE_LIMIT_HEADER_PREFIX });

/**
 * The resource API announces a budget on every response (resource API 8). A response no budget was
 * announced on (see `unkeyedRule`) spends its client address's here, once answered: over it, the
 * answer becomes `429 rate_limited`, keeping none of the answer's caching.
 */
export const announceEveryBudget: MiddlewareHandler<AppEnv> = async function announceEveryBudget(c, next) {
  await next();
  if (c.res.headers.has(`${RATE_LIMIT_HEADER_PREFIX}-limit`)) return;
  try {
    await spendUnkeyed(c, async () => {});
  } catch (error) {
    c.header("cache-control", undefined);
    throw error;
  }
};
