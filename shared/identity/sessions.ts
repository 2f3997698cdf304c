import { mintUserJwt } from "../kernel/authenticate";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { sha256Hex } from "../lib/crypto";
import type { KeySet } from "../lib/signing";

/** First-party sessions last 30 days. */
const SESSION_TTL_SECONDS = 30 * 24 * 60 * 60;

/** The response header that carries the session token to the person's device, once. */
export const SESSION_TOKEN_HEADER = "x-session-token";

export interface MintedSession {
  token: string;
  tokenHash: string;
  expiresAt: Date;
}

/**
 * Mints the first-party session of an identity: a user JWT (EdDSA, `sub` = user_id, `mid` = the
 * enrolling merchant, `env`) whose SHA-256 alone is stored. A signing failure, unusable keys
 * included, is `500 SESSION_MINT_FAILED`.
 */
export async function mintSession(keys: () => Promise<KeySet>, identityId: string, tenant: Tenant, now: Date): Promise<MintedSession> {
  try {
    const token = await mintUserJwt(await keys(), identityId, tenant, now, SESSION_TTL_SECONDS);
    return { token, tokenHash: await sha256Hex(token), expiresAt: new Date(now.getTime() + SESSION_TTL_SECONDS * 1000) };
  } catch (error) {
    console.error(JSON.stringify({ error: `session mint failed: ${String(error)}` }));
    throw new ApiError("SESSION_MINT_FAILED");
  }
}
