import { isSubjectRef } from "../identity/subject-ref";
import { mintApiKey } from "../kernel/api-keys";
import type { Sql } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import { ApiError } from "../kernel/errors";
import type { Environment, KeyKind } from "../kernel/principal";
import type {} from "./rpc";

export interface CreatedMerchant {
  merchant_id: string;
  keys: { pk_test: string; sk_test: string; pk_live: string; sk_live: string };
}

const initialKeys: { name: keyof CreatedMerchant["keys"]; kind: KeyKind; environment: Environment }[] = [
  { name: "pk_test", kind: "publishable", environment: "test" },
  { name: "sk_test", kind: "secret", environment: "test" },
  { name: "pk_live", kind: "publishable", environment: "live" },
  { name: "sk_live", kind: "secret", environment: "live" },
];

/** A key's recognisable hint: its prefix and last four characters. */
function keyHint(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`;
}

/** Creates a merchant with one key of each kind and environment; the keys are returned once. */
export async function createMerchant(sql: Sql, name: string): Promise<CreatedMerchant> {
  const minted = await Promise.all(initialKeys.map((k) => mintApiKey(k.kind, k.environment)));
  const result = await rpc(sql, "merchant_create", {
    name,
    keys: initialKeys.map((k, i) => ({
      kind: k.kind,
      environment: k.environment,
      key_hash: minted[i].hash,
      key_hint: keyHint(minted[i].key),
    })),
  });
  const keys = Object.fromEntries(initialKeys.map((k, i) => [k.name, minted[i].key])) as CreatedMerchant["keys"];
  return { merchant_id: result.merchant_id, keys };
}

/** Adds a key to a merchant. */
export async function createKey(sql: Sql, merchantId: string, kind: KeyKind, environment: Environment) {
  const { key, hash } = await mintApiKey(kind, environment);
  const { key_id } = await rpc(sql, "api_key_create", {
    merchant_id: merchantId,
    kind,
    environment,
    key_hash: hash,
    key_hint: keyHint(key),
  });
  return { key_id, merchant_id: merchantId, kind, environment, key };
}

/**
 * Makes a person an owner of a merchant: someone who may authorise an AI agent to act for it
 * (docs/decisions.md, D-180). The person is named by the merchant's pseudonym for
 * them, so they must have enrolled with the merchant; `404 not_found` otherwise, `409
 * IDENTITY_UNREACHABLE` for an erased identity.
 */
export function addOwner(sql: Sql, merchantId: string, subjectRef: string, now: Date) {
  if (!isSubjectRef(subjectRef)) throw new ApiError("not_found");
  return rpc(sql, "merchant_owner_add", { merchant_id: merchantId, subject_ref: subjectRef, now: now.toISOString() });
}

/** The owners of a merchant, oldest first (`404 not_found` for an unknown merchant). */
export function listOwners(sql: Sql, merchantId: string) {
  return rpc(sql, "merchant_owner_list", { merchant_id: merchantId });
}

/** Removes an owner; what it authorised stops at the agent's next call. */
export function removeOwner(sql: Sql, merchantId: string, subjectRef: string) {
  return rpc(sql, "merchant_owner_remove", { merchant_id: merchantId, subject_ref: subjectRef });
}
