/**
 * Endpoint management (docs/webhooks.md#endpoints): register, list, disable, rotate the secret and
 * replay. The CLI is a thin shell over these; secrets are minted and sealed here, so the database
 * only ever receives them encrypted, and each is returned to the caller exactly once.
 */
import type { Sql } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type { Environment } from "../kernel/principal";
import { eventTypes, isEventType } from "./events";
import type {} from "./rpc";
import { mintEndpointSecret, openWithKeyring, sealEndpointSecret, secretHint } from "./secret-box";

/** Rotation overlap (resource API 8): the previous secret keeps signing this long. */
export const ROTATION_OVERLAP_SECONDS = 86_400;

/** What a loopback host looks like: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Whether events may be POSTed to `url`: an absolute https URL without credentials or fragment, at
 * most 2048 characters; plain http only to a loopback host, and only where the deployment allows
 * local development (WEBHOOK_ALLOW_LOOPBACK_HTTP=1). Checked at registration and again before
 * every send.
 */
export function checkEndpointUrl(url: string, { allowLoopbackHttp }: { allowLoopbackHttp: boolean }): string | null {
  if (url.length > 2048) return "the URL is longer than 2048 characters";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not an absolute URL";
  }
  if (parsed.username || parsed.password) return "the URL must not carry credentials";
  if (parsed.hash) return "the URL must not carry a #fragment";
  if (parsed.protocol === "https:") return null;
  if (parsed.protocol === "http:") {
    if (!isLoopbackHost(parsed.hostname)) return "http is accepted only for loopback hosts (local development); use https";
    return allowLoopbackHttp
      ? null
      : "loopback http URLs are accepted only where WEBHOOK_ALLOW_LOOPBACK_HTTP=1 (local development); use https";
  }
  return "the URL must be https";
}

/** Validates a subscription list: known types, no repeats. Null (or absent) means every type. */
export function checkEventTypes(types: readonly string[] | null | undefined): string | null {
  if (types == null) return null;
  if (types.length === 0) return "give at least one event type, or none to receive every type";
  const unknown = types.filter((type) => !isEventType(type));
  if (unknown.length) return `unknown event type ${unknown.join(", ")}; known: ${eventTypes.join(", ")}`;
  return null;
}

export interface EndpointView {
  endpoint_id: string;
  merchant_id: string;
  environment: Environment;
  url: string;
  event_types: string[] | null;
  status: "active" | "disabled";
  disabled_reason: "manual" | "gone" | null;
  disabled_at: string | null;
  created_at: string;
  secrets: { hint: string; created_at: string; expires_at: string | null }[];
  deliveries: { pending: number; succeeded: number; failed: number };
}

interface CreateEndpointInput {
  merchantId: string;
  environment: Environment;
  url: string;
  /** Null or absent: every type, including types added later. */
  eventTypes?: string[] | null;
  allowLoopbackHttp: boolean;
  now?: Date;
}

/** Thrown for input the caller must fix (bad URL, unknown event type). */
export class EndpointInputError extends Error {}

/**
 * Registers an endpoint and returns it with its secret (`whsec_…`), which is shown only here.
 *
 * @example const { endpoint_id, secret } = await createEndpoint(sql, config.WEBHOOK_SECRET_KEY, { merchantId, environment: "live", url, allowLoopbackHttp: false });
 */
export async function createEndpoint(sql: Sql, secretKey: string, input: CreateEndpointInput): Promise<EndpointView & { secret: string }> {
  const problem = checkEndpointUrl(input.url, input) ?? checkEventTypes(input.eventTypes);
  if (problem) throw new EndpointInputError(problem);
  const endpointId = crypto.randomUUID();
  const secret = mintEndpointSecret();
  const endpoint = await rpc(sql, "webhook_endpoint_create", {
    endpoint_id: endpointId,
    merchant_id: input.merchantId,
    environment: input.environment,
    url: input.url,
    event_types: input.eventTypes ? [...new Set(input.eventTypes)] : null,
    sealed_secret: await sealEndpointSecret(secretKey, endpointId, secret),
    secret_hint: secretHint(secret),
    now: (input.now ?? new Date()).toISOString(),
  });
  return { ...endpoint, secret };
}

/** Every endpoint of a merchant (optionally of one environment), with secret hints and delivery counts. */
export async function listEndpoints(sql: Sql, merchantId: string, environment?: Environment, now = new Date()): Promise<EndpointView[]> {
  const { endpoints } = await rpc(sql, "webhook_endpoint_list", {
    merchant_id: merchantId,
    ...(environment ? { environment } : {}),
    now: now.toISOString(),
  });
  return endpoints;
}

