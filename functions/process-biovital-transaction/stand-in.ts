/**
 * The sink's stand-in in one round trip (docs/decisions.md, D-740): a mandate standing in for a
 * person, asked by a caller this isolate already knows, is answered by one RPC (stand_in_request)
 * that authenticates the key and claims the nonce, reads the circuit breaker, begins the
 * Idempotency-Key and acts, as mandate-consume folds its key, nonce and idempotency into its
 * decision. Every other request, and any request this path would refuse before the database (a bad
 * header, a malformed Idempotency-Key, a body input() refuses, a forced scenario), runs the sink's
 * middleware as before, which answers it in the order it always has.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../shared/edge/app";
import { depsOf } from "../../shared/edge/app";
import { countBreach } from "../../shared/edge/circuit-breaker";
import { answerBegun, beginOf, finishUnstored, idempotencyKeyOf, writeKeyedAnswer } from "../../shared/edge/idempotency";
import { validJsonBody } from "../../shared/edge/input";
import { type RateLimitRule, spendBudget, tenantBudget } from "../../shared/edge/rate-limit";
import { SCENARIO_HEADER } from "../../shared/identity/scenario";
import {
  authenticate,
  bearerOf,
  knownTenantOfKey,
  presentedCredential,
  presentedKey,
  replayParam,
  userPrincipal,
} from "../../shared/kernel/authenticate";
import { rpc } from "../../shared/kernel/db/rpc";
import { ApiError } from "../../shared/kernel/errors";
import { signingKeysOf } from "../../shared/kernel/keys";
import type { Tenant } from "../../shared/kernel/principal";
import { replayClaim } from "../../shared/kernel/replay-guard";
import type { PendingResponse } from "../../shared/kernel/rpc";
import { type TransactionBody, transactionSchema } from "../../shared/transactions/input";
import { type StandInCall, standInAnswer, standInRequest, standsInOneCall } from "../../shared/transactions/stand-in";

/** A stand-in this path takes: the call to make, its body, and whose budget it spends. */
interface OneCall {
  call: StandInCall;
  body: TransactionBody & { mandate_id: string };
  tenant: Tenant;
}

/**
 * Answers a stand-in in one call before the sink's middleware, or hands the request to it (next).
 * `limit` is the sink's rate limit, counted here as its middleware counts it.
 */
export function standInInOneCall(functionName: string, limit: RateLimitRule): MiddlewareHandler<AppEnv> {
  return async function standInInOneCall(c, next) {
    const one = await oneCallOf(c, functionName);
    if (!one) return next();
    try {
      await spendBudget(c.var.config, limit, tenantBudget(one.tenant));
    } catch (error) {
      // The middleware's order: the key's error, then the nonce's, then the rate limit's 429.
      await authenticateFirst(c, one.call);
      throw error;
    }
    return answer(c, functionName, one);
  };
}

/**
 * The stand-in this path takes, or null: a secret key whose tenant this isolate learnt (the receipt, signed
 * before the call, names the merchant) or a person's session; valid replay headers; no malformed
 * Idempotency-Key; no forced scenario; a body input() takes, whose mandate id can be one.
 */
async function oneCallOf(c: Context<AppEnv>, functionName: string): Promise<OneCall | null> {
  const headers = c.req.raw.headers;
  if (headers.has(SCENARIO_HEADER)) return null;
  const caller = await callerOf(c);
  if (!caller) return null;
  let replay: ReturnType<typeof replayClaim>;
  try {
    replay = replayClaim(headers, c.var.now);
  } catch {
    return null;
  }
  const key = idempotencyKeyOf(headers);
  if (key === null) return null;
  // A live act's body is left to input() unvalidated here: only a body naming a mandate is worth the schema twice.
  const read = await validJsonBody(c.req.raw, transactionSchema, namesMandate);
  const actor = "user" in caller.caller ? caller.caller.user : { kind: "merchant_key" as const, ...caller.tenant };
  if (!read || !standsInOneCall(read.input, actor)) return null;
  return {
    call: {
      caller: caller.caller,
      replay,
      breaker: { deployment: c.var.config.DEPLOYMENT_ID, function_name: functionName },
      ...(key !== undefined && { idempotency: await beginOf(functionName, key, read.text) }),
    },
    body: read.input,
    tenant: caller.tenant,
  };
}

