import { sha256Hex } from "../lib/crypto";
import type { KeySet } from "../lib/signing";
import { mandateUuid } from "../mandates/ids";
import { answer } from "../mandates/refusals";
import type { Scope } from "../mandates/scopes";
import { type Decision, rpc } from "../platform/db/rpc";
import type { Deps } from "../platform/deps";
import { ApiError } from "../platform/errors";
import type { Tenant } from "../platform/principal";
import { DOCUMENT_ACTIONS, type TransactionAction, type TransactionBody } from "./input";
import { type Approval, actReceipt, captureRow, documentRequired } from "./record";

/** The scope an act consumes when the request names none. */
const ACTION_SCOPES: Record<TransactionAction, Scope> = {
  ACTION_LOGIN: "login",
  ACTION_PAYMENT: "payment",
  ACTION_SIGN: "sign",
  ACTION_SIGNUP: "login",
};

/**
 * Spec 4.4 rule 5: the mandate stands in for the live capture. The act consumes the mandate
 * through the same row-locked consume, idempotent per Idempotency-Key, which is required here as on
 * mandate-consume (there is no default key: without one the act is refused with
 * `idempotency_key_required`); it is recorded with its receipt in the same RPC. A refusal is `403
 * MANDATE_REFUSED` carrying the refusal reason; a replayed key after revocation is refused too. The
 * receipt says nobody was present: act `ACTION_MANDATE`, assurance `mandate`, with the mandate, the
 * act and the grant's level.
 */
export async function transactWithMandate(
  deps: Deps,
  signing: KeySet,
  tenant: Tenant,
  body: TransactionBody & { mandate_id: string },
  identity: { identity_id: string; hasDocument: boolean },
  idempotencyKey: string | undefined,
): Promise<Approval & { mandate: Record<string, unknown> }> {
  const refuse = (decision: Decision): never => {
    throw new ApiError("MANDATE_REFUSED", answer(decision, deps.locale));
  };
  if (!idempotencyKey) return refuse({ allowed: false, reason: "idempotency_key_required" });
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
  const { decision, transaction } = await rpc(deps.sql, "mandate_transaction", {
    identity_id: identity.identity_id,
    consume: {
      ...scope,
      mandate_id: mandateId,
      idempotency_key: idempotencyKey,
      request_hash: await sha256Hex(JSON.stringify(body)),
      scope: body.scope ?? ACTION_SCOPES[body.action],
      amount: body.amount,
      currency: body.currency,
      context: body.context,
    },
    capture,
    receipt,
  });
  if (!decision.allowed || !transaction) return refuse(decision);
  return {
    success: true,
    status: "approved",
    transaction_id: transaction.transaction_id,
    service_hash: transaction.service_hash,
    immutability_seal: transaction.seal,
    assurance_level: "mandate",
    receipt_id: transaction.receipt_id,
    receipt_code: transaction.receipt_code,
    mandate: {
      mandate_id: mandate.mandate_id,
      consumption_id: decision.consumption_id,
      scope_used: decision.scope_used,
      granted_to: mandate.granted_to,
      ...(mandate.agent_display_name ? { agent_display_name: mandate.agent_display_name } : {}),
      ...(mandate.agent_descriptor ? { agent_descriptor: mandate.agent_descriptor } : {}),
      assurance_level: mandate.assurance_level,
      idempotent_replay: decision.idempotent_replay,
      remaining: decision.remaining,
      at_limit: decision.at_limit,
    },
  };
}
