/**
 * process-biovital-transaction (spec 4.4): the authorisation sink. A live capture of the person
 * named by `user_id` is matched against their template, judged by the presence engine and recorded
 * with its assurance level frozen at this instant (live.ts); with `mandate_id` the mandate stands in
 * for the live capture (stand-in.ts). An approval gets a signed receipt. Under an Idempotency-Key,
 * the RPC that records the act also stores its answer (`storedResponse`), in the same transaction.
 */
import { captureDevice } from "../devices/capture";
import { assertFaceOnlyDescriptor, descriptorFrom } from "../identity/presence";
import type { ResolvedIdentity } from "../identity/rpc";
import { isSubjectRef } from "../identity/subject-ref";
import type { Templates } from "../identity/template-store";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { HostedSessionPrincipal, Principal } from "../kernel/principal";
import type { KeySet } from "../lib/signing";
import { grantTermsDigest, grantTermsOf } from "../mandates/issue";
import type { TransactionBody } from "./input";
import { judgeAndRecord } from "./live";
import { type ActOptions, intentOf } from "./record";
import { transactWithMandate } from "./stand-in";

/**
 * The identity named by `user_id`, as this principal may name it: a first-party session names
 * only its own identity (another is `403 UNAUTHORIZED_DEVICE`; a revoked session `403
 * ACCESS_REVOKED`); a merchant (by its key, or in its hosted session) names a person by the
 * subject_ref it was given. An unknown person
 * is `403 IDENTITY_MISMATCH`, and so is a person who never consented with this merchant (its
 * pseudonym resolves to nothing); an erased identity or withdrawn consent `403 ACCESS_REVOKED`.
 */
async function resolveIdentity(deps: Deps, principal: Principal | HostedSessionPrincipal, userId: string): Promise<ResolvedIdentity> {
  if (principal.kind === "user" && userId !== principal.identityId) throw new ApiError("UNAUTHORIZED_DEVICE");
  const identity = await rpc(deps.sql, "identity_resolve", {
    merchant_id: principal.merchantId,
    environment: principal.environment,
    now: deps.now.toISOString(),
    ...(principal.kind === "user"
      ? { user_id: principal.identityId, session_token_hash: principal.sessionTokenHash }
      : { subject_ref: isSubjectRef(userId) ? userId : null }),
  });
  if (!identity) throw new ApiError("IDENTITY_MISMATCH", { reason: "unknown_user" });
  if (identity.session_active === false) throw new ApiError("ACCESS_REVOKED", { reason: "session_revoked" });
  if (identity.erased || identity.consent_revoked) {
    throw new ApiError("ACCESS_REVOKED", { reason: identity.erased ? "identity_erased" : "consent_revoked" });
  }
  return identity;
}

/** One act of a person, judged live or stood in for by a mandate, recorded with its receipt. */
export async function transact(
  deps: Deps,
  keys: { signing: () => Promise<KeySet>; templates: Templates },
  principal: Principal | HostedSessionPrincipal,
  body: TransactionBody,
  options: ActOptions,
) {
  const signing = await keys.signing();
  const identity = await resolveIdentity(deps, principal, body.user_id);
  if (body.mandate_id !== undefined) {
    const person = { identity_id: identity.identity_id, hasDocument: identity.document !== null };
    return transactWithMandate(deps, signing, principal, { ...body, mandate_id: body.mandate_id }, person, options);
  }
  const descriptor = descriptorFrom(body.face_template, body.capture_nonce);
  if (body.presence === "face") assertFaceOnlyDescriptor(descriptor);
  // A grant's terms are judged by mandate-issue's rules now: a person is never asked to grant what cannot be granted.
  const intent = body.grant
    ? { purpose: "grant" as const, grant_terms_digest: await grantTermsDigest(grantTermsOf(body.grant, deps.now)) }
    : options.intent;
  // The device is judged before anything is: a capture no device of this person signed (live mode)
  // is refused with nothing recorded, its challenge used up (docs/devices.md).
  const device = await captureDevice(deps, principal, {
    ...options.device,
    identityId: identity.identity_id,
    purpose: intentOf(body, intent).purpose,
    challenge: descriptor.capture_nonce,
    descriptor: body.face_template,
  });
  const act = { ...options, intent, device: { verified: device } };
  return judgeAndRecord(deps, { signing, templates: keys.templates }, principal, body, descriptor, identity, act);
}
