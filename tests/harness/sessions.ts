import { type CallOptions, call } from "./http";
import { serviceUnderTest } from "./service";

/** The fields of a created session (function API 2.7 plus merchant_id, state and created_at). */
export const CREATED_KEYS = [
  "action",
  "amount_cents",
  "brand",
  "created_at",
  "currency",
  "ended_at",
  "expires_at",
  "external_txn_ref",
  "merchant_id",
  "metadata",
  "opened_at",
  "result",
  "session_id",
  "session_token",
  "single_use",
  "state",
  "ttl_seconds",
  "url",
];

/** An authorize session's required fields, with a fresh reference. */
export function authorizeBody(extra: Record<string, unknown> = {}) {
  return { action: "authorize", amount_cents: 1299, currency: "EUR", external_txn_ref: `order-${crypto.randomUUID()}`, ...extra };
}

/** hosted-session-create with `key`. */
export function createSession(key: string | null, body: unknown, options: Omit<CallOptions, "key" | "body"> = {}) {
  return call("hosted-session-create", { ...options, key, body });
}

/** Creates a session and returns its 201 body (fails the test otherwise). */
export async function openSession(key: string, body: Record<string, unknown> = { action: "login" }, now?: Date) {
  const res = await createSession(key, body, { now });
  if (res.status !== 201) throw new Error(`hosted-session-create answered ${res.status}: ${res.text}`);
  return res.body as { session_id: string; session_token: string; expires_at: string; [field: string]: unknown };
}

/** The service role's `Authorization` header (the service's own servers). */
export function serviceRole(): Record<string, string> {
  return { authorization: `Bearer ${serviceUnderTest().bindings.SERVICE_ROLE_KEY}` };
}

/** hosted-session-consume, as the service role (default) or with a merchant key. */
export function consumeSession(sessionToken: unknown, options: { key?: string; now?: Date; headers?: Record<string, string> } = {}) {
  const headers = { ...(options.key ? {} : serviceRole()), ...options.headers };
  return call("hosted-session-consume", { key: options.key, body: { session_token: sessionToken }, headers, now: options.now });
}

/** hosted-session-get with a merchant key. */
export function readSession(key: string, sessionId: string, now?: Date) {
  return call("hosted-session-get", { key, query: { session_id: sessionId }, now });
}

/** The screen's boot with the session token. */
export function boot(
  sessionToken: unknown,
  options: { now?: Date; locale?: string; headers?: Record<string, string>; from?: string } = {},
) {
  const headers: Record<string, string> = { ...(options.locale ? { "accept-language": options.locale } : {}), ...options.headers };
  return call("hosted-capture/boot", { body: { session_token: sessionToken }, headers, now: options.now, from: options.from });
}

/** A screen endpoint (complete or cancel) with the screen credential. */
export function screenCall(
  route: "complete" | "cancel",
  screenToken: string | null,
  body: unknown,
  options: { now?: Date; locale?: string; headers?: Record<string, string>; from?: string } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (screenToken) headers.authorization = `Bearer ${screenToken}`;
  if (options.locale) headers["accept-language"] = options.locale;
  return call(`hosted-capture/${route}`, { body, headers, now: options.now, from: options.from });
}