/** Stops deliveries to an endpoint; its pending deliveries fail (replayable). Idempotent. */
export function disableEndpoint(sql: Sql, endpointId: string, now = new Date()) {
  return rpc(sql, "webhook_endpoint_disable", {
    endpoint_id: endpointId,
    now: now.toISOString(),
  });
}

/**
 * A new current secret for the endpoint, returned once; the earlier ones keep signing beside it
 * for at most `overlapSeconds` more (24 hours by default; 0 cuts a leaked secret off at once).
 */
export async function rotateEndpointSecret(
  sql: Sql,
  secretKey: string,
  endpointId: string,
  { now = new Date(), overlapSeconds = ROTATION_OVERLAP_SECONDS }: { now?: Date; overlapSeconds?: number } = {},
): Promise<EndpointView & { secret: string; previous_valid_until: string }> {
  const secret = mintEndpointSecret();
  const rotated = await rpc(sql, "webhook_secret_rotate", {
    endpoint_id: endpointId,
    sealed_secret: await sealEndpointSecret(secretKey, endpointId, secret),
    secret_hint: secretHint(secret),
    overlap_seconds: overlapSeconds,
    now: now.toISOString(),
  });
  return { ...rotated, secret };
}

/** What {@link resealSecrets} did. */
interface ResealSummary {
  /** Stored secrets read. */
  secrets: number;
  /** Already sealed under the current key. */
  current: number;
  /** Sealed again under the current key. */
  resealed: number;
  /** Rotated or deleted while this ran: left as they were. */
  skipped: number;
  /** Opened by no key of the keyring: their endpoints cannot be signed for until a key that opens them is given. */
  unreadable: Array<{ secret_id: string; endpoint_id: string }>;
}

/**
 * After WEBHOOK_SECRET_KEY changes: seals every stored endpoint secret that only an older key of
 * `keyring` opens again under `keyring[0]`, the new key, and writes them back in one transaction.
 * Idempotent; once it reports no unreadable secrets the older key can be dropped.
 *
 * @example await resealSecrets(sql, [process.env.WEBHOOK_SECRET_KEY, process.env.WEBHOOK_SECRET_KEY_PREVIOUS]);
 */
export async function resealSecrets(sql: Sql, keyring: readonly string[]): Promise<ResealSummary> {
  const stored = await rpc(sql, "webhook_secrets_sealed", {});
  const summary: ResealSummary = { secrets: stored.length, current: 0, resealed: 0, skipped: 0, unreadable: [] };
  const changes: Array<{ secret_id: string; sealed_secret: string; resealed_secret: string }> = [];
  for (const row of stored) {
    const opened = await openWithKeyring(keyring, row.endpoint_id, row.sealed_secret).catch(() => null);
    if (!opened) summary.unreadable.push({ secret_id: row.secret_id, endpoint_id: row.endpoint_id });
    else if (opened.keyIndex === 0) summary.current++;
    else {
      const resealed_secret = await sealEndpointSecret(keyring[0]!, row.endpoint_id, opened.secret);
      changes.push({ secret_id: row.secret_id, sealed_secret: row.sealed_secret, resealed_secret });
    }
  }
  if (changes.length > 0) {
    const written = await rpc(sql, "webhook_secrets_reseal", { secrets: changes });
    summary.resealed = written.resealed;
    summary.skipped = written.skipped;
  }
  return summary;
}

type ReplayTarget =
  | { eventId: string; endpointId?: string }
  | { merchantId: string; environment: Environment; from: Date; to: Date; endpointId?: string };

/**
 * Queues events again with the same `id`: one event, or a merchant's events of one environment with
 * `created_at` in [from, to). Each gets a new delivery (fresh 72-hour window) per subscribed active
 * endpoint, or only to `endpointId`.
 */
export function replayEvents(sql: Sql, target: ReplayTarget, now = new Date()): Promise<{ events: number; deliveries: number }> {
  const scope =
    "eventId" in target
      ? { event_id: target.eventId }
      : { merchant_id: target.merchantId, environment: target.environment, from: target.from.toISOString(), to: target.to.toISOString() };
  return rpc(sql, "webhook_replay", { ...scope, ...(target.endpointId ? { endpoint_id: target.endpointId } : {}), now: now.toISOString() });
}
