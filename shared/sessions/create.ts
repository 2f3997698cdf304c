/**
 * hosted-session-create (function API 2.7, 4.12): a merchant's server opens a hosted session for
 * one person and gets its single-use token, once. The session, not a URL, carries what the screen
 * asks (the action), the reference and the amount.
 */
import * as v from "valibot";
import { SCREEN_PAGE_PATH, sessionActions } from "../contracts/hosted-screen";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { mountOf } from "../kernel/registry";
import { coded, jsonObject, metadataSchema, money, requiredAs } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import { isCurrency, isMinorUnitAmount } from "../lib/money";
import { isBrandName } from "../themes/theme";
import { SERVICE_HASH } from "../transactions/input";
import type { HostedSessionRecord } from "./rpc";
import { newSessionToken } from "./tokens";

export const TTL_SECONDS = { default: 300, min: 60, max: 900 } as const;
const ttlCode = coded("INVALID_TTL");

/** `ttl_seconds` of a hosted session (and of an agent verification card): 60 to 900, default 300; otherwise `400 INVALID_TTL`. */
export const ttlSecondsSchema = v.nullish(
  v.pipe(v.number(ttlCode), v.integer(ttlCode), v.minValue(TTL_SECONDS.min, ttlCode), v.maxValue(TTL_SECONDS.max, ttlCode)),
  TTL_SECONDS.default,
);

/**
 * The body (spec 4.12). Each field answers its own code; null is absent. `amount_cents` and
 * `currency` belong to `authorize` (elsewhere `INVALID_AMOUNT_CENTS` / `INVALID_CURRENCY`), which
 * needs them and `external_txn_ref` (`AMOUNT_AND_REF_REQUIRED`). `merchant_id`, when sent, must be
 * the key's merchant (`403 MERCHANT_MISMATCH`). An unknown field is `400 INVALID_INPUT`.
 */
/**
 * An origin a merchant's page may open the screen from (D-643): exactly scheme, host and port as a
 * browser writes `location.origin`; https, or http on a loopback host (a developer's page, which
 * browsers treat as secure too). Anything else `400 INVALID_INPUT` on `opener_origin`.
 */
export function isOpenerOrigin(text: string): boolean {
  if (text.length > 300 || !URL.canParse(text)) return false;
  const url = new URL(text);
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  return url.origin === text && (url.protocol === "https:" || (url.protocol === "http:" && loopback));
}

export const createSessionSchema = v.pipe(
  jsonObject,
  v.strictObject({
    merchant_id: v.nullish(v.string()),
    action: requiredAs("INVALID_ACTION", v.picklist(sessionActions, coded("INVALID_ACTION"))),
    external_txn_ref: v.nullish(
      v.pipe(v.string(coded("INVALID_EXTERNAL_TXN_REF")), v.regex(SERVICE_HASH, coded("INVALID_EXTERNAL_TXN_REF"))),
    ),
    amount_cents: v.nullish(money(v.custom<number>(isMinorUnitAmount, coded("INVALID_AMOUNT_CENTS")))),
    currency: v.nullish(v.custom<string>(isCurrency, coded("INVALID_CURRENCY"))),
    brand: v.nullish(v.custom<string>(isBrandName, coded("INVALID_BRAND"))),
    /** Not in the spec: the merchant page that opens the screen in a popup, told the session's end by postMessage (D-643). */
    opener_origin: v.nullish(v.pipe(v.string(), v.check(isOpenerOrigin, "an origin: https, or http on a loopback host"))),
    ttl_seconds: ttlSecondsSchema,
    metadata: v.nullish(metadataSchema, {}),
  }),
  v.check(
    (body) => body.action !== "authorize" || (body.amount_cents != null && body.currency != null && body.external_txn_ref != null),
    coded("AMOUNT_AND_REF_REQUIRED"),
  ),
  v.check((body) => body.action === "authorize" || body.amount_cents == null, coded("INVALID_AMOUNT_CENTS")),
  v.check((body) => body.action === "authorize" || body.currency == null, coded("INVALID_CURRENCY")),
);

/**
 * The hosted screen's address: the page of `hosted-capture` on `origin` (the service's base URL, or
 * a /v1 session's CNAME), with `fragment` (a session token, or a handoff's `handoff=` code) after
 * `#`, which browsers never send to a server nor put in a Referer. Every kind of session opens the
 * screen at this one address: the function API's, an agent verification card's, the owner's
 * sign-in, a /v1 session, and a handoff to a phone.
 *
 * @example screenUrl("https://auth.example.com", "hst_…") // "https://auth.example.com/functions/v1/hosted-capture/session#hst_…"
 */
export function screenUrl(origin: string, fragment: string): string {
  return `${origin.replace(/\/+$/, "")}${mountOf("hosted-capture")}${SCREEN_PAGE_PATH}#${fragment}`;
}

/** A new session of `tenant` as stored (under its token's SHA-256), and its token. */
export async function newSessionRecord(
  tenant: Tenant,
  body: Omit<v.InferOutput<typeof createSessionSchema>, "merchant_id">,
  now: Date,
): Promise<{ sessionToken: string; record: HostedSessionRecord }> {
  const sessionToken = newSessionToken();
  const record = {
    id: crypto.randomUUID(),
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    token_hash: await sha256Hex(sessionToken),
    action: body.action,
    external_txn_ref: body.external_txn_ref ?? undefined,
    amount_cents: body.amount_cents ?? undefined,
    currency: body.currency ?? undefined,
    brand: body.brand ?? undefined,
    opener_origin: body.opener_origin ?? undefined,
    metadata: body.metadata,
    ttl_seconds: body.ttl_seconds,
    now: now.toISOString(),
  };
  return { sessionToken, record };
}

/**
 * Stores the session under its token's SHA-256 and answers the fields of 2.7 with the token, the
 * only time it is shown, and the screen's `url` holding it. A write that fails for any reason is `500 SESSION_WRITE_FAILED`.
 */
export async function createSession(deps: Deps, tenant: Tenant, body: v.InferOutput<typeof createSessionSchema>, serviceBaseUrl: string) {
  if (body.merchant_id != null && body.merchant_id.toLowerCase() !== tenant.merchantId.toLowerCase()) {
    throw new ApiError("MERCHANT_MISMATCH");
  }
  const { sessionToken, record } = await newSessionRecord(tenant, body, deps.now);
  try {
    const created = await rpc(deps.sql, "hosted_session_create", record);
    return { session_token: sessionToken, ...created, url: screenUrl(serviceBaseUrl, sessionToken) };
  } catch (error) {
    console.error(JSON.stringify({ error: `hosted session write failed: ${String(error)}` }));
    throw new ApiError("SESSION_WRITE_FAILED");
  }
}
