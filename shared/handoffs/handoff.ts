/**
 * Handoffs (handoff-register-public, spec section 5): a hosted session begun on one device (a desktop
 * with no camera) is finished on another (a phone). The first device registers the session's token
 * with the merchant's publishable key and shows the answer's QR code; the phone scans it, opens the
 * hosted screen at the URL inside, claims the code once (within `ttl_seconds`) and boots the session
 * as if it had been handed the token itself; the first device polls the handoff's state.
 *
 * The code is 32 random bytes. Only its SHA-256 is stored; the session token travels sealed
 * (AES-256-GCM) under a key derived from the code by HKDF, so neither the database nor the code's
 * hash opens it, and the sealed copy is dropped when the code is claimed or replaced.
 */
import { renderSVG } from "uqr";
import * as v from "valibot";
import { HANDOFF_FRAGMENT } from "../contracts/hosted-screen";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError, type ErrorCode } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { jsonObject, ttlSeconds } from "../kernel/validation";
import { fromBase64Url, randomBase64Url, sha256Hex, toBase64Url } from "../lib/crypto";
import { canonicalUuid } from "../lib/uuid";
import { screenUrl } from "../sessions/create";
import { isSessionToken } from "../sessions/tokens";
import type {} from "./rpc";

export const HANDOFF_TTL_SECONDS = { default: 120, min: 30, max: 600 } as const;
const HANDOFF_CODE = /^hoc_[A-Za-z0-9_-]{43}$/;
const SEALED = /^v1:([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]+)$/;
const encoder = new TextEncoder();

export const registerHandoffSchema = v.pipe(
  jsonObject,
  v.strictObject({
    session_token: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
    ttl_seconds: ttlSeconds(HANDOFF_TTL_SECONDS, "INVALID_HANDOFF_TTL"),
  }),
);

export const claimHandoffSchema = v.pipe(
  jsonObject,
  v.strictObject({ handoff_code: v.pipe(v.string(), v.minLength(1), v.maxLength(256)) }),
);

const handoffId = v.pipe(v.string(), v.minLength(1), v.maxLength(64));

export const handoffStatusSchema = v.object({ handoff_id: handoffId });

/** The hosted screen's poll: its session's token is its credential. */
export const screenHandoffStatusSchema = v.pipe(
  jsonObject,
  v.strictObject({ session_token: v.pipe(v.string(), v.minLength(1), v.maxLength(256)), handoff_id: handoffId }),
);

/** The AES-GCM key a handoff code seals its session token under. */
async function sealingKey(code: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(code), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode("handoff session token v1") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

async function seal(code: string, sessionToken: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sealingKey(code), encoder.encode(sessionToken));
  return `v1:${toBase64Url(iv)}:${toBase64Url(sealed)}`;
}

async function open(code: string, sealed: string): Promise<string> {
  const [, iv, body] = SEALED.exec(sealed) ?? [];
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64Url(iv) }, await sealingKey(code), fromBase64Url(body));
  return new TextDecoder().decode(plain);
}

/** Where the phone lands: the hosted screen, with the code in the fragment (never sent to a server by the browser). */
export function handoffUrl(baseUrl: string, code: string): string {
  return screenUrl(baseUrl, `${HANDOFF_FRAGMENT}${code}`);
}

/** What registering a handoff can be refused with (registerHandoff). */
export const handoffRegisterCodes = ["not_found", "SESSION_ALREADY_CONSUMED", "SESSION_EXPIRED"] as const satisfies readonly ErrorCode[];

/**
 * Registers a handoff of an unopened hosted session and answers its code, the phone's URL and that
 * URL as a QR code (SVG, drawn here: nothing is loaded from elsewhere). A newer handoff of the same
 * session replaces the older one. `tenant` is the key's merchant (only its sessions), or null for the
 * hosted screen, which holds the token and nothing else. Unknown (or another merchant's) session
 * `404 not_found`; expired `410 SESSION_EXPIRED`; already opened `409 SESSION_ALREADY_CONSUMED`.
 */
export async function registerHandoff(
  deps: Deps,
  tenant: Tenant | null,
  baseUrl: string,
  body: v.InferOutput<typeof registerHandoffSchema>,
) {
  if (!isSessionToken(body.session_token)) throw new ApiError("not_found");
  const code = `hoc_${randomBase64Url(32)}`;
  const handoff = await rpc(deps.sql, "handoff_register", {
    id: crypto.randomUUID(),
    ...(tenant ? { merchant_id: tenant.merchantId, environment: tenant.environment } : {}),
    now: deps.now.toISOString(),
    session_token_hash: await sha256Hex(body.session_token),
    code_hash: await sha256Hex(code),
    sealed_session_token: await seal(code, body.session_token),
    ttl_seconds: body.ttl_seconds,
  });
  const url = handoffUrl(baseUrl, code);
  return { ...handoff, handoff_code: code, url, qr_svg: renderSVG(url, { ecc: "M", border: 2, pixelSize: 6 }) };
}

/**
 * The phone's claim: exchanges the code, once, for the session token the screen boots with. Unknown,
 * used, replaced and expired codes are one answer, `404 HANDOFF_CODE_INVALID`.
 */
export async function claimHandoff(deps: Deps, body: v.InferOutput<typeof claimHandoffSchema>) {
  if (!HANDOFF_CODE.test(body.handoff_code)) throw new ApiError("HANDOFF_CODE_INVALID");
  const claimed = await rpc(deps.sql, "handoff_claim", { code_hash: await sha256Hex(body.handoff_code), now: deps.now.toISOString() });
  return { session_token: await open(body.handoff_code, claimed.sealed_session_token), handoff: claimed.handoff };
}

/**
 * The first device's poll: the handoff's state and its session's, read by the merchant's key
 * (`tenant`) or by the hosted screen with its session's token; anyone else's or unknown `404 not_found`.
 */
export async function handoffStatus(deps: Deps, reader: Tenant | { sessionToken: string }, handoffId: string) {
  const uuid = canonicalUuid(handoffId.startsWith("hof_") ? handoffId.slice(4) : handoffId);
  const scope =
    "sessionToken" in reader
      ? { session_token_hash: await sha256Hex(reader.sessionToken) }
      : { merchant_id: reader.merchantId, environment: reader.environment };
  const handoff = uuid ? await rpc(deps.sql, "handoff_get", { ...scope, now: deps.now.toISOString(), handoff_id: uuid }) : null;
  if (!handoff) throw new ApiError("not_found");
  return handoff;
}

/** A handoff's state (status, and inside the claim's answer). */
export const handoffSchema = v.object({
  handoff_id: v.pipe(v.string(), v.startsWith("hof_")),
  state: described(v.string(), "pending until the phone claims the code, then claimed (or expired)."),
  session: described(v.object({ session_id: v.string(), state: v.string() }), "The session handed off, and its state."),
  claimed_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
});

/** A registered handoff: its state, the code, the phone's url and that url as a QR code (SVG). */
export const registeredHandoffSchema = v.object({
  ...handoffSchema.entries,
  handoff_code: described(v.pipe(v.string(), v.startsWith("hoc_")), "The one-time code (in the url)."),
  url: described(v.pipe(v.string(), v.url()), "What the phone opens."),
  qr_svg: described(v.string(), "The url as a QR code, an SVG image."),
});

/** The phone's claim: the session token the screen boots with, and the handoff. */
export const claimedHandoffSchema = v.object({ session_token: v.string(), handoff: handoffSchema });
