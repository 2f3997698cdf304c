import type { Context, MiddlewareHandler } from "hono";
import { rpc } from "../kernel/db/rpc";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type {} from "../kernel/rpc";
import type { AppEnv } from "./app";
import { withDoc } from "./openapi";

interface BreakerPolicy {
  /** A response slower than this (milliseconds) breaches the objective, as does a 5xx of the service's own making. */
  latencyObjectiveMs: number;
  /** Breaches inside `windowSeconds` that open the breaker. */
  threshold: number;
  windowSeconds: number;
  /** How long an open breaker pauses the function before letting requests through again. */
  openSeconds: number;
}

const DEFAULT_BREAKER_POLICY: BreakerPolicy = { latencyObjectiveMs: 3000, threshold: 10, windowSeconds: 60, openSeconds: 30 };

/**
 * True when a failed request was the caller's doing although it ended in a 5xx: the database
 * refused a value of the request (SQLSTATE class 22, data exception: a NUL character, a lone
 * surrogate, a number out of range) that validation let through. The answer is still the
 * service's bug to fix, but it says nothing about the service's health.
 */
function callerCaused(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return name === "PostgresError" && typeof code === "string" && code.startsWith("22");
}

/**
 * Whether a finished request counts against the service: a 5xx that is not the caller's doing,
 * or a response over the latency objective that is not a 4xx. A 4xx never counts: it is the
 * caller's input or credentials, and one caller must not be able to pause a function by sending
 * bad requests.
 */
export function isServiceFailure(status: number, error: unknown, elapsedMs: number, policy = DEFAULT_BREAKER_POLICY): boolean {
  if (status >= 400 && status < 500) return false;
  if (status >= 500) return !callerCaused(error);
  return elapsedMs > policy.latencyObjectiveMs;
}

/** A function's breaker for one tenant, as circuit_breaker_state and circuit_breaker_record take it. */
function breakerScopeOf(c: Context<AppEnv>, functionName: string, tenant: Tenant) {
  return {
    deployment: c.var.config.DEPLOYMENT_ID,
    function_name: functionName,
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: c.var.now.toISOString(),
  };
}

/**
 * Counts a finished request against its tenant's breaker when it failed the service (isServiceFailure): what
 * circuitBreaker does after the handler, for a route that meets the breaker inside its own call (the sink's
 * stand-in in one call, D-740). A failure to count is not the request's.
 */
export async function countBreach(
  c: Context<AppEnv>,
  functionName: string,
  tenant: Tenant,
  finished: { status: number; error: unknown; startedAt: number },
  policy: BreakerPolicy = DEFAULT_BREAKER_POLICY,
): Promise<void> {
  if (!isServiceFailure(finished.status, finished.error, performance.now() - finished.startedAt, policy)) return;
  await rpc(c.var.db(), "circuit_breaker_record", {
    ...breakerScopeOf(c, functionName, tenant),
    window_seconds: policy.windowSeconds,
    threshold: policy.threshold,
    open_seconds: policy.openSeconds,
  }).catch(() => undefined);
}

/**
 * A circuit breaker per deployment (DEPLOYMENT_ID), function, merchant and environment, kept in
 * Postgres so every isolate sees it. Each of the service's own failures (isServiceFailure: a 5xx
 * not caused by the request's values, or a response slower than the latency objective; never a
 * 4xx) is a breach; `threshold` breaches inside `windowSeconds` open the breaker, and for
 * `openSeconds` the function answers that merchant in that environment `503 SLO_BREACH_PAUSED`
 * with Retry-After instead of adding load to what is failing. Other merchants are not paused:
 * one tenant's traffic (a failing integration, a payload that trips a bug) never takes the
 * function away from another. After that requests flow again (half-open); the next breaches
 * re-open it. Runs after authentication: the merchant is the principal's.
 *
 * @example app.post("/", apiKeyAuth("secret"), circuitBreaker("process-biovital-transaction"), handler)
 */
export function circuitBreaker(functionName: string, policy: BreakerPolicy = DEFAULT_BREAKER_POLICY): MiddlewareHandler<AppEnv> {
  return withDoc<MiddlewareHandler<AppEnv>>(
    async function guardWithCircuitBreaker(c, next) {
      const principal = c.var.principal;
      if (!principal) return next();
      // Read with authentication where the route asked for it (AuthOptions.breaker, D-506), else here.
      const known = c.var.breakerState;
      const state =
        known?.function_name === functionName
          ? known
          : await rpc(c.var.db(), "circuit_breaker_state", breakerScopeOf(c, functionName, principal));
      if (state.open) {
        throw new ApiError("SLO_BREACH_PAUSED", { retry_after_seconds: state.retry_after_seconds });
      }
      const startedAt = performance.now();
      await next();
      await countBreach(c, functionName, principal, { status: c.res.status, error: c.error, startedAt }, policy);
    },
    { answers: ["SLO_BREACH_PAUSED"] },
  );
}
