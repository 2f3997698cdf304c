import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { sha256Hex } from "../lib/crypto";
import type { KeySet } from "../lib/signing";
import { mandateUuid } from "../mandates/ids";
import { answer } from "../mandates/refusals";
import type { Decision } from "../mandates/rpc";
import type { Scope } from "../mandates/scopes";
import { DOCUMENT_ACTIONS, type TransactionAction, type TransactionBody } from "./input";
import { type ActOptions, actReceipt, captureRow, documentRequired } from "./record";
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

/**
 * Spec 4.4 rule 5: the mandate stands in for the live capture. The act consumes the mandate
 * through the same row-locked consume, idempotent per consume key (standInConsumeKey: the
 * Idempotency-Key, optional as 4.1 says, or the request's replay nonce); it is recorded with its
 * receipt in the same RPC, which also builds the approval and stores it under the Idempotency-Key
 * (`storedResponse`). A refusal is the spec's 200 refusal (StandInRefusal); a replayed key after
 * revocation is refused too. The receipt says nobody was present: act `ACTION_MANDATE`, assurance
 * `mandate`, with the mandate, the act and the grant's level.
 */
export async function transactWithMandate(
  deps: Deps,
  signing: KeySet,
  tenant: Tenant,
  body: TransactionBody & { mandate_id: string },
  identity: { identity_id: string; hasDocument: boolean },
  { idempotencyKey, replayNonce, storedResponse }: Pick<ActOptions, "idempotencyKey" | "replayNonce" | "storedResponse">,
): Promise<StandInApproval | StandInRefusal> {
  const refuse = (decision: Decision): StandInRefusal => ({
    success: false,
    status: "refused",
    ...(answer(decision, deps.locale) as { allowed: false; reason: string }),
  });
  const consumeKey = standInConsumeKey(idempotencyKey, replayNonce);
  if (!consumeKey) return refuse({ allowed: false, reason: "idempotency_key_required" });
  const mandateId = mandateUuid(body.mandate_id);
  if (!mandateId) return refuse({ allowed: false, reason: "mandate_not_found" });
  if (DOCUMENT_ACTIONS.has(body.action) && !identity.hasDocument) throw documentRequired(body.action);
  const scope = { merchant_id: tenant.merchantId, environment: tenant.environment, now: deps.now.toISOString() };
  const mandate = await rpc(deps.sql, "mandate_get", { ...scope, mandate_id: mandateId });
  if (!mandate) return refuse({ allowed: false, reason: "mandate_not_found" });

  const captureId = crypto.randomUUID();
  const capture = captureRow(tenant, body, deps.now, {
    id: captureId,
    captureNonce: `mandate:${captureId}`,
    assurance: mandate.assurance_level,
  });
  const receipt = await actReceipt(signing, tenant, body, captureId, mandate.assurance_level, deps.now, mandate.mandate_id);
  const { decision, approval } = await rpc(deps.sql, "mandate_transaction", {
    identity_id: identity.identity_id,
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
    receipt,
    ...(storedResponse && { stored_response: { record: storedResponse.record } }),
  });
  if (!approval) return refuse(decision);
  if (storedResponse) storedResponse.stored = true;
  return approval;
}
