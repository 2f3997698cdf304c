import { Ratelimit } from "@upstash/ratelimit";
import { Redis } from "@upstash/redis/cloudflare";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./app";
import { knownTenantOfKey } from "./authenticate";
import type { Config } from "./config";
import { ApiError } from "./errors";
import type { Tenant } from "./principal";

/** A named limit: at most `limit` requests per `windowSeconds` for one identifier. */
export interface RateLimitRule {
  name: string;
  limit: number;
  windowSeconds: number;
}

interface RateLimitDecision {
  success: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the window frees up. */
  reset: number;
}

/** The one interface both implementations satisfy. */
interface RateLimiter {
  limit(rule: RateLimitRule, identifier: string): Promise<RateLimitDecision>;
}

/** @upstash/ratelimit (sliding window) over the Upstash REST protocol. */
export class UpstashRateLimiter implements RateLimiter {
  private readonly limiters = new Map<string, Ratelimit>();
  constructor(private readonly redis: Redis) {}

  async limit(rule: RateLimitRule, identifier: string): Promise<RateLimitDecision> {
    let limiter = this.limiters.get(rule.name);
    if (!limiter) {
      limiter = new Ratelimit({
        redis: this.redis,
        limiter: Ratelimit.slidingWindow(rule.limit, `${rule.windowSeconds} s`),
        prefix: `ratelimit:${rule.name}`,
        ephemeralCache: false,
      });
      this.limiters.set(rule.name, limiter);
    }
    const { success, limit, remaining, reset } = await limiter.limit(identifier);
    return { success, limit, remaining, reset };
  }
}

/** Sliding-window counters in this process's memory: the default when no Redis is configured. */
export class InProcessRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; current: number; previous: number }>();

  async limit(rule: RateLimitRule, identifier: string, nowMs = Date.now()): Promise<RateLimitDecision> {
    const windowMs = rule.windowSeconds * 1000;
    const start = Math.floor(nowMs / windowMs) * windowMs;
    const key = `${rule.name}:${identifier}`;
    let entry = this.windows.get(key);
    if (!entry || entry.start < start - windowMs) entry = { start, current: 0, previous: 0 };
    else if (entry.start < start) entry = { start, current: 0, previous: entry.current };
    const weight = 1 - (nowMs - start) / windowMs;
    const used = Math.floor(entry.previous * weight) + entry.current;
    const success = used < rule.limit;
    if (success) entry.current += 1;
    this.windows.set(key, entry);
    if (this.windows.size > 50_000) this.evictBefore(start - windowMs);
    return { success, limit: rule.limit, remaining: Math.max(0, rule.limit - used - (success ? 1 : 0)), reset: start + windowMs };
  }

  private evictBefore(cutoff: number) {
    for (const [key, entry] of this.windows) if (entry.start < cutoff) this.windows.delete(key);
  }
}

/**
 * The counters of the local server (scripts/local/rate-limit-server.ts: an InProcessRateLimiter in
 * the Node process that runs every worker), so that all workers of one `npm start` count together,
 * as all isolates of a deployment do against Upstash. `url` carries its secret path.
 */
export class LocalSharedRateLimiter implements RateLimiter {
  constructor(private readonly url: string) {}

  async limit(rule: RateLimitRule, identifier: string): Promise<RateLimitDecision> {
    const response = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ rule, identifier }),
    });
    if (!response.ok) throw new Error(`local rate limiter answered ${response.status}`);
    return (await response.json()) as RateLimitDecision;
  }
}

const limiters = new WeakMap<Config, RateLimiter>();

/**
 * The limiter for this deployment: Upstash when UPSTASH_REDIS_REST_URL is set; the local server's
 * shared counters when LOCAL_RATE_LIMIT_URL is (`npm start` and tests without Upstash); this
 * isolate's memory otherwise.
 */
function rateLimiterFor(config: Config): RateLimiter {
  let limiter = limiters.get(config);
  if (!limiter) {
    limiter = config.UPSTASH_REDIS_REST_URL
      ? new UpstashRateLimiter(new Redis({ url: config.UPSTASH_REDIS_REST_URL, token: config.UPSTASH_REDIS_REST_TOKEN ?? "" }))
      : config.LOCAL_RATE_LIMIT_URL
        ? new LocalSharedRateLimiter(config.LOCAL_RATE_LIMIT_URL)
        : new InProcessRateLimiter();
    limiters.set(config, limiter);
  }
  return limiter;
}

/** The limit a request counts against, and whose budget it spends; null when none applies. */
type LimitOf<E extends AppEnv> = (c: Context<E>) => { rule: RateLimitRule; identifier: string } | null;

/**
 * Counts one request against the limit `limitOf` picks for it; over the limit it answers `429
 * RATE_LIMITED` with `Retry-After` (seconds). Placed after authentication (and after input where
 * the limit depends on it).
 *
 * @example app.post("/", apiKeyAuth("secret"), rateLimit((c) => ({ rule: CHECK_LIMIT, identifier: c.var.principal.merchantId })), handler)
 */
export function rateLimit<E extends AppEnv>(limitOf: LimitOf<E>): MiddlewareHandler<E> {
  return async function enforceRateLimit(c, next) {
    const limit = limitOf(c);
    if (limit) {
      const decision = await rateLimiterFor(c.var.config).limit(limit.rule, limit.identifier);
      if (!decision.success) {
        const retryAfter = Math.max(1, Math.ceil((decision.reset - Date.now()) / 1000));
        c.header("retry-after", String(retryAfter));
        throw new ApiError("RATE_LIMITED", { retry_after_seconds: retryAfter });
      }
    }
    return next();
  };
}

/**
 * The budget of one merchant in one environment, whichever of its keys (or its users' sessions)
 * the request came through: a merchant with four keys has one budget, not four.
 */
export function tenantBudget(tenant: Tenant): string {
  return `merchant:${tenant.merchantId}:${tenant.environment}`;
}

/**
 * The budget of a key that is authenticated only inside the operation's own round trip
 * (mandate-check): its merchant's (tenantBudget) once this isolate has seen the key authenticate,
 * the key's own before that (a cold isolate's first request per key). No extra query either way.
 */
export function keyBudget(keyHash: string): string {
  const tenant = knownTenantOfKey(keyHash);
  return tenant ? tenantBudget(tenant) : `key:${keyHash}`;
}

/** The caller's IP as the edge reports it (CF-Connecting-IP at Cloudflare, the router locally). */
export function clientIp(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? c.req.header("x-real-ip") ?? "unknown";
}
