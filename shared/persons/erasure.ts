/**
 * Erasing oneself, at one merchant or at every merchant (docs/decisions.md, D-470): what it means is
 * said first (docs/functions.md#me), and it is confirmed by a fresh presence proof, a hosted login
 * session this person's session opens and uses once within five minutes of the capture. Irreversible.
 */
import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { jsonObject } from "../kernel/validation";
import { canonicalUuid } from "../lib/uuid";
import { newSessionRecord, screenUrl } from "../sessions/create";
import { sessionUuid } from "../sessions/tokens";
import { type PersonSession, SIGN_IN_SCREEN_TTL_SECONDS } from "./session";

export const presenceSchema = v.pipe(jsonObject, v.strictObject({ merchant_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) }));

/**
 * Opens the capture screen that confirms an erasure, at a merchant that holds the person under a
 * standing consent (its persons are where the face is found); `404 not_found` otherwise.
 */
export async function startPresenceProof(
  deps: Deps,
  session: PersonSession,
  body: v.InferOutput<typeof presenceSchema>,
  serviceBaseUrl: string,
) {
  const merchantId = canonicalUuid(body.merchant_id);
  if (!merchantId) throw new ApiError("not_found");
  const { sessionToken, record } = await newSessionRecord(
    { merchantId, environment: session.environment },
    { action: "login", metadata: { purpose: "person_erase" }, ttl_seconds: SIGN_IN_SCREEN_TTL_SECONDS },
    deps.now,
  );
  const started = await rpc(deps.sql, "person_presence_begin", {
    session: record,
    person_session_id: session.sessionId,
    identity_id: session.identityId,
  });
  if (!started.started) throw new ApiError("not_found");
  return { session_id: started.session.session_id, url: screenUrl(serviceBaseUrl, sessionToken), expires_at: started.session.expires_at };
}

/** At one merchant (`merchant_id`) or at all (`all: true`); `confirm: true` and the presence proof's session id. */
export const eraseSchema = v.pipe(
  jsonObject,
  v.union([
    v.strictObject({
      merchant_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
      confirm: v.literal(true),
      presence_session_id: v.pipe(v.string(), v.maxLength(64)),
    }),
    v.strictObject({ all: v.literal(true), confirm: v.literal(true), presence_session_id: v.pipe(v.string(), v.maxLength(64)) }),
  ]),
);

/**
 * Erases; `403 PRESENCE_PROOF_INVALID` (with the reason) without a valid fresh proof of this
 * session, `404 not_found` for a merchant that does not hold the person.
 */
export async function erasePerson(deps: Deps, session: PersonSession, body: v.InferOutput<typeof eraseSchema>) {
  const proofId = sessionUuid(body.presence_session_id);
  if (!proofId) throw new ApiError("PRESENCE_PROOF_INVALID", { reason: "unknown" });
  let merchantId: string | undefined;
  if ("merchant_id" in body) {
    merchantId = canonicalUuid(body.merchant_id) ?? undefined;
    if (!merchantId) throw new ApiError("not_found");
  }
  const result = await rpc(deps.sql, "person_erase", {
    identity_id: session.identityId,
    environment: session.environment,
    person_session_id: session.sessionId,
    presence_session_id: proofId,
    ...(merchantId ? { merchant_id: merchantId } : {}),
    now: deps.now.toISOString(),
  });
  if (!result) throw new ApiError("not_found");
  if (!result.erased) throw new ApiError("PRESENCE_PROOF_INVALID", { reason: result.reason });
  return result;
}
