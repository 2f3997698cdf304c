import { ENGINE_VERSION } from "../engine";
import { sha256Hex } from "../lib/crypto";
import { mandateUuid } from "../mandates/ids";
import { answer, type Decision } from "../mandates/refusals";
import type { Scope } from "../mandates/scopes";
import type { AppContext } from "../platform/app";
import { rpc } from "../platform/db/client";
import { ApiError } from "../platform/errors";
import type { AssuranceLevel } from "../receipts/receipts";
import { actReceipt, DOCUMENT_ACTIONS, documentRequired, type TransactionAction, type TransactionInput } from "./transaction";

/** The scope an act consumes when the request names none. */
const ACTION_SCOPES: Record<TransactionAction, Scope> = {
  ACTION_LOGIN: "login",
  ACTION_PAYMENT: "payment",
  ACTION_SIGN: "sign",
  ACTION_SIGNUP: "login",
};

interface StoredMandate {
  assurance_level: AssuranceLevel;
  granted_to: string;
  agent_display_name?: string;
  agent_descriptor?: string;
}

interface MandateTransaction {
  decision: Decision & { consumption_id?: string; idempotent_replay?: boolean; at_limit?: boolean; scope_used?: string };
  transaction: { transaction_id: string; receipt_id: string; receipt_code: string; seal: string; service_hash: string } | null;
}

/**
 * Spec 4.4 rule 5: the mandate stands in for the live capture. The act consumes the mandate
 * through the same row-locked consume (idempotent per Idempotency-Key, or per service_hash when
 * none is sent) and is recorded with its receipt in the same RPC; a refusal is `403
 * MANDATE_REFUSED` carrying the refusal reason. The act's assurance level is the mandate's.
 */
export async function transactWithMandate(
  c: AppContext,
  input: TransactionInput & { mandate_id: string },
  identityId: string,
  hasDocument: boolean,
) {
  const principal = c.var.principal!;
  const refuse = (decision: Decision): never => {
    throw new ApiError("MANDATE_REFUSED", answer(decision, c.var.locale));
  };
  const mandateId = mandateUuid(input.mandate_id);
  if (!mandateId) refuse({ allowed: false, reason: "mandate_not_found" });
  if (DOCUMENT_ACTIONS.has(input.action) && !hasDocument) throw documentRequired(input.action);
  const scope = { merchant_id: principal.merchantId, environment: principal.environment, now: c.var.now.toISOString() };
  const mandate = await rpc<StoredMandate | null>(c.var.db(), "mandate_get", { ...scope, mandate_id: mandateId });
  if (!mandate) return refuse({ allowed: false, reason: "mandate_not_found" });

  const captureId = crypto.randomUUID();
  const receipt = await actReceipt(c, input, captureId, mandate.assurance_level);
  const result = await rpc<MandateTransaction>(c.var.db(), "mandate_transaction", {
    identity_id: identityId,
    consume: {
      ...scope,
      mandate_id: mandateId,
      idempotency_key: c.req.header("idempotency-key") ?? `service_hash:${input.service_hash}`,
      request_hash: await sha256Hex(JSON.stringify(input)),
      scope: input.scope ?? ACTION_SCOPES[input.action],
      amount: input.amount,
      currency: input.currency,
      context: input.context,
    },
    capture: {
      id: captureId,
      merchant_id: principal.merchantId,
      environment: principal.environment,
      action: input.action,
      service_hash: input.service_hash,
      amount_minor: input.amount ?? null,
      currency: input.currency ?? null,
      capture_nonce: `mandate:${captureId}`,
      assurance_level: mandate.assurance_level,
      engine_version: ENGINE_VERSION,
      created_at: c.var.now.toISOString(),
    },
    receipt,
  });
  const { decision, transaction } = result;
  if (!decision.allowed || !transaction) return refuse(decision);
  return {
    success: true,
    status: "approved",
    transaction_id: transaction.transaction_id,
    service_hash: transaction.service_hash,
    immutability_seal: transaction.seal,
    assurance_level: mandate.assurance_level,
    receipt_id: transaction.receipt_id,
    receipt_code: transaction.receipt_code,
    mandate: {
      mandate_id: input.mandate_id.startsWith("mdt_") ? input.mandate_id : `mdt_${mandateId!.replace(/-/g, "")}`,
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
