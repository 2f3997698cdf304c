import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app";
import { rpc } from "./db/rpc";
import { ApiError } from "./errors";

interface BreakerPolicy {
  /** A request slower than this (milliseconds) breaches the objective, as does any 5xx. */
  latencyObjectiveMs: number;
  /** Breaches inside `windowSeconds` that open the breaker. */
  threshold: number;
  windowSeconds: number;
  /** How long an open breaker pauses the function before letting requests through again. */
  openSeconds: number;
}

const DEFAULT_BREAKER_POLICY: BreakerPolicy = { latencyObjectiveMs: 3000, threshold: 10, windowSeconds: 60, openSeconds: 30 };

/**
 * A circuit breaker per deployment (DEPLOYMENT_ID), function and environment, kept in Postgres so
 * every isolate sees it.
 * Each request ending in a 5xx, or slower than the latency objective, is a breach; `threshold`
 * breaches inside `windowSeconds` open the breaker, and for `openSeconds` the function answers
 * `503 SLO_BREACH_PAUSED` with Retry-After instead of adding load to what is failing. After that
 * requests flow again (half-open); the next breaches re-open it.
 *
 * @example app.post("/", apiKeyAuth("secret"), circuitBreaker("process-biovital-transaction"), handler)
 */
export function circuitBreaker(functionName: string, policy: BreakerPolicy = DEFAULT_BREAKER_POLICY): MiddlewareHandler<AppEnv> {
  return async function guardWithCircuitBreaker(c, next) {
    const environment = c.var.principal?.environment ?? "live";
    const scope = { deployment: c.var.config.DEPLOYMENT_ID, function_name: functionName, environment, now: c.var.now.toISOString() };
    const state = await rpc(c.var.db(), "circuit_breaker_state", scope);
    if (state.open) {
      c.header("retry-after", String(state.retry_after_seconds));
      throw new ApiError("SLO_BREACH_PAUSED", { retry_after_seconds: state.retry_after_seconds });
    }
    const started = performance.now();
    await next();
    if (c.res.status >= 500 || performance.now() - started > policy.latencyObjectiveMs) {
      await rpc(c.var.db(), "circuit_breaker_record", {
        ...scope,
        window_seconds: policy.windowSeconds,
        threshold: policy.threshold,
        open_seconds: policy.openSeconds,
      }).catch(() => undefined);
    }
  };
}
