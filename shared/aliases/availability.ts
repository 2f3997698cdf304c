/**
 * alias-availability (spec 3.4, 4.17): check, reserve, release and claim a public alias. Aliases are
 * unique per environment across merchants; a reservation is released only by the merchant that
 * made it, with its claim token.
 */

import * as v from "valibot";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Environment, Tenant } from "../kernel/principal";
import { randomBase62, sha256Hex } from "../lib/crypto";
import { type AliasVerdict, aliasVerdict, pickSuggestions, suggestionCandidates } from "./alias";
import type {} from "./rpc";

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

/**
 * Attaches this merchant's reservation to a person it knows (`subjectRef`, as enrolment answered it),
 * redeeming `claimToken` once: the alias is the person's with no expiry. `409 CLAIM_TOKEN_INVALID`
 * when the token holds no live reservation of the alias; `404 not_found` for an unknown person.
 */
export async function claimAlias(deps: Deps, tenant: Tenant, alias: string, claimToken: string, subjectRef: string) {
  const verdict = aliasVerdict(alias);
  if (!verdict.formatOk) return { ...formatFields(verdict), claimed: false };
  const claimed = await rpc(deps.sql, "alias_claim", {
    environment: tenant.environment,
    now: deps.now.toISOString(),
    merchant_id: tenant.merchantId,
    alias: verdict.alias,
    claim_token_hash: await sha256Hex(claimToken),
    subject_ref: subjectRef,
  });
  return { alias: claimed.alias, claimed: true, claimed_at: new Date(claimed.claimed_at).toISOString() };
}

/** alias-availability's answer, by action: check (available, suggestions), reserve (reserved, claim_token), release (released). */
export const aliasAnswerSchema = v.object({
  alias: described(v.string(), "The alias, normalised."),
  format_ok: v.optional(described(v.boolean(), "Whether it is a valid alias.")),
  format_code: v.optional(described(v.nullable(v.string()), "Why it is not, when not (docs/functions.md, format_code).")),
  available: v.optional(described(v.boolean(), "check: whether nobody holds it.")),
  suggestions: v.optional(described(v.array(v.string()), "check: free aliases like it, when it is taken.")),
  reserved: v.optional(described(v.boolean(), "reserve: whether it is now held for this merchant.")),
  claim_token: v.optional(described(v.string(), "reserve: the token that releases it, shown once.")),
  expires_at: v.optional(described(v.pipe(v.string(), v.isoTimestamp()), "reserve: when the hold ends.")),
  ttl_seconds: v.optional(described(v.number(), "reserve: how long the hold lasts.")),
  released: v.optional(described(v.literal(true), "release: it is free again.")),
  claimed: v.optional(described(v.boolean(), "claim: whether it is now attached to the person, for good.")),
  claimed_at: v.optional(described(v.pipe(v.string(), v.isoTimestamp()), "claim: when it was attached.")),
});
