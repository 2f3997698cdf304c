import { randomBytes, randomUUID } from "node:crypto";
import type postgres from "postgres";

/** A client or a transaction: anything that can run one statement. */
export type Queryable = Pick<postgres.Sql, "unsafe">;

/** Calls `public.<name>(p jsonb)` as the services do (one statement), returning its jsonb result as is. */
export async function callRpc<T = any>(db: Queryable, name: string, params: Record<string, unknown>): Promise<T> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid rpc name ${name}`);
  const rows = await db.unsafe(`select public.${name}($1::jsonb) as result`, [params as never]);
  return rows[0].result as T;
}

export interface Grantor {
  merchantId: string;
  environment: "test";
  identityId: string;
  subjectRef: string;
  /** A live, uncoerced capture of the person (face_voice_doc), taken one minute before `at`. */
  captureId: string;
  /** The instant the grantor was seeded for: issue mandates at this `now`. */
  at: Date;
}

/**
 * Seeds with plain SQL what mandate_issue needs: a fresh merchant (with its mandate.at_limit
 * threshold), an identity with a valid document, the merchant's subject_ref for it and a live
 * capture one minute before `at`. Fresh random ids, so it is safe on a shared database.
 */
export async function seedGrantor(db: Queryable, { at, thresholdPercent = 0 }: { at: Date; thresholdPercent?: number }): Promise<Grantor> {
  const merchantId = randomUUID();
  const identityId = randomUUID();
  const captureId = randomUUID();
  const subjectRef = `sub_${randomBytes(24).toString("hex")}`;
  const captured = new Date(at.getTime() - 60_000).toISOString();
  await db.unsafe(`insert into private.merchants (id, name, at_limit_threshold_percent) values ($1, $2, $3)`, [
    merchantId,
    `Seeded merchant ${merchantId.slice(0, 8)}`,
    thresholdPercent,
  ]);
  await db.unsafe(`insert into private.identities (id, environment, created_at) values ($1, 'test', $2)`, [identityId, captured]);
  await db.unsafe(`insert into private.subject_refs (merchant_id, subject_ref, identity_id, created_at) values ($1, $2, $3, $4)`, [
    merchantId,
    subjectRef,
    identityId,
    captured,
  ]);
  await db.unsafe(
    `insert into private.identity_documents (identity_id, document_type, issuing_country, expires_on, face_match_score, verified_at)
     values ($1, 'passport', 'BR', '2099-12-31', 0.9, $2)`,
    [identityId, captured],
  );
  await db.unsafe(
    `insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, capture_nonce,
       liveness_passed, coercion_signal, assurance_level, engine_version, created_at)
     values ($1, $2, 'test', $3, 'ACTION_MANDATE', $4, $5, true, false, 'face_voice_doc', 'seed', $6)`,
    [captureId, merchantId, identityId, `svc:${captureId}`, `nonce-${captureId}`, captured],
  );
  return { merchantId, environment: "test", identityId, subjectRef, captureId, at };
}

export interface Ceiling {
  kind: "amount" | "count" | "both" | "none";
  amount?: number;
  currency?: string;
  count?: number;
  period: "lifetime" | "daily" | "weekly" | "monthly";
}

export interface MandateOptions {
  scopes?: string[];
  ceiling?: Ceiling;
  /** Default: a year after the grantor's `at`. */
  expiresAt?: Date;
  constraints?: Record<string, string[]>;
  stepUpOf?: string;
}

/** Issues a mandate through the mandate_issue RPC (as mandate-issue calls it) and returns its row id and API shape. */
export async function issueMandate(db: Queryable, grantor: Grantor, options: MandateOptions = {}) {
  const id = randomUUID();
  const ceiling = options.ceiling ?? { kind: "amount", amount: 700, currency: "USD", period: "lifetime" };
  const mandate = await callRpc<Record<string, any>>(db, "mandate_issue", {
    id,
    merchant_id: grantor.merchantId,
    environment: grantor.environment,
    now: grantor.at.toISOString(),
    granted_by_ref: grantor.subjectRef,
    granted_to: `agent_${id}`,
    granted_to_kind: "agent",
    scopes: options.scopes ?? ["purchase"],
    money_scopes: ["purchase", "payment"],
    constraints: options.constraints ?? {},
    ceiling: { amount: null, currency: null, count: null, ...ceiling },
    expires_at: (options.expiresAt ?? new Date(grantor.at.getTime() + 365 * 86_400_000)).toISOString(),
    ...(options.stepUpOf ? { step_up_of: options.stepUpOf } : {}),
    capture_id: grantor.captureId,
    proof_max_age_seconds: 300,
  });
  return { id, mandate };
}
