/**
 * alias-availability (spec 3.4, 4.17): check, reserve and release a public alias. Aliases are
 * unique per environment across merchants; a reservation is released only by the merchant that
 * made it, with its claim token.
 */
import { randomBase62, sha256Hex } from "../lib/crypto";
import { rpc } from "../platform/db/rpc";
import type { Deps } from "../platform/deps";
import type { Environment, Tenant } from "../platform/principal";
import { type AliasVerdict, aliasVerdict, pickSuggestions, suggestionCandidates } from "./alias";

/** `{alias, format_ok, format_code}`: the normalised alias echoed with its verdict. */
function formatFields(verdict: AliasVerdict) {
  return { alias: verdict.alias, format_ok: verdict.formatOk, format_code: verdict.formatCode };
}

/** Is the alias free in `environment` (live for anonymous callers)? Taken aliases come with free suggestions. */
export async function checkAlias(deps: Deps, environment: Environment, alias: string) {
  const verdict = aliasVerdict(alias);
  if (!verdict.formatOk) return { ...formatFields(verdict), available: false, suggestions: [] };
  const candidates = suggestionCandidates(verdict.alias);
  const { available } = await rpc(deps.sql, "alias_check", {
    environment,
    now: deps.now.toISOString(),
    aliases: [verdict.alias, ...candidates],
  });
  const free = available[verdict.alias] === true;
  return { ...formatFields(verdict), available: free, suggestions: free ? [] : pickSuggestions(candidates, available) };
}

/** Holds the alias for this merchant for `ttlSeconds`; the claim token that releases it is returned once. */
export async function reserveAlias(deps: Deps, tenant: Tenant, alias: string, ttlSeconds: number) {
  const verdict = aliasVerdict(alias);
  if (!verdict.formatOk) return { ...formatFields(verdict), reserved: false };
  const claimToken = `ct_${randomBase62(43)}`;
  const held = await rpc(deps.sql, "alias_reserve", {
    environment: tenant.environment,
    now: deps.now.toISOString(),
    merchant_id: tenant.merchantId,
    alias: verdict.alias,
    claim_token_hash: await sha256Hex(claimToken),
    ttl_seconds: ttlSeconds,
  });
  return {
    ...formatFields(verdict),
    reserved: true,
    claim_token: claimToken,
    expires_at: new Date(held.expires_at).toISOString(),
    ttl_seconds: ttlSeconds,
  };
}

/** Releases this merchant's reservation held by `claimToken` (`409 CLAIM_TOKEN_INVALID` otherwise). */
export async function releaseAlias(deps: Deps, tenant: Tenant, alias: string, claimToken: string) {
  const released = await rpc(deps.sql, "alias_release", {
    environment: tenant.environment,
    now: deps.now.toISOString(),
    merchant_id: tenant.merchantId,
    alias: aliasVerdict(alias).alias,
    claim_token_hash: await sha256Hex(claimToken),
  });
  return { alias: released.alias, released: true };
}
