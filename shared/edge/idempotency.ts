import type { Context, MiddlewareHandler, Next } from "hono";
import { replayParam } from "../kernel/authenticate";
import type { Queryable } from "../kernel/db/client";
import { type RpcResult, rpc } from "../kernel/db/rpc";
import { ApiError } from "../kernel/errors";
import type { Principal } from "../kernel/principal";
import type { PendingResponse } from "../kernel/rpc";
import { idempotencyKey } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import { canonicalJson } from "../lib/json";
import type { AppEnv } from "./app";
import { withDoc } from "./openapi";

const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/** An in-flight record older than this belongs to a request that died; a retry may take it over. */
const LEASE_SECONDS = 60;
/**
 * A request in flight for less than this is most likely about to finish (the sink answers within
 * its 3 s latency objective): Retry-After 1. One running longer most likely died, and nothing
 * changes before its lease ends: Retry-After says when that is.
 */
const SETTLING_SECONDS = 5;

/** Retry-After for a request that met its key in flight (seconds, at least 1). */
export function inFlightRetryAfter({
  running_seconds,
  lease_left_seconds,
}: {
  running_seconds: number;
  lease_left_seconds: number;
}): number {
  return running_seconds < SETTLING_SECONDS ? 1 : Math.max(1, Math.ceil(lease_left_seconds));
}

/**
 * The request's Idempotency-Key: undefined when absent, null when present but not 8 to 200
 * printable characters. Every function reads the header through here.
 */
export function idempotencyKeyOf(headers: Headers): string | null | undefined {
  return idempotencyKey(headers.get("idempotency-key") ?? undefined);
}

/** A response's JSON body, or null when it has none. */
async function jsonOf(response: Response): Promise<unknown> {
  return response
    .clone()
    .json()
    .catch(() => null);
}

/** Whether an answer says it replays an earlier decision: a consume's, or the mandate block of a stand-in's act. */
function saysReplay(body: unknown): boolean {
  const answer = body as { idempotent_replay?: unknown; mandate?: { idempotent_replay?: unknown } } | null;
  return answer?.idempotent_replay === true || answer?.mandate?.idempotent_replay === true;
}

/**
 * `Idempotency-Status: replayed` on an answer that says it is a replay (`idempotent_replay: true`,
 * at its top or in its mandate block), so that the header and the body never disagree: the ledger's
 * replays of a consumption carry it as the response store's replays do.
 */
export function markReplay(c: Context, answer: unknown): void {
  if (saysReplay(answer)) c.header("idempotency-status", "replayed");
}

/**
 * Rewrites the response's JSON body in canonical form (keys sorted, lib/json.ts) and marks it when it
 * says it is a replay. Every answer under a key is written so, the first time and from the store: the
 * store keeps jsonb, whose key order is its own, so a replay written as it comes back would be the
 * same JSON in other bytes; written canonically a replay from the store is byte for byte the original.
 */
export async function writeKeyedAnswer(c: Context): Promise<unknown> {
  const body = c.res.status < 500 ? await jsonOf(c.res) : null;
  if (body === null) return null;
  c.res = new Response(canonicalJson(body), c.res);
  markReplay(c, body);
  return body;
}

interface IdempotencyOptions {
  /**
   * Top-level fields of the answer the store keeps as null: a secret shown once (a new API key, an
   * endpoint's signing secret) is never kept in the clear, so its replay answers `null` there
   * (docs/management.md, "Idempotency"; D-451).
   */
  forget?: readonly string[];
}

/** `body` with the `forget` fields set to null, for the store. */
function withoutSecrets(body: unknown, forget: readonly string[]): unknown {
  if (forget.length === 0 || body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const kept: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of forget) if (field in kept) kept[field] = null;
  return kept;
}

/**
 * The response store's begin of a key for a function, as idempotency_begin takes it but for the tenant, the instant
 * and the nonce: `rawBody` is the body as sent, whose hash tells a retry from another request under the same key.
 */
export async function beginOf(functionName: string, key: string, rawBody: string) {
  return {
    function_name: functionName,
    key,
    request_hash: await sha256Hex(rawBody),
    lease_seconds: LEASE_SECONDS,
    retention_seconds: IDEMPOTENCY_RETENTION_SECONDS,
  };
}

/**
 * The answer of a begin that is no start: `409 IDEMPOTENCY_IN_FLIGHT`, `422 IDEMPOTENCY_KEY_REUSED` (thrown), or
 * the stored answer replayed; undefined for a request that runs (started, or sent to the mandate's ledger).
 */
