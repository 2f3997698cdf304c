import { hmacSha256Hex } from "../lib/crypto";

/** A subject_ref's form as subjectRef mints it: `sub_` and 48 lowercase hex (the resource API's facetoken). */
export const SUBJECT_REF = /^sub_[0-9a-f]{48}$/;

/** Whether `text` has a subject_ref's form (a pseudonym this service could have given). */
export function isSubjectRef(text: string): boolean {
  return SUBJECT_REF.test(text);
}

/**
 * The merchant-facing pseudonym of an identity: HMAC-SHA256(secret, identity id ‖ merchant id),
 * prefixed `sub_`. Stable for one merchant, unlinkable across merchants without the secret (the
 * per-application nullifier idea), and never the identity id itself.
 */
export async function subjectRef(secret: string, identityId: string, merchantId: string): Promise<string> {
  return `sub_${(await hmacSha256Hex(secret, `subject-ref:v1:${identityId}:${merchantId}`)).slice(0, 48)}`;
}
