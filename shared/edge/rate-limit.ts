import { Ratelimit } from "@upstash/ratelimit";
import { Redis } from "@upstash/redis/cloudflare";
import type { Context, MiddlewareHandler } from "hono";
import { knownTenantOfKey } from "../kernel/authenticate";
import type { Config } from "../kernel/config";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { AppEnv } from "./app";
import { withDoc } from "./openapi";

/**
 * A named limit: at most `limit` requests per `windowSeconds` for one identifier, counted in a
 * sliding window; with `burst`, a token bucket instead that holds at most `burst` requests and
 * refills `limit` of them every `windowSeconds` (resource API section 8: "1,000 req/s, burst 2,000").
 */
export interface RateLimitRule {
  name: string;
  limit: number;
  windowSeconds: number;
  burst?: number;
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
        limiter: rule.burst
          ? Ratelimit.tokenBucket(rule.limit, `${rule.windowSeconds} s`, rule.burst)
          : Ratelimit.slidingWindow(rule.limit, `${rule.windowSeconds} s`),
        prefix: `ratelimit:${rule.name}`,
        ephemeralCache: false,
      });
      this.limiters.set(rule.name, limiter);
    }
    const { success, limit, remaining, reset } = await limiter.limit(identifier);
    return { success, limit, remaining, reset };
  }
}

/** Sliding-window counters and token buckets in this process's memory: the default when no Redis is configured. */
export class InProcessRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; current: number; previous: number }>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  async limit(rule: RateLimitRule, identifier: string, nowMs = Date.now()): Promise<RateLimitDecision> {
    if (rule.burst) return this.takeToken({ ...rule, burst: rule.burst }, identifier, nowMs);
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

  /** The token bucket: full at first, refilled continuously; `reset` is when the next token arrives. */
  private takeToken(rule: RateLimitRule & { burst: number }, identifier: string, nowMs: number): RateLimitDecision {
    const perMs = rule.limit / (rule.windowSeconds * 1000);
    const key = `${rule.name}:${identifier}`;
    const entry = this.buckets.get(key);
    const tokens = entry ? Math.min(rule.burst, entry.tokens + Math.max(0, nowMs - entry.at) * perMs) : rule.burst;
    const success = tokens >= 1;
    const left = success ? tokens - 1 : tokens;
    // Deleted and set again, so the map's order is least recently used first.
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: left, at: nowMs });
    if (this.buckets.size > 50_000) this.buckets.delete(this.buckets.keys().next().value as string);
    const nextToken = nowMs + Math.ceil((1 - (left % 1)) / perMs);
    return { success, limit: rule.burst, remaining: Math.floor(left), reset: nextToken };
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

interface RateLimitOptions {
  /**
   * Announces the budget on the response (resource API section 8): `<prefix>-Limit` (the most
   * requests the budget holds), `-Remaining` and `-Reset` (seconds until the budget grows again).
   * When several limits apply to one request, the one with the least remaining is announced.
   */
  headerPrefix?: string;
}

/**
 * Counts one request against the limit `limitOf` picks for it; over the limit it answers `429
 * RATE_LIMITED` with `Retry-After` (seconds). Placed after authentication (and after input where
 * the limit depends on it).
 *
 * @example app.post("/", apiKeyAuth("secret"), rateLimit((c) => ({ rule: CHECK_LIMIT, identifier: c.var.principal.merchantId })), handler)
 */
export function rateLimit<E extends AppEnv>(limitOf: LimitOf<E>, { headerPrefix }: RateLimitOptions = {}): MiddlewareHandler<E> {
  return withDoc<MiddlewareHandler<E>>(
    async function enforceRateLimit(c, next) {
      const limit = limitOf(c);
      if (limit) {
        const announceTo = headerPrefix
          ? (decision: RateLimitDecision, nowMs: number) => announce(c, headerPrefix, decision, nowMs)
          : undefined;
        await spendBudget(c.var.config, limit.rule, limit.identifier, announceTo);
      }
      return next();
    },
    { answers: ["RATE_LIMITED"] },
  );
}

