import type { Context, MiddlewareHandler } from "hono";
import { sha256Hex } from "../lib/crypto";
import type { AppEnv } from "./app";
import type { Authenticated } from "./auth";
import { rpc } from "./db/rpc";
import { ApiError } from "./errors";

const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/** An in-flight record older than this belongs to a request that died; a retry may take it over. */
const LEASE_SECONDS = 60;
const KEY_FORMAT = /^[\x21-\x7e]{8,200}$/;
/** What a request that meets its key in flight is told to wait: most requests finish well within it. */
const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/**
 * The request's Idempotency-Key: undefined when absent, null when present but not 8 to 200
 * printable characters. Every function reads the header through here.
 */
export function idempotencyKeyOf(headers: Headers): string | null | undefined {
  const key = headers.get("idempotency-key");
  if (key === null) return undefined;
  return KEY_FORMAT.test(key) ? key : null;
}

/**
 * The Idempotency-Key store (Postgres), keyed by merchant, environment, scope and key; the scope is
 * a function's name, or what `scopeOf` derives from the request (the resource API: its path). Same
 * key and same body replays the stored response with `Idempotency-Status: replayed`; a request
 * still running is `409 IDEMPOTENCY_IN_FLIGHT` with `Retry-After`; a different body is `422
 * IDEMPOTENCY_KEY_REUSED`; a 5xx is never stored. Without the header the request simply runs (the
 * key is optional by default).
 *
 * @example app.post("/", apiKeyAuth("secret", { replay: true }), idempotency("process-biovital-transaction"), handler)
 */
export function idempotency(scopeOf: string | ((c: Context<AppEnv & Authenticated>) => string)): MiddlewareHandler<AppEnv & Authenticated> {
  return async function applyIdempotency(c, next) {
    const key = idempotencyKeyOf(c.req.raw.headers);
    if (key === undefined) return next();
    if (key === null) throw new ApiError("IDEMPOTENCY_KEY_INVALID");
    const principal = c.var.principal;
    const functionName = typeof scopeOf === "string" ? scopeOf : scopeOf(c);
    const scope = { merchant_id: principal.merchantId, environment: principal.environment, function_name: functionName, key };
    const begin = await rpc(c.var.db(), "idempotency_begin", {
      ...scope,
      request_hash: await sha256Hex(await c.req.raw.clone().text()),
      now: c.var.now.toISOString(),
      lease_seconds: LEASE_SECONDS,
      retention_seconds: IDEMPOTENCY_RETENTION_SECONDS,
    });
    if (begin.outcome === "in_flight") {
      c.header("retry-after", String(IN_FLIGHT_RETRY_AFTER_SECONDS));
      throw new ApiError("IDEMPOTENCY_IN_FLIGHT");
    }
    if (begin.outcome === "mismatch") throw new ApiError("IDEMPOTENCY_KEY_REUSED");
    if (begin.outcome === "replay") {
      c.header("idempotency-status", "replayed");
      return c.json(begin.body as object, begin.status as 200);
    }
    try {
      await next();
    } finally {
      const status = c.res.status;
      const body =
        status < 500
          ? await c.res
              .clone()
              .json()
              .catch(() => null)
          : null;
      await rpc(c.var.db(), "idempotency_finish", { ...scope, status: body === null ? 500 : status, body });
    }
  };
}
