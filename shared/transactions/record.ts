/** What every act of the transaction sink records, whether a live capture or a mandate stood in for it, and the person it names. */
import type { DeviceBinding } from "../contracts/device";
import type { CaptureDevice, DeviceEvidence } from "../devices/capture";
import { ENGINE_VERSION } from "../engine";
import { documentRefused } from "../identity/documents";
import type { IdentityResolveParams, ResolvedIdentity } from "../identity/rpc";
import type { ForcedScenario } from "../identity/scenario";
import { isSubjectRef } from "../identity/subject-ref";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { HostedSessionPrincipal, Principal, Tenant, UserPrincipal } from "../kernel/principal";
import type { PendingResponse } from "../kernel/rpc";
import type { KeySet } from "../lib/signing";
import type { ReceiptRow } from "../receipts/rpc";
import { type AssuranceLevel, buildReceipt, newReceiptCode } from "../receipts/signed-receipt";
import type { TransactionAction, TransactionBody } from "./input";
import type { CaptureIntent, CapturePurpose, CaptureRow } from "./rpc";

/** What a live act proves presence for when nothing else was shown: its action's own purpose. */
const ACTION_PURPOSES: Record<TransactionAction, CapturePurpose> = {
  ACTION_LOGIN: "login",
  ACTION_PAYMENT: "payment",
  ACTION_SIGN: "sign",
  ACTION_SIGNUP: "enroll",
};

/** The purpose of a live act: what the caller says was shown (a card, an attribute, a grant's terms), else its action's. */
export function intentOf(body: TransactionBody, shown: CaptureIntent | undefined): CaptureIntent {
  return shown ?? { purpose: ACTION_PURPOSES[body.action] };
}

/**
 * The capture row of an act: who, what, how much and when, plus `judged` (what the engine and the
 * face match found, for a live capture; a mandate's capture has none), the nonce it consumed, and for
 * a live act what the person was shown (`intent`) and the code it was refused for.
 */
export function captureRow(
  tenant: Tenant,
  body: TransactionBody,
  now: Date,
  recorded: {
    id: string;
    captureNonce: string;
    assurance: AssuranceLevel | null;
    judged?: Partial<CaptureRow>;
    /** A live act's: what the person was shown (a stand-in has none). */
    intent?: CaptureIntent;
    refusal?: ApiError | null;
    /** A live act's: the device that signed its capture. */
    device?: CaptureDevice;
  },
): CaptureRow {
  return {
    id: recorded.id,
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    action: body.action,
    service_hash: body.service_hash,
    amount_minor: body.amount ?? null,
    currency: body.currency ?? null,
    capture_nonce: recorded.captureNonce,
    assurance_level: recorded.assurance,
    engine_version: ENGINE_VERSION,
    created_at: now.toISOString(),
    ...recorded.judged,
    ...(recorded.intent && { purpose: recorded.intent.purpose, grant_terms_digest: recorded.intent.grant_terms_digest ?? null }),
    ...(recorded.refusal !== undefined && { refusal_code: recorded.refusal?.code ?? null }),
    ...(recorded.device && { device_id: recorded.device.device_id, device_binding: recorded.device.device_binding }),
  };
}

/**
 * The signed receipt of an act recorded as capture `captureId`, ready for the capture's RPC. A live
 * act is attested at the level proven at this instant. An act mandate `standInFor` (`mdt_…`) stood
 * in for is attested as `ACTION_MANDATE` at assurance `mandate` (nobody was present), naming the
 * mandate, the act and `assurance`, the level proven when the person granted it (docs/receipts.md).
 */
export async function actReceipt(
  keys: KeySet,
  tenant: Tenant,
  body: TransactionBody,
  captureId: string,
  assurance: AssuranceLevel,
  now: Date,
  standInFor?: string,
  deviceBinding?: DeviceBinding,
): Promise<ReceiptRow> {
  const [receipt] = await actReceipts(keys, tenant, body, captureId, [assurance], now, standInFor, deviceBinding);
  return receipt!;
}

/**
 * actReceipt at each of `levels`, one receipt (the same id and code) signed per level: for a stand-in, whose
 * level is the mandate's, read in the same call that records the act (stand_in_transaction keeps the one that fits).
 */
