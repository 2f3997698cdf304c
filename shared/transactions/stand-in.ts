import { type Credential, credentialParam, replayParam } from "../kernel/authenticate";
import { type RpcParams, type RpcResult, rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { HostedSessionPrincipal, Principal, Tenant, UserPrincipal } from "../kernel/principal";
import type { ReplayClaim } from "../kernel/replay-guard";
import type { BreakerScope, PendingResponse } from "../kernel/rpc";
import { sha256Hex } from "../lib/crypto";
import type { KeySet } from "../lib/signing";
import { mandatePublicId, mandateUuid } from "../mandates/ids";
import { answer } from "../mandates/refusals";
import type { Decision } from "../mandates/rpc";
import type { Scope } from "../mandates/scopes";
import type { ReceiptRow } from "../receipts/rpc";
import type { AssuranceLevel } from "../receipts/signed-receipt";
import { DOCUMENT_ACTIONS, type TransactionAction, type TransactionBody } from "./input";
import {
  type ActOptions,
  type Actor,
  actReceipts,
  assertMayName,
  assertUsable,
  captureRow,
  documentRequired as documentRefusal,
  resolveIdentity,
  resolveParams,
} from "./record";
import type { StandInApproval } from "./rpc";

/** The scope an act consumes when the request names none. */
const ACTION_SCOPES: Record<TransactionAction, Scope> = {
  ACTION_LOGIN: "login",
  ACTION_PAYMENT: "payment",
  ACTION_SIGN: "sign",
  ACTION_SIGNUP: "login",
};

/**
 * A refusal of the sink's stand-in (spec 7.2, D-425): HTTP 200 with `allowed: false`, the stable
 * `reason`, the English `developer_message`, the localised `user_message` (absent on integration
 * errors) and `step_up_available`, as mandate-consume answers; `success: false` and `status:
 * "refused"` beside them, so that a client reading the sink's own `success` never acts on it.
 */
export type StandInRefusal = Record<string, unknown> & { success: false; status: "refused"; allowed: false; reason: string };

/**
 * The key the stand-in consumes under (D-426): the request's Idempotency-Key, or without one the
 * request's replay nonce (`x-service-nonce`, claimed once per merchant and environment by
 * authentication before the act runs). A retry of the same request is its nonce again: `409
 * NONCE_REUSED` before anything runs, and the ledger, which keeps the consumption under the
 * nonce's key for good, could not debit it twice even past the replay window. The space keeps the
 * two key spaces apart: an Idempotency-Key is printable characters without spaces.
 */
export function standInConsumeKey(idempotencyKey: string | undefined, replayNonce: string | undefined): string | undefined {
  return idempotencyKey ?? (replayNonce === undefined ? undefined : `x-service-nonce ${replayNonce}`);
}

/** Every level a mandate can have been granted at: the stand-in's receipt is signed at each (see stand_in_transaction). */
const GRANT_LEVELS: readonly AssuranceLevel[] = ["face", "face_voice", "face_voice_doc"];

/**
 * Spec 4.4 rule 5: the mandate stands in for the live capture. The act consumes the mandate
 * through the same row-locked consume, idempotent per consume key (standInConsumeKey: the
 * Idempotency-Key, optional as 4.1 says, or the request's replay nonce); it is recorded with its
 * receipt in the same RPC, which also builds the approval and stores it under the Idempotency-Key
 * (`storedResponse`). A refusal is the spec's 200 refusal (StandInRefusal); a replayed key after
 * revocation is refused too. The receipt says nobody was present: act `ACTION_MANDATE`, assurance
 * `mandate`, with the mandate, the act and the grant's level.
 *
 * One round trip after authentication (D-690): stand_in_transaction resolves the person named by `user_id`, reads
 * the mandate and acts; the person's refusals (resolveIdentity's, and DOCUMENT_REQUIRED) come from what it answers,
 * in the order they always had. A request refused before the database (no consume key, a mandate id that
 * cannot be one) still resolves the person first, so that an unknown person is answered as such. A stand-in whose
 * caller this isolate already knows makes no call before this one: standInRequest (D-740).
 */
export async function transactWithMandate(
  deps: Deps,
  signing: KeySet,
  principal: Principal | HostedSessionPrincipal,
  body: TransactionBody & { mandate_id: string },
  { idempotencyKey, replayNonce, storedResponse }: Pick<ActOptions, "idempotencyKey" | "replayNonce" | "storedResponse">,
): Promise<StandInApproval | StandInRefusal> {
  const consumeKey = standInConsumeKey(idempotencyKey, replayNonce);
  const mandateId = mandateUuid(body.mandate_id);
  if (!consumeKey || !mandateId) {
    await resolveIdentity(deps, principal, body.user_id);
    return refusalOf(deps, { allowed: false, reason: consumeKey ? "mandate_not_found" : "idempotency_key_required" });
  }
  const act = await standInAct(deps, signing, principal, body, mandateId, consumeKey);
  const outcome = await rpc(deps.sql, "stand_in_transaction", {
    ...act,
    ...(storedResponse && { stored_response: { record: storedResponse.record } }),
  });
  return standInAnswer(deps, body, outcome, storedResponse);
}

/** A mandate's decision not to stand in, as the sink answers it (StandInRefusal). */
function refusalOf(deps: Deps, decision: Decision): StandInRefusal {
  return { success: false, status: "refused", ...(answer(decision, deps.locale) as { allowed: false; reason: string }) };
}

/**
 * stand_in_transaction's parameters, prepared in the Worker: the person to resolve, the consume, the capture and
 * the receipt signed at each level the mandate may have been granted at (`mandateId` is the mandate's uuid).
 */
async function standInAct(
  deps: Deps,
  signing: KeySet,
  principal: Actor,
  body: TransactionBody & { mandate_id: string },
  mandateId: string,
  consumeKey: string,
): Promise<RpcParams<"stand_in_transaction">> {
  assertMayName(principal, body.user_id);
  const scope = { merchant_id: principal.merchantId, environment: principal.environment, now: deps.now.toISOString() };
  const captureId = crypto.randomUUID();
  const { assurance_level: _mandates, ...capture } = captureRow(principal, body, deps.now, {
    id: captureId,
    captureNonce: `mandate:${captureId}`,
    assurance: null,
  });
  const signed = await actReceipts(signing, principal, body, captureId, GRANT_LEVELS, deps.now, mandatePublicId(mandateId));
  return {
    resolve: resolveParams(principal, body.user_id, deps.now),
    document_required: DOCUMENT_ACTIONS.has(body.action),
    consume: {
      ...scope,
      mandate_id: mandateId,
      idempotency_key: consumeKey,
      request_hash: await sha256Hex(JSON.stringify(body)),
      scope: body.scope ?? ACTION_SCOPES[body.action],
      amount: body.amount,
      currency: body.currency,
      context: body.context,
    },
    capture,
    receipts: Object.fromEntries(GRANT_LEVELS.map((level, i) => [level, signed[i]!])) as Record<AssuranceLevel, ReceiptRow>,
  };
}

/**
 * The sink's answer to what stand_in_transaction did: the approval (stored under the Idempotency-Key by the call
 * itself, which `storedResponse` is told), the mandate's 200 refusal, or the person's refusal, thrown with the code
 * and in the order resolveIdentity gives them (IDENTITY_MISMATCH, ACCESS_REVOKED), then DOCUMENT_REQUIRED.
 */
export function standInAnswer(
  deps: Deps,
  body: TransactionBody,
  { identity, decision, approval }: RpcResult<"stand_in_transaction">,
  storedResponse?: PendingResponse,
): StandInApproval | StandInRefusal {
  assertUsable(identity);
  if (DOCUMENT_ACTIONS.has(body.action) && !identity.has_document) throw documentRefusal(body.action);
  if (!approval) return refusalOf(deps, decision ?? { allowed: false, reason: "mandate_not_found" });
  if (storedResponse) storedResponse.stored = true;
  return approval;
}

/**
 * Whether a body is a stand-in standInRequest can take from `actor`: a mandate id that can be one, naming a person
 * the actor may name. The others are refused before the database, after authentication (a person's session naming
 * another, `403 UNAUTHORIZED_DEVICE`) or after the person is resolved (transactWithMandate), as they always were.
 */
export function standsInOneCall(body: TransactionBody, actor: Actor): body is TransactionBody & { mandate_id: string } {
  const named = actor.kind !== "user" || body.user_id === actor.identityId;
  return named && body.mandate_id !== undefined && mandateUuid(body.mandate_id) !== null;
}

/**
 * A stand-in asked in one call (D-740): the caller's key, whose tenant this isolate learnt when it first
 * authenticated (a key never changes merchant), or a person's own session; the request's replay claim; the circuit
 * breaker it meets; and under an Idempotency-Key, the response store's record to begin (idempotency_begin's own
 * parameters but the tenant's and the instant, which the call adds), the nonce then left to it.
 */
export interface StandInCall {
  caller: { credential: Credential; tenant: Tenant } | { user: UserPrincipal };
  replay: ReplayClaim;
  breaker: BreakerScope;
  idempotency?: Omit<RpcParams<"idempotency_begin">, "merchant_id" | "environment" | "now" | "nonce" | "window_seconds">;
}

/**
 * The stand-in in one round trip (stand_in_request): the key (401 INVALID_API_KEY) and the nonce (409
 * NONCE_REUSED), the breaker, the response store and the act, in that order. What it answers is the caller's to
 * read: an open breaker (`breaker`), a key in the response store that is not started (`begun`), or the act, which
 * standInAnswer turns into the sink's answer.
 */
export async function standInRequest(
  deps: Deps,
  signing: KeySet,
  call: StandInCall,
  body: TransactionBody & { mandate_id: string },
): Promise<RpcResult<"stand_in_request">> {
  const actor: Actor = "user" in call.caller ? call.caller.user : { kind: "merchant_key", ...call.caller.tenant };
  const consumeKey = standInConsumeKey(call.idempotency?.key, call.replay.nonce)!;
  const act = await standInAct(deps, signing, actor, body, mandateUuid(body.mandate_id)!, consumeKey);
  const caller =
    "user" in call.caller
      ? { tenant: { merchant_id: actor.merchantId, environment: actor.environment } }
      : { credential: credentialParam(call.caller.credential) };
  // The nonce is the response store's to claim under an Idempotency-Key (an exact retry is answered whatever its nonce).
  const nonce = replayParam(call.replay, deps.now);
  return rpc(deps.sql, "stand_in_request", {
    ...caller,
    ...(call.idempotency ? { now: nonce.now, idempotency: { ...call.idempotency, ...nonce } } : nonce),
    breaker: call.breaker,
    act,
  });
}
