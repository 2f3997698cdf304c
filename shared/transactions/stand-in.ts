import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
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
 * Spec 4.4 rule 5: the mandate stands in for the live capture. The act consumes the mandate
 * through the same row-locked consume, idempotent per Idempotency-Key, which is required here as on
 * mandate-consume (there is no default key: without one the act is refused with
 * `idempotency_key_required`); it is recorded with its receipt in the same RPC, which also builds
 * the approval and stores it under the key (`storedResponse`). A refusal is `403 MANDATE_REFUSED`
 * carrying the refusal reason; a replayed key after revocation is refused too. The receipt says
 * nobody was present: act `ACTION_MANDATE`, assurance `mandate`, with the mandate, the act and the
 * grant's level.
 */
export async function transactWithMandate(
  deps: Deps,
  signing: KeySet,
  tenant: Tenant,
  body: TransactionBody & { mandate_id: string },
  identity: { identity_id: string; hasDocument: boolean },
  { idempotencyKey, storedResponse }: Pick<ActOptions, "idempotencyKey" | "storedResponse">,
): Promise<StandInApproval> {
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
  const { decision, approval } = await rpc(deps.sql, "mandate_transaction", {
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
    ...(storedResponse && { stored_response: { record: storedResponse.record } }),
  });
  if (!approval) return refuse(decision);
  if (storedResponse) storedResponse.stored = true;
  return approval;
}
