/**
 * mandate-check and mandate-consume (spec 4.8, 4.9): the body both share, and the two decisions.
 * Each decision is one round trip: the RPC authenticates the caller's key, claims the replay nonce
 * and decides (consume under the mandate's row lock, debiting once per Idempotency-Key).
 */
import * as v from "valibot";
import { authenticate, type Credential, credentialParam, learnKeyTenant, replayParam } from "../kernel/authenticate";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import type { ReplayClaim } from "../kernel/replay-guard";
import { idempotencyKeySchema, minorUnitAmount } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import { currencySchema } from "../lib/money";
import { mandateUuid } from "./ids";
import { answer, refusal } from "./refusals";
import type { DecisionInput } from "./rpc";
import { isScope } from "./scopes";

const contextField = v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100)));

/** The context of an act, matched against the mandate's allowlists. */
export const contextSchema = v.optional(v.strictObject({ merchant: contextField, category: contextField, country: contextField }));

/**
 * The request body shared by mandate-check and mandate-consume (spec 4.8): money is an integer
 * minor unit (`400 AMOUNT_INVALID`), and an amount needs its currency.
 */
const decisionEntries = {
  mandate_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  scope: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  amount: v.optional(minorUnitAmount),
  currency: v.optional(currencySchema),
  action_ref: v.optional(v.pipe(v.string(), v.maxLength(200))),
  context: contextSchema,
};

/** An amount needs its currency. */
function amountHasCurrency(input: { amount?: number; currency?: string }): boolean {
  return input.amount === undefined || input.currency !== undefined;
}

export const decisionSchema = v.pipe(
  v.strictObject(decisionEntries),
  v.forward(v.partialCheck([["amount"], ["currency"]], amountHasCurrency, "currency is required"), ["currency"]),
);

/**
 * mandate-consume's body as the MCP tool takes it: the Idempotency-Key header is the
 * `idempotency_key` argument. Any string passes here, so that an absent or malformed key answers
 * the function's refusals (`idempotency_key_required`, `idempotency_key_invalid`).
 */
export const consumeArgumentsSchema = v.pipe(
  v.strictObject({ ...decisionEntries, idempotency_key: v.optional(v.string()) }),
  v.forward(v.partialCheck([["amount"], ["currency"]], amountHasCurrency, "currency is required"), ["currency"]),
);

/** The same arguments as the tool's JSON Schema states them: `idempotency_key` required, in the header's format. */
export const consumeArgumentsAdvertised = v.strictObject({ ...decisionEntries, idempotency_key: idempotencyKeySchema });

export type DecisionBody = v.InferOutput<typeof decisionSchema>;

/**
 * The caller: a presented key with its replay claim, which the decision's RPC authenticates; or a
 * tenant already authenticated at the edge (an MCP agent, whose OAuth token was checked there).
 */
type Caller = { credential: Credential; replay: ReplayClaim | null } | { tenant: Tenant };

/** The caller as the decision RPCs take it (request_authenticate's two forms). */
function callerParam(caller: Caller, now: Date) {
  return "tenant" in caller
    ? { tenant: { merchant_id: caller.tenant.merchantId, environment: caller.tenant.environment }, now: now.toISOString() }
    : { credential: credentialParam(caller.credential), ...replayParam(caller.replay, now) };
}

/** Authenticates a key caller before an answer decided without the database; a tenant already is. */
async function authenticateCaller(deps: Deps, caller: Caller): Promise<void> {
  if ("credential" in caller) await authenticate(deps.sql, caller.credential, caller.replay, deps.now);
}

/**
 * The decision's inputs, or the refusal decided before the database: a mandate id that cannot be
 * one is `mandate_not_found`, a scope outside the vocabulary `unknown_scope` (both 200). Such a
 * request is still authenticated (and its nonce claimed) before it is answered.
 */
async function decisionInput(
  deps: Deps,
  caller: Caller,
  body: DecisionBody,
): Promise<{ input: DecisionInput } | { refused: Record<string, unknown> }> {
  const mandateId = mandateUuid(body.mandate_id);
  const early = !mandateId ? "mandate_not_found" : !isScope(body.scope) ? "unknown_scope" : null;
  if (!early) return { input: { ...body, mandate_id: mandateId! } };
  await authenticateCaller(deps, caller);
  return { refused: refusal(early, deps.locale) };
}

/** mandate-check: the advisory decision, read-only (a false positive is possible under concurrency). */
export async function checkMandate(deps: Deps, caller: Caller, body: DecisionBody): Promise<Record<string, unknown>> {
  const decided = await decisionInput(deps, caller, body);
  if ("refused" in decided) return decided.refused;
  const { caller: tenant, ...decision } = await rpc(deps.sql, "mandate_check_request", {
    ...callerParam(caller, deps.now),
    decision: decided.input,
  });
  if ("credential" in caller)
    learnKeyTenant(caller.credential.keyHash, { merchantId: tenant.merchant_id, environment: tenant.environment });
  return answer(decision, deps.locale);
}

/**
 * mandate-consume: the authoritative decision under the mandate's row lock, debiting once per
 * Idempotency-Key (a replay answers the first decision). Without a key the answer is the refusal
 * `idempotency_key_required`; with a malformed one (null: spaces, too short …) the refusal
 * `idempotency_key_invalid`. `rawBody` is the body as sent: the same key with another body is
 * `422 IDEMPOTENCY_KEY_REUSED`.
 */
export async function consumeMandate(
  deps: Deps,
  caller: Caller,
  body: DecisionBody,
  idempotency: { key: string | null | undefined; rawBody: string },
): Promise<Record<string, unknown>> {
  if (!idempotency.key) {
    await authenticateCaller(deps, caller);
    return refusal(idempotency.key === null ? "idempotency_key_invalid" : "idempotency_key_required", deps.locale);
  }
  const decided = await decisionInput(deps, caller, body);
  if ("refused" in decided) return decided.refused;
  const decision = await rpc(deps.sql, "mandate_consume_request", {
    ...callerParam(caller, deps.now),
    decision: { ...decided.input, idempotency_key: idempotency.key, request_hash: await sha256Hex(idempotency.rawBody) },
  });
  return answer(decision, deps.locale);
}
