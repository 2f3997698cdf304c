/**
 * process-biovital-transaction (spec 4.4): the authorisation sink. A live capture of the person
 * named by `user_id` is matched against their template, judged by the presence engine and recorded
 * with its assurance level frozen at this instant (live.ts); with `mandate_id` the mandate stands in
 * for the live capture (stand-in.ts). An approval gets a signed receipt. Under an Idempotency-Key,
 * the RPC that records the act also stores its answer (`storedResponse`), in the same transaction.
 */
import { captureDevice } from "../devices/capture";
import { assertFaceOnlyDescriptor, descriptorFrom } from "../identity/presence";
import type { Templates } from "../identity/template-store";
import type { Deps } from "../kernel/deps";
import type { HostedSessionPrincipal, Principal } from "../kernel/principal";
import type { KeySet } from "../lib/signing";
import { grantTermsDigest, grantTermsOf } from "../mandates/issue";
import type { TransactionBody } from "./input";
import { judgeAndRecord } from "./live";
import { type ActOptions, intentOf, resolveIdentity } from "./record";
import { transactWithMandate } from "./stand-in";

/** One act of a person, judged live or stood in for by a mandate, recorded with its receipt. */
export async function transact(
  deps: Deps,
  keys: { signing: () => Promise<KeySet>; templates: Templates },
  principal: Principal | HostedSessionPrincipal,
  body: TransactionBody,
  options: ActOptions,
) {
  const signing = await keys.signing();
  // The stand-in resolves the person in the same call that acts (one round trip: D-690).
  if (body.mandate_id !== undefined)
    return transactWithMandate(deps, signing, principal, { ...body, mandate_id: body.mandate_id }, options);
  const identity = await resolveIdentity(deps, principal, body.user_id);
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