/**
 * Counts one request of `identifier` against `rule`; over the limit, throws `429 RATE_LIMITED` with
 * `retry_after_seconds`. For a surface that is not a chain of middleware (the MCP endpoint); the
 * middleware above is this with the budget headers.
 */
export async function spendBudget(
  config: Config,
  rule: RateLimitRule,
  identifier: string,
  announceTo?: (decision: RateLimitDecision, nowMs: number) => void,
): Promise<void> {
  const decision = await rateLimiterFor(config).limit(rule, identifier);
  const nowMs = Date.now();
  announceTo?.(decision, nowMs);
  if (!decision.success) throw new ApiError("RATE_LIMITED", { retry_after_seconds: secondsUntil(decision.reset, nowMs) });
}

function secondsUntil(epochMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((epochMs - nowMs) / 1000));
}

/** The remaining budget a request's response announces, when one was announced. */
const announcedRemaining = new WeakMap<Request, number>();

/** Sets the budget headers unless an earlier limit of this request announced a tighter one. */
function announce(c: Context, prefix: string, decision: RateLimitDecision, nowMs: number): void {
  const earlier = announcedRemaining.get(c.req.raw);
  if (earlier !== undefined && earlier <= decision.remaining) return;
  announcedRemaining.set(c.req.raw, decision.remaining);
  c.header(`${prefix}-limit`, String(decision.limit));
  c.header(`${prefix}-remaining`, String(decision.remaining));
  c.header(`${prefix}-reset`, String(secondsUntil(decision.reset, nowMs)));
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

/**
 * The caller's IP as the edge reports it: CF-Connecting-IP, which Cloudflare sets from the
 * connection whatever the client sent, and so does the local server's front
 * (scripts/local/client-address.ts). No header a client chooses (X-Real-IP, X-Forwarded-For) is read.
 */
export function clientIp(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}

/**
 * The budget a per-address limit counts a request against: an IPv4 address itself, an IPv6
 * address by its /64 network (one subscriber's link: a client walks its 2^64 addresses freely, so
 * a budget per IPv6 address would bound nothing). As clientIp, from CF-Connecting-IP only; without
 * it (no edge in front: neither Cloudflare nor the local server's front) every request shares the
 * one budget `ip:unknown`, which fails closed.
 *
 * @example clientAddressBudget(c) // "ip:203.0.113.7", or "ip6:2001:db8:aa:1::/64" for 2001:db8:aa:1:8f3::42
 */
export function clientAddressBudget(c: Context): string {
  return addressBudget(clientIp(c));
}

/** The budget of one address as clientAddressBudget counts it. */
export function addressBudget(address: string): string {
  if (!address.includes(":")) return `ip:${address}`;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1];
  if (mapped) return `ip:${mapped}`;
  const network = ipv6Network64(address);
  return network ? `ip6:${network}` : `ip:${address}`;
}

/** The /64 network of an IPv6 address (its first four groups, written short), or null when it is none. */
function ipv6Network64(address: string): string | null {
  const bare = address
    .replace(/^\[|\]$/g, "")
    .split("%")[0]!
    .toLowerCase();
  if (!/^[0-9a-f:.]+$/.test(bare) || (bare.match(/::/g) ?? []).length > 1) return null;
  const [head, tail] = bare.includes("::") ? bare.split("::") : [bare, undefined];
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  // An embedded IPv4 tail (::ffff:192.0.2.1) counts as two groups.
  const width = (groups: string[]) => groups.reduce((n, group) => n + (group.includes(".") ? 2 : 1), 0);
  const missing = 8 - width(headGroups) - width(tailGroups);
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...tailGroups];
  const first = groups.slice(0, 4);
  if (first.some((group) => !/^[0-9a-f]{1,4}$/.test(group))) return null;
  return `${first.map((group) => Number.parseInt(group, 16).toString(16)).join(":")}::/64`;
}