export async function actReceipts(
  keys: KeySet,
  tenant: Tenant,
  body: TransactionBody,
  captureId: string,
  levels: readonly AssuranceLevel[],
  now: Date,
  standInFor?: string,
  deviceBinding?: DeviceBinding,
): Promise<ReceiptRow[]> {
  const id = crypto.randomUUID();
  const code = newReceiptCode();
  const mandateId = standInFor;
  return Promise.all(
    levels.map(async (assurance) => {
      const { jws, seal } = await buildReceipt(keys, {
        receiptId: id,
        code,
        captureId,
        merchantId: tenant.merchantId,
        environment: tenant.environment,
        action: mandateId ? "ACTION_MANDATE" : body.action,
        assuranceLevel: assurance,
        ...(mandateId ? { mandate: { mandateId, action: body.action } } : {}),
        serviceHash: body.service_hash,
        issuedAt: now,
        amountMinor: body.amount ?? null,
        currency: body.currency ?? null,
        ...(deviceBinding ? { deviceBinding } : {}),
      });
      return { id, code, jws, seal };
    }),
  );
}

/**
 * Whoever acts, as far as naming a person goes: a person's own session, or a merchant (by its key,
 * or in its hosted session). A key's tenant is enough: the stand-in in one call (D-740) acts for a
 * key before the database has said which key it is.
 */
export type Actor = UserPrincipal | (Tenant & { kind: "merchant_key" | "hosted_session" });

/** Whom `user_id` names, as identity_resolve takes it: a first-party session only its own identity, a merchant its subject_ref. */
export function resolveParams(principal: Actor, userId: string, now: Date): IdentityResolveParams {
  const scope = { merchant_id: principal.merchantId, environment: principal.environment, now: now.toISOString() };
  return principal.kind === "user"
    ? { ...scope, user_id: principal.identityId, session_token_hash: principal.sessionTokenHash }
    : { ...scope, subject_ref: isSubjectRef(userId) ? userId : null };
}

/**
 * The identity named by `user_id`, as this principal may name it: a first-party session names
 * only its own identity (another is `403 UNAUTHORIZED_DEVICE`; a revoked session `403
 * ACCESS_REVOKED`); a merchant (by its key, or in its hosted session) names a person by the
 * subject_ref it was given. An unknown person
 * is `403 IDENTITY_MISMATCH`, and so is a person who never consented with this merchant (its
 * pseudonym resolves to nothing); an erased identity or withdrawn consent `403 ACCESS_REVOKED`.
 */
export async function resolveIdentity(
  deps: Deps,
  principal: Principal | HostedSessionPrincipal,
  userId: string,
): Promise<ResolvedIdentity> {
  assertMayName(principal, userId);
  const identity = await rpc(deps.sql, "identity_resolve", resolveParams(principal, userId, deps.now));
  assertUsable(identity);
  return identity;
}

/** A first-party session names only its own identity (`403 UNAUTHORIZED_DEVICE`); checked before any call. */
export function assertMayName(principal: Actor, userId: string): void {
  if (principal.kind === "user" && userId !== principal.identityId) throw new ApiError("UNAUTHORIZED_DEVICE");
}

/** resolveIdentity's verdicts on what identity_resolve (or stand_in_transaction) found. */
export function assertUsable<T extends Pick<ResolvedIdentity, "erased" | "consent_revoked" | "session_active">>(
  identity: T | null,
): asserts identity is T {
  if (!identity) throw new ApiError("IDENTITY_MISMATCH", { reason: "unknown_user" });
  if (identity.session_active === false) throw new ApiError("ACCESS_REVOKED", { reason: "session_revoked" });
  if (identity.erased || identity.consent_revoked) {
    throw new ApiError("ACCESS_REVOKED", { reason: identity.erased ? "identity_erased" : "consent_revoked" });
  }
}

/** `403 DOCUMENT_REQUIRED` for an act that needs a valid identity document on record and has none (rule 3). */
export function documentRequired(action: TransactionAction): ApiError {
  return documentRefused("document_missing", { action });
}

/**
 * How one request's act is recorded: the sandbox scenario forced on it, what the person was shown, and under an Idempotency-Key
 * the key (the stand-in's consume key) and the response-store record that the RPC recording the act
 * completes with the answer, in the act's own transaction.
 */
export interface ActOptions {
  scenario: ForcedScenario | null;
  /** What the person was shown when it is not the action's own (a hosted card, /v1 attribute or grant); the sink's `grant` sets it too. */
  intent?: CaptureIntent;
  idempotencyKey?: string;
  /** The request's `x-service-nonce`, claimed before the act: the stand-in's consume key without an Idempotency-Key (D-426). */
  replayNonce?: string;
  storedResponse?: PendingResponse;
  /** The device of a live act's capture: its assertion to verify, or one verified already in the same request. */
  device: DeviceEvidence;
}
