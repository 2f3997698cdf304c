/**
 * Who manages an account, and what a key may do (docs/management.md, "Scopes"; docs/decisions.md,
 * D-446). A secret key carries scopes: `api` for the acts of the resource and function APIs,
 * `management.read` to read the account, `management.write` to change it. Keys the operator mints
 * carry all three; a key minted through the API carries only scopes its minter holds, so a
 * dashboard key (management only) cannot mint a key that acts.
 */
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { Actor, ManagementScope, ManagementWrite } from "./rpc";

export const keyScopes = ["api", "management.read", "management.write"] as const;
export type KeyScope = (typeof keyScopes)[number];

/** A caller of the management operations: the tenant it acts in, who it is, what it may do. */
export interface ManagementCaller extends Tenant {
  actor: Actor;
  scopes: readonly string[];
}

/** `403 insufficient_scope` (naming `required_scope`) unless the caller holds `scope`. */
export function requireScope(scopes: readonly string[], scope: KeyScope): void {
  if (!scopes.includes(scope))
    throw new ApiError("INSUFFICIENT_SCOPE", { required_scope: scope }, `This key does not hold the ${scope} scope.`);
}

/** The RPC scope of a read. */
export function scopeOf(caller: Tenant, now: Date): ManagementScope {
  return { merchant_id: caller.merchantId, environment: caller.environment, now: now.toISOString() };
}

/** The RPC scope of a write, with its actor. */
export function writeOf(caller: ManagementCaller, now: Date): ManagementWrite {
  return { ...scopeOf(caller, now), actor: caller.actor };
}
