/**
 * Webhook signatures (resource API section 6; docs/webhooks.md).
 *
 *   Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]
 *
 * Each `v1` is HMAC-SHA256, keyed with one endpoint secret (the whole `whsec_…` string, UTF-8),
 * over `<t>.<raw body>`, as lowercase hex. During a rotation every secret still valid signs, so the
 * header carries one `v1` per secret and a receiver holding either secret verifies.
 *
 * This file imports nothing and uses only Web Crypto (Node 18+, Deno, Bun, Workers, browsers): a
 * merchant can copy it whole and call `verifyWebhook`.
 */

export const SIGNATURE_HEADER = "Service-Signature";
/** Reject a signature whose `t` is further than this from the receiver's clock (resource API 8). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

/** HMAC-SHA256 of `message` keyed with `secret`, lowercase hex. */
async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Equal strings, compared in time that does not depend on where they differ. */
function constantTimeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  return diff === 0;
}

/**
 * The signature header value for `rawBody` sent at `timestamp` (unix seconds), one `v1` per secret.
 *
 * @example
 * const header = await signWebhook(body, ["whsec_new…", "whsec_old…"], Math.floor(Date.now() / 1000));
 * // "t=1795000000,v1=5f1c…,v1=9a0e…"
 */
export async function signWebhook(rawBody: string, secrets: readonly string[], timestamp: number): Promise<string> {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new Error("timestamp must be unix seconds");
  if (secrets.length === 0) throw new Error("at least one secret is needed to sign");
  const signed = `${timestamp}.${rawBody}`;
  const macs = await Promise.all(secrets.map((secret) => hmacHex(secret, signed)));
  return [`t=${timestamp}`, ...macs.map((mac) => `v1=${mac}`)].join(",");
}

export interface ParsedSignature {
  timestamp: number;
  signatures: string[];
}

/**
 * Splits a header into its `t` and its `v1` values. Unknown schemes (a future `v2`) are skipped;
 * a missing or repeated `t`, or no well-formed `v1`, gives null.
 */
export function parseSignatureHeader(header: string): ParsedSignature | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 1) return null;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === "t") {
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (name === "v1" && /^[0-9a-f]{64}$/.test(value)) {
      signatures.push(value);
    }
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

export type VerifyResult =
  | { ok: true; timestamp: number }
  | { ok: false; reason: "missing_header" | "malformed_header" | "timestamp_out_of_tolerance" | "no_matching_signature" };

export interface VerifyOptions {
  /** Largest accepted distance between `t` and `now`, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock (default: the current time). */
  now?: Date;
}

/**
 * Verifies a delivery. Pass the body exactly as received (the raw bytes as a string, before any
 * JSON parsing), the `Service-Signature` header, and every secret you currently accept for this
 * endpoint (two during a rotation). Accepted when `t` is within the tolerance of `now` (older than
 * five minutes is a replay; further ahead is a wrong clock) and any `v1` matches any secret,
 * compared in constant time. Deduplicate on the envelope's `id` afterwards.
 *
 * @example
 * const raw = await request.text();
 * const check = await verifyWebhook(raw, request.headers.get("service-signature"), [process.env.WHSEC!]);
 * if (!check.ok) return new Response(check.reason, { status: 400 });
 * const event = JSON.parse(raw); // {id, type, created_at, api_version, attempt, data}
 */
export async function verifyWebhook(
  rawBody: string,
  header: string | null | undefined,
  secrets: string | readonly string[],
  { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = new Date() }: VerifyOptions = {},
): Promise<VerifyResult> {
  if (!header) return { ok: false, reason: "missing_header" };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: "malformed_header" };
  if (Math.abs(Math.floor(now.getTime() / 1000) - parsed.timestamp) > toleranceSeconds) {
    return { ok: false, reason: "timestamp_out_of_tolerance" };
  }
  const signed = `${parsed.timestamp}.${rawBody}`;
  let matched = false;
  for (const secret of typeof secrets === "string" ? [secrets] : secrets) {
    const expected = await hmacHex(secret, signed);
    // every candidate is compared, so the time taken does not tell which one matched
    for (const candidate of parsed.signatures) matched = constantTimeEqual(expected, candidate) || matched;
  }
  return matched ? { ok: true, timestamp: parsed.timestamp } : { ok: false, reason: "no_matching_signature" };
}
