import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app";
import { rpc } from "./db/client";
import { ApiError } from "./errors";

/** How far x-service-timestamp may be from the server clock, either way. */
export const REPLAY_WINDOW_SECONDS = 300;
const NONCE = /^[A-Za-z0-9._~-]{8,128}$/;
const EPOCH_SECONDS = /^\d{1,12}$/;

/**
 * The replay guard of spec 4.1: `x-service-timestamp` (epoch seconds) within ±300 s of the server
 * clock and `x-service-nonce` never seen before for this merchant and environment inside that
 * window. The database claims the nonce atomically (primary key), so two racing copies of one
 * request cannot both pass. Runs after authentication: nonces are per principal.
 *
 * @example app.post("/", apiKeyAuth("secret"), replayGuard(), handler)
 */
export function replayGuard(): MiddlewareHandler<AppEnv> {
  return async function guardAgainstReplay(c, next) {
    const principal = c.var.principal;
    if (!principal) throw new Error("replayGuard needs an authenticated principal");
    const timestamp = c.req.header("x-service-timestamp");
    if (!timestamp || !EPOCH_SECONDS.test(timestamp)) throw new ApiError("TIMESTAMP_REQUIRED");
    const skew = Math.abs(Number(timestamp) - c.var.now.getTime() / 1000);
    if (skew > REPLAY_WINDOW_SECONDS) throw new ApiError("TIMESTAMP_OUT_OF_WINDOW");
    const nonce = c.req.header("x-service-nonce");
    if (!nonce || !NONCE.test(nonce)) throw new ApiError("NONCE_REQUIRED");
    const { fresh } = await rpc<{ fresh: boolean }>(c.var.db(), "replay_guard_claim", {
      merchant_id: principal.merchantId,
      environment: principal.environment,
      nonce,
      now: c.var.now.toISOString(),
      window_seconds: REPLAY_WINDOW_SECONDS,
    });
    if (!fresh) throw new ApiError("NONCE_REUSED");
    return next();
  };
}
