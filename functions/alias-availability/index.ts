/**
 * POST /functions/v1/alias-availability (spec 3.4, 4.17): check, reserve and release a public alias.
 * Publishable or secret key; without a key only `check`, against the live namespace. Aliases are
 * unique per environment across merchants; a reservation is released only by the merchant that
 * made it, with its claim token. Every response is `cache-control: no-store`.
 */

import { type AliasVerdict, aliasVerdict, pickSuggestions, suggestionCandidates } from "../../shared/aliases/alias";
import { randomBase62, sha256Hex } from "../../shared/lib/crypto";
import { type AppContext, createFunctionApp } from "../../shared/platform/app";
import { apiKeyAuth, type Principal } from "../../shared/platform/auth";
import { rpc } from "../../shared/platform/db/client";
import { ApiError } from "../../shared/platform/errors";
import { clientIp, enforceRateLimit } from "../../shared/platform/rate-limit";
import { validJson } from "../../shared/platform/validation";
import { aliasLimits, aliasRequestSchema } from "./schema";

const app = createFunctionApp("alias-availability");

app.use(async function noStore(c, next) {
  c.header("cache-control", "no-store");
  await next();
});

app.post("/", apiKeyAuth("anonymous"), async (c) => {
  // The limit depends on the action, so the body is validated first; a malformed body costs no query.
  const input = await validJson(c, aliasRequestSchema);
  const principal = c.var.principal?.kind === "merchant_key" ? c.var.principal : null;
  if (input.action === "check") {
    if (principal) await enforceRateLimit(c, aliasLimits.checkKey, principal.keyId);
    else await enforceRateLimit(c, aliasLimits.checkAnonymous, clientIp(c));
    return check(c, aliasVerdict(input.alias));
  }
  if (!principal) throw new ApiError("API_KEY_REQUIRED");
  await enforceRateLimit(c, aliasLimits[input.action], principal.keyId);
  if (input.action === "reserve") return reserve(c, principal, aliasVerdict(input.alias), input.ttl_seconds);
  return release(c, principal, aliasVerdict(input.alias), input.claim_token);
});

/** `{alias, format_ok, format_code}`: the normalised alias echoed with its verdict. */
function formatFields(verdict: AliasVerdict) {
  return { alias: verdict.alias, format_ok: verdict.formatOk, format_code: verdict.formatCode };
}

/** Where and when: the key's environment (live for anonymous callers) and the request clock. */
function scopeOf(c: AppContext, principal: Principal | null) {
  return { environment: principal?.environment ?? "live", now: c.var.now.toISOString() };
}

async function check(c: AppContext, verdict: AliasVerdict) {
  if (!verdict.formatOk) return c.json({ ...formatFields(verdict), available: false, suggestions: [] });
  const candidates = suggestionCandidates(verdict.alias);
  const { available } = await rpc<{ available: Record<string, boolean> }>(c.var.db(), "alias_check", {
    ...scopeOf(c, c.var.principal),
    aliases: [verdict.alias, ...candidates],
  });
  const free = available[verdict.alias] === true;
  return c.json({ ...formatFields(verdict), available: free, suggestions: free ? [] : pickSuggestions(candidates, available) });
}

async function reserve(c: AppContext, principal: Principal, verdict: AliasVerdict, ttlSeconds: number) {
  if (!verdict.formatOk) return c.json({ ...formatFields(verdict), reserved: false });
  const claimToken = `ct_${randomBase62(43)}`;
  const held = await rpc<{ expires_at: string }>(c.var.db(), "alias_reserve", {
    ...scopeOf(c, principal),
    merchant_id: principal.merchantId,
    alias: verdict.alias,
    claim_token_hash: await sha256Hex(claimToken),
    ttl_seconds: ttlSeconds,
  });
  return c.json({
    ...formatFields(verdict),
    reserved: true,
    claim_token: claimToken,
    expires_at: new Date(held.expires_at).toISOString(),
    ttl_seconds: ttlSeconds,
  });
}

async function release(c: AppContext, principal: Principal, verdict: AliasVerdict, claimToken: string) {
  const released = await rpc<{ alias: string; released: true }>(c.var.db(), "alias_release", {
    ...scopeOf(c, principal),
    merchant_id: principal.merchantId,
    alias: verdict.alias,
    claim_token_hash: await sha256Hex(claimToken),
  });
  return c.json({ alias: released.alias, released: true });
}

export default app;
