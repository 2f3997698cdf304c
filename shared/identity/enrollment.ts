import type { PresenceBaseline, PresenceDescriptor } from "../engine";
import { sha256Hex } from "../lib/crypto";
import type { AppContext } from "../platform/app";
import { requireSecret } from "../platform/config";
import { rpc } from "../platform/db/client";
import { ApiError } from "../platform/errors";
import { FACE_MATCH_GATE } from "./presence";
import { mintSession } from "./sessions";
import { subjectRef } from "./subject-ref";
import { bestMatch, protectorFor, templateStoreDb } from "./template-store";

export interface Consent {
  version: string;
  retention_days: number;
}

export interface Enrollment {
  subjectRef: string;
  sessionToken: string;
  sessionTokenHash: string;
  created: boolean;
}

/** A concurrent enrollment of the same face is resolved by searching again; this bounds the retries. */
const ENROLL_ATTEMPTS = 3;

/**
 * Enrols a live descriptor: recognises the face among this environment's protected templates, or
 * mints a new user_id; then one RPC writes identity, template, consent, subject_ref and session.
 * The template store being unreachable is `500 TEMPLATE_STORE_FAILED`; any other failure of the
 * write is `500 IDENTITY_CREATE_FAILED` unless the database named the failing stage itself.
 */
export async function enrol(
  c: AppContext,
  descriptor: PresenceDescriptor,
  baseline: PresenceBaseline | null,
  consent: Consent,
): Promise<Enrollment> {
  const principal = c.var.principal!;
  const protector = await protectorFor(c);
  const embedding = protector.protect(descriptor.face.embedding);
  const presented = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];

  for (let attempt = 1; ; attempt++) {
    const match = await bestMatch(c, principal.environment, protector, embedding).catch(storeFailure);
    const existing = match !== null && match.similarity >= FACE_MATCH_GATE;
    const identityId = existing ? match.identity_id : crypto.randomUUID();
    const ref = await subjectRef(requireSecret(c.var.config, "SUBJECT_REF_SECRET"), identityId, principal.merchantId);
    const session = await mintSession(c, identityId);
    try {
      const result = await rpc<{ created: boolean }>(templateStoreDb(c), "identity_enroll", {
        environment: principal.environment,
        merchant_id: principal.merchantId,
        now: c.var.now.toISOString(),
        capture_nonce: descriptor.capture_nonce,
        identity_id: identityId,
        existing,
        subject_ref: ref,
        key_id: protector.keyId,
        embedding,
        match_threshold: FACE_MATCH_GATE,
        consent,
        session: { token_hash: session.tokenHash, expires_at: session.expiresAt.toISOString() },
        baseline,
        ...(presented ? { presented_session_hash: await sha256Hex(presented) } : {}),
      });
      return { subjectRef: ref, sessionToken: session.token, sessionTokenHash: session.tokenHash, created: result.created };
    } catch (error) {
      if (error instanceof ApiError && error.code === "ENROLLMENT_RACE" && attempt < ENROLL_ATTEMPTS) continue;
      storeFailure(error);
    }
  }
}

function storeFailure(error: unknown): never {
  if (error instanceof ApiError) {
    if (error.code === "DATABASE_UNAVAILABLE") throw new ApiError("TEMPLATE_STORE_FAILED");
    throw error;
  }
  console.error(JSON.stringify({ error: `enrollment failed: ${String(error)}` }));
  throw new ApiError("IDENTITY_CREATE_FAILED");
}
