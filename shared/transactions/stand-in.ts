import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { HostedSessionPrincipal, Principal } from "../kernel/principal";
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
 * One round trip (D-690): stand_in_transaction resolves the person named by `user_id`, reads the mandate
 * and acts; the person's refusals (resolveIdentity's, and DOCUMENT_REQUIRED) come from what it answers,
 * in the order they always had. A request refused before the database (no consume key, a mandate id that
 * cannot be one) still resolves the person first, so that an unknown person is answered as such.
 */
export async function transactWithMandate(
  deps: Deps,
  signing: KeySet,
  principal: Principal | HostedSessionPrincipal,
  body: TransactionBody & { mandate_id: string },
  { idempotencyKey, replayNonce, storedResponse }: Pick<ActOptions, "idempotencyKey" | "replayNonce" | "storedResponse">,
): Promise<StandInApproval | StandInRefusal> {
  const refuse = (decision: Decision): StandInRefusal => ({
    success: false,
    status: "refused",
    ...(answer(decision, deps.locale) as { allowed: false; reason: string }),
  });
  const consumeKey = standInConsumeKey(idempotencyKey, replayNonce);
  const mandateId = mandateUuid(body.mandate_id);
  if (!consumeKey || !mandateId) {
    await resolveIdentity(deps, principal, body.user_id);
    return refuse({ allowed: false, reason: consumeKey ? "mandate_not_found" : "idempotency_key_required" });
  }
  assertMayName(principal, body.user_id);
  const documentRequired = DOCUMENT_ACTIONS.has(body.action);
  const scope = { merchant_id: principal.merchantId, environment: principal.environment, now: deps.now.toISOString() };
  const captureId = crypto.randomUUID();
  const { assurance_level: _mandates, ...capture } = captureRow(principal, body, deps.now, {
    id: captureId,
    captureNonce: `mandate:${captureId}`,
    assurance: null,
  });
  const signed = await actReceipts(signing, principal, body, captureId, GRANT_LEVELS, deps.now, mandatePublicId(mandateId));
  const { identity, decision, approval } = await rpc(deps.sql, "stand_in_transaction", {
    resolve: resolveParams(principal, body.user_id, deps.now),
    document_required: documentRequired,
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
    ...(storedResponse && { stored_response: { record: storedResponse.record } }),
  });
  assertUsable(identity);
  if (documentRequired && !identity.has_document) throw documentRefusal(body.action);
  if (!approval) return refuse(decision ?? { allowed: false, reason: "mandate_not_found" });
  if (storedResponse) storedResponse.stored = true;
  return approval;
}