/** Whether a parsed body names a mandate (the schema decides the rest). */
function namesMandate(value: unknown): boolean {
  return typeof value === "object" && value !== null && "mandate_id" in value;
}

/** The caller as secretKeyOrUserAuth would take it, when this isolate knows its tenant; null otherwise. */
async function callerOf(c: Context<AppEnv>): Promise<{ caller: StandInCall["caller"]; tenant: Tenant } | null> {
  const headers = c.req.raw.headers;
  const bearer = bearerOf(c.req.header("authorization"));
  if (bearer && !presentedKey(headers, c.var.config.LEGACY_API_KEY_HEADER)) {
    const user = await userPrincipal(await signingKeysOf(c.var.config), bearer, c.var.now).catch(() => null);
    return user && { caller: { user }, tenant: user };
  }
  const credential = await presentedCredential(headers, c.var.config.LEGACY_API_KEY_HEADER, "secret").catch(() => null);
  const tenant = credential && knownTenantOfKey(credential.keyHash);
  return tenant ? { caller: { credential: credential!, tenant }, tenant } : null;
}

/** What the sink's authentication does before its rate limit: the key, and the nonce unless the response store claims it. */
async function authenticateFirst(c: Context<AppEnv>, { caller, replay, idempotency }: StandInCall): Promise<void> {
  const nonce = idempotency ? null : replay;
  if ("credential" in caller) await authenticate(c.var.db(), caller.credential, nonce, c.var.now);
  else if (nonce) {
    const tenant = { merchant_id: caller.user.merchantId, environment: caller.user.environment };
    await rpc(c.var.db(), "request_authenticate", { tenant, ...replayParam(nonce, c.var.now) });
  }
}

/**
 * The one call and the sink's answer: `503 SLO_BREACH_PAUSED` for an open breaker, the response store's answers
 * (409 in flight, 422 another body, a replay), or the act's. Under an Idempotency-Key an answer the act did not
 * store (a refusal) is stored after it, as idempotency() does; a failure of the service counts against the breaker,
 * as circuitBreaker() does.
 */
async function answer(c: Context<AppEnv>, functionName: string, { call, body, tenant }: OneCall): Promise<Response> {
  const deps = depsOf(c.var);
  const startedAt = performance.now();
  let pending: PendingResponse | undefined;
  try {
    const done = await standInRequest(deps, await signingKeysOf(c.var.config), call, body);
    if (done.breaker.open) {
      throw new ApiError("SLO_BREACH_PAUSED", { retry_after_seconds: done.breaker.retry_after_seconds });
    }
    const replayed = done.begun && answerBegun(c, done.begun);
    if (replayed) return replayed;
    if (done.begun?.outcome === "started") {
      const record = {
        merchant_id: tenant.merchantId,
        environment: tenant.environment,
        function_name: functionName,
        key: call.idempotency!.key,
      };
      pending = { record, stored: false };
    }
    const outcome = standInAnswer(deps, body, done.act!, pending);
    c.header("content-language", c.var.locale);
    c.res = c.json(outcome);
    if (done.begun) await writeKeyedAnswer(c);
    if (pending && !pending.stored) await finishUnstored(c.var.db(), pending, 200, outcome);
    await countBreach(c, functionName, tenant, { status: 200, error: null, startedAt });
    return c.res;
  } catch (error) {
    if (error instanceof ApiError && error.code === "SLO_BREACH_PAUSED") throw error;
    const status = error instanceof ApiError ? error.status : 500;
    if (pending) await finishUnstored(c.var.db(), pending, status, status < 500 ? (error as ApiError).body() : null);
    await countBreach(c, functionName, tenant, { status, error, startedAt });
    throw error;
  }
}
