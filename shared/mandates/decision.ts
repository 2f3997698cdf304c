import * as v from "valibot";
import { sha256Hex } from "../lib/crypto";
import { currencySchema, isMinorUnitAmount } from "../lib/money";
import type { AppContext } from "../platform/app";
import { rpc } from "../platform/db/client";
import { ApiError } from "../platform/errors";
import { parseWith, readJson } from "../platform/validation";
import { mandateUuid } from "./ids";
import { answer, type Decision, refusal } from "./refusals";
import { isScope } from "./scopes";

const contextField = v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100)));

/** The request body shared by mandate-check and mandate-consume (spec 4.8). */
export const decisionSchema = v.strictObject({
  mandate_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  scope: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  amount: v.optional(v.number()),
  currency: v.optional(currencySchema),
  action_ref: v.optional(v.pipe(v.string(), v.maxLength(200))),
  context: v.optional(v.strictObject({ merchant: contextField, category: contextField, country: contextField })),
});

export interface DecisionRequest {
  raw: string;
  params: Record<string, unknown>;
  /** A refusal decided before the database, already in the answer shape. */
  early: Record<string, unknown> | null;
}

/**
 * Reads and validates a check/consume body: money is an integer minor unit (`400 AMOUNT_INVALID`),
 * an amount needs its currency; a scope outside the vocabulary is refused as `unknown_scope` (200).
 */
export async function decisionRequest(c: AppContext): Promise<DecisionRequest> {
  const body = await readJson(c);
  const record = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if ("amount" in record && !isMinorUnitAmount(record.amount)) throw new ApiError("AMOUNT_INVALID");
  const input = parseWith(decisionSchema, body);
  if (input.amount !== undefined && input.currency === undefined) throw new ApiError("INVALID_INPUT", { fields: ["currency"] });
  const mandateId = mandateUuid(input.mandate_id);
  const principal = c.var.principal!;
  const params = {
    ...input,
    mandate_id: mandateId,
    merchant_id: principal.merchantId,
    environment: principal.environment,
    now: c.var.now.toISOString(),
  };
  const early = !mandateId
    ? refusal("mandate_not_found", c.var.locale)
    : !isScope(input.scope)
      ? refusal("unknown_scope", c.var.locale)
      : null;
  return { raw: JSON.stringify(body), params, early };
}

/** mandate-check: the advisory decision, read-only. */
export async function checkDecision(c: AppContext, request: DecisionRequest) {
  if (request.early) return request.early;
  return answer(await rpc<Decision>(c.var.db(), "mandate_check", request.params), c.var.locale);
}

export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{8,200}$/;

/** mandate-consume: the authoritative decision under the mandate's row lock, debiting once per key. */
export async function consumeDecision(c: AppContext, request: DecisionRequest, idempotencyKey: string) {
  if (request.early) return request.early;
  const decision = await rpc<Decision>(c.var.db(), "mandate_consume", {
    ...request.params,
    idempotency_key: idempotencyKey,
    request_hash: await sha256Hex(request.raw),
  });
  return answer(decision, c.var.locale);
}
