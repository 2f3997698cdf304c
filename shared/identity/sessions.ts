import { sha256Hex } from "../lib/crypto";
import { signUserJwt } from "../lib/signing";
import type { AppContext } from "../platform/app";
import { ApiError } from "../platform/errors";

/** First-party sessions last 30 days. */
export const SESSION_TTL_SECONDS = 30 * 24 * 60 * 60;

/** The response header that carries the session token to the person's device, once. */
export const SESSION_TOKEN_HEADER = "x-session-token";

export interface MintedSession {
  token: string;
  tokenHash: string;
  expiresAt: Date;
}

/**
 * Mints the first-party session of an identity: a user JWT (EdDSA, `sub` = user_id, `mid` = the
 * enrolling merchant, `env`) whose SHA-256 alone is stored. A signing failure is
 * `500 SESSION_MINT_FAILED`.
 */
export async function mintSession(c: AppContext, identityId: string): Promise<MintedSession> {
  const principal = c.var.principal!;
  try {
    const token = await signUserJwt(
      c.var.config,
      identityId,
      { mid: principal.merchantId, env: principal.environment },
      c.var.now,
      SESSION_TTL_SECONDS,
    );
    return { token, tokenHash: await sha256Hex(token), expiresAt: new Date(c.var.now.getTime() + SESSION_TTL_SECONDS * 1000) };
  } catch (error) {
    console.error(JSON.stringify({ request_id: c.var.requestId, error: `session mint failed: ${String(error)}` }));
    throw new ApiError("SESSION_MINT_FAILED");
  }
}
