/**
 * The account's API keys (docs/management.md, "Keys"): list, create (the key shown once), roll (the
 * old key keeps working for a chosen overlap of at most 24 hours, then stops) and revoke. Only a
 * key's SHA-256 and its hint are stored.
 */
import * as v from "valibot";
import { mintApiKey } from "../kernel/api-keys";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { type KeyScope, keyScopes, type ManagementCaller, requireScope, scopeOf, writeOf } from "./caller";
import { uuidOf } from "./ids";
import type {} from "./rpc";

/** The longest a rolled key keeps working beside its successor. */
export const MAX_ROLL_OVERLAP_SECONDS = 86_400;

/** A key's recognisable hint: its prefix and last four characters (as the operator's keys). */
function keyHint(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`;
}

export const createKeySchema = v.pipe(
  v.strictObject({
    kind: v.optional(v.picklist(["secret", "publishable"]), "secret"),
    scopes: v.optional(v.pipe(v.array(v.picklist(keyScopes)), v.minLength(1), v.maxLength(3))),
    name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80))),
  }),
  v.examples([{ kind: "secret", scopes: ["management.read"], name: "Dashboard" }]),
);

export const rollKeySchema = v.pipe(
  v.strictObject({
    overlap_seconds: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_ROLL_OVERLAP_SECONDS)),
      MAX_ROLL_OVERLAP_SECONDS,
    ),
  }),
  v.examples([{ overlap_seconds: 3600 }]),
);

function keyUuid(id: string): string {
  const uuid = uuidOf("key", id);
  if (!uuid) throw new ApiError("not_found");
  return uuid;
}

/** Every key of the caller's environment, newest first (revoked and expired ones too). */
export async function listKeys(deps: Deps, caller: ManagementCaller) {
  const { data } = await rpc(deps.sql, "management_keys_list", scopeOf(caller, deps.now));
  return { object: "list" as const, data, next_cursor: null };
}

/**
 * A new key of the caller's environment, answered with the key itself (shown this once). Secret
 * keys take the scopes asked for (default: the caller's own), never one the caller lacks; a
 * publishable key acts only in the browser and carries `api` alone.
 */
export async function createKey(deps: Deps, caller: ManagementCaller, input: v.InferOutput<typeof createKeySchema>) {
  const scopes: KeyScope[] =
    input.kind === "publishable"
      ? ["api"]
      : [...new Set(input.scopes ?? (caller.scopes.filter((s) => keyScopes.includes(s as KeyScope)) as KeyScope[]))];
  for (const scope of scopes) requireScope(caller.scopes, scope);
  if (input.kind === "publishable" && input.scopes && input.scopes.some((s) => s !== "api"))
    throw new ApiError("INVALID_INPUT", { fields: ["scopes"] }, "A publishable key carries the api scope only.");
  const { key, hash } = await mintApiKey(input.kind, caller.environment);
  const row = await rpc(deps.sql, "management_key_create", {
    ...writeOf(caller, deps.now),
    kind: input.kind,
    scopes: keyScopes.filter((s) => scopes.includes(s)),
    ...(input.name ? { name: input.name } : {}),
    key_hash: hash,
    key_hint: keyHint(key),
  });
  return { ...row, secret: key };
}

/** Replaces a key: the new key (shown once) and the old one, which stops after the overlap. */
export async function rollKey(deps: Deps, caller: ManagementCaller, id: string, input: v.InferOutput<typeof rollKeySchema>) {
  const keyId = keyUuid(id);
  const current = (await rpc(deps.sql, "management_keys_list", scopeOf(caller, deps.now))).data.find((k) => uuidOf("key", k.id) === keyId);
  if (!current) throw new ApiError("not_found");
  const { key, hash } = await mintApiKey(current.kind, caller.environment);
  const rolled = await rpc(deps.sql, "management_key_roll", {
    ...writeOf(caller, deps.now),
    key_id: keyId,
    overlap_seconds: input.overlap_seconds,
    key_hash: hash,
    key_hint: keyHint(key),
  });
  return { ...rolled.key, secret: key, rolled: rolled.rolled };
}

/** Revokes a key at once; a repeat answers the same. */
export function revokeKey(deps: Deps, caller: ManagementCaller, id: string) {
  return rpc(deps.sql, "management_key_revoke", { ...writeOf(caller, deps.now), key_id: keyUuid(id) });
}
