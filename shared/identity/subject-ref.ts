import { hmacSha256Hex } from "../lib/crypto";

/**
 * The merchant-facing pseudonym of an identity: HMAC-SHA256(secret, identity id ‖ merchant id),
 * prefixed `sub_`. Stable for one merchant, unlinkable across merchants without the secret (the
 * per-application nullifier idea), and never the identity id itself.
 */
export async function subjectRef(secret: string, identityId: string, merchantId: string): Promise<string> {
  return `sub_${(await hmacSha256Hex(secret, `subject-ref:v1:${identityId}:${merchantId}`)).slice(0, 48)}`;
}