export function answerBegun(c: Context, begin: RpcResult<"idempotency_begin">): Response | undefined {
  if (begin.outcome === "in_flight") throw new ApiError("IDEMPOTENCY_IN_FLIGHT", { retry_after_seconds: inFlightRetryAfter(begin) });
  if (begin.outcome === "mismatch") throw new ApiError("IDEMPOTENCY_KEY_REUSED");
  if (begin.outcome !== "replay") return undefined;
  c.header("idempotency-status", "replayed");
  return c.body(canonicalJson(begin.body), begin.status as 200, { "content-type": "application/json" });
}

/** Stores the answer of a request whose act stored none (a 5xx drops the record instead, so that a retry runs). */
export async function finishUnstored(sql: Queryable, pending: PendingResponse, status: number, body: unknown): Promise<void> {
  await rpc(sql, "idempotency_finish", {
    ...pending.record,
    status,
    body,
    ...(pending.mandateId && { mandate_id: pending.mandateId }),
  });
}

/** A route behind idempotency(): the handler's act completes `storedResponse` (absent without a key). */
export type WithStoredResponse = { Variables: { storedResponse: PendingResponse | undefined } };

type KeyedEnv = AppEnv & { Variables: { principal: Principal } };

/**
 * The Idempotency-Key store (Postgres), keyed by merchant, environment, scope and key; the scope is
 * a function's name, or what `scopeOf` derives from the request (the resource API: its path). Same
 * key and same body replays the stored response with `Idempotency-Status: replayed`; a request
 * still running is `409 IDEMPOTENCY_IN_FLIGHT` with `Retry-After` (1 s, or the seconds left on the
 * lease of a request that has run for long);
 * a different body is `422 IDEMPOTENCY_KEY_REUSED`; a 5xx is never stored. Without the header the
 * request simply runs (the key is optional by default). A request that consumed a mandate (its record
 * names the mandate) is replayed by the mandate's ledger instead: the handler runs again without a
 * stored response, and the ledger, which holds the consumption under the same key, answers the
 * replay by its one rule (mandate_consume; after revocation, the refusal `mandate_revoked`). Every
 * answer under a key is written in canonical key order, so a replay from the store is byte for byte
 * the original, and one that says it is a replay carries `Idempotency-Status: replayed`.
 *
 * The replay nonce that authentication left unclaimed (`replay: "idempotent"`) is claimed in the
 * same call, once the request is known to be no replay: an exact retry is answered whatever its
 * nonce (spec 4.4 rule 7), a new request under a used nonce is `409 NONCE_REUSED`.
 *
 * The handler passes `storedResponse` to the RPC that performs its act, which stores the answer in
 * the act's own transaction, so an act that committed always has its answer; any other answer (a
 * refusal before anything was written, bad input, a handler that stores nothing itself) is stored
 * here afterwards.
 *
 * @example app.post("/", secretKeyOrUserAuth({ replay: "idempotent" }), idempotency("process-biovital-transaction"), handler)
 */
export function idempotency(
  scopeOf: string | ((c: Context<KeyedEnv & WithStoredResponse>) => string),
  { forget = [] }: IdempotencyOptions = {},
): MiddlewareHandler<KeyedEnv & WithStoredResponse> {
  return withDoc(applyIdempotency, {
    answers: ["IDEMPOTENCY_KEY_INVALID", "IDEMPOTENCY_IN_FLIGHT", "IDEMPOTENCY_KEY_REUSED"],
    headers: [
      { name: "Idempotency-Key", description: "Optional; 8 to 200 printable characters, one per logical action, the same on every retry." },
    ],
  });
  async function applyIdempotency(c: Context<KeyedEnv & WithStoredResponse>, next: Next) {
    const key = idempotencyKeyOf(c.req.raw.headers);
    if (key === undefined) return next();
    if (key === null) throw new ApiError("IDEMPOTENCY_KEY_INVALID");
    const principal = c.var.principal;
    const functionName = typeof scopeOf === "string" ? scopeOf : scopeOf(c);
    const record = { merchant_id: principal.merchantId, environment: principal.environment, function_name: functionName, key };
    const begin = await rpc(c.var.db(), "idempotency_begin", {
      ...record,
      ...(await beginOf(functionName, key, await c.req.raw.clone().text())),
      ...replayParam(c.var.unclaimedNonce, c.var.now),
    });
    const answered = answerBegun(c, begin);
    if (answered) return answered;
    if (begin.outcome === "ledger") {
      c.set("storedResponse", undefined);
      await next();
      await writeKeyedAnswer(c);
      return;
    }
    const pending: PendingResponse = { record, stored: false };
    c.set("storedResponse", pending);
    let body: unknown = null;
    try {
      await next();
      body = await writeKeyedAnswer(c);
    } finally {
      if (!pending.stored) {
        const status = c.res.status;
        await finishUnstored(c.var.db(), pending, body === null ? 500 : status, withoutSecrets(body, forget));
      }
    }
  }
}
