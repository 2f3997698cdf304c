import { encodeProof, type PresenceDescriptor, type ProofConsent } from "../../shared/engine";
import { deviceChallenge, SoftwareAuthenticator } from "./authenticator";
import { testDb } from "./factories";
import { type CallResult, fetchFrom, resultOf } from "./http";
import { CONSENT } from "./identity";
import { serviceUnderTest } from "./service";

export interface ResourceCallOptions {
  method?: string;
  /** The secret key sent as `Authorization: Bearer`; null sends none. */
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  idempotencyKey?: string;
  /** Sets the server clock for this request (the service honours it only in test mode). */
  now?: Date;
  /** The client address to send from (freshIp): per-IP limits count it. */
  from?: string;
}

/** One HTTP call to the resource API, `/v1<path>`, on the service under test. */
export async function v1<T = any>(path: string, options: ResourceCallOptions = {}): Promise<CallResult<T>> {
  const url = new URL(`${serviceUnderTest().baseUrl}/v1${path}`);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
  if (options.now) headers["x-test-now"] = options.now.toISOString();
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] ??= "application/json";
  const method = options.method ?? (body === undefined ? "GET" : "POST");
  const response = options.from
    ? await fetchFrom(options.from, url, { method, headers, body })
    : await fetch(url, { method, headers, body });
  return resultOf<T>(response, method);
}

/** The presence proof v1 of a capture, as the device SDK emits it; with the person's consent unless `consent` is null. */
export function proofOf(shot: { descriptor: PresenceDescriptor }, consent: ProofConsent | null = CONSENT): string {
  return encodeProof(shot.descriptor, consent ?? undefined);
}

/** A claim of the live person of `shot` through `key` (201 expected by the caller). */
export function claim(
  key: string,
  shot: { descriptor: PresenceDescriptor },
  options: Omit<ResourceCallOptions, "key" | "body"> & { body?: Record<string, unknown> } = {},
) {
  const { body, ...rest } = options;
  return v1("/identity/claims", { ...rest, key, body: { proof: proofOf(shot), ...body } });
}

/**
 * A live claim as a person's device makes it (proof version 2): a challenge the service issued for
 * enrolment, a capture over it, and a new passkey registered over that capture (docs/devices.md).
 */
export async function liveClaim(key: string, person: { capture(options?: { nonce?: string }): { descriptor: PresenceDescriptor } }) {
  const device = await SoftwareAuthenticator.create();
  const challenge = await deviceChallenge(key, "enroll");
  const shot = person.capture({ nonce: challenge });
  const registration = await device.registerCapture(challenge, shot.descriptor);
  return v1("/identity/claims", { key, body: { proof: encodeProof(shot.descriptor, CONSENT, { registration }) } });
}

/**
 * Sends `request` while `table` is locked, so that it is in flight under `idempotencyKey` (its key
 * taken, its write waiting) while `during` runs; then lets it go and answers what it answered.
 */
export async function whileInFlight<T>(
  table: string,
  record: { merchantId: string; idempotencyKey: string },
  request: () => Promise<T>,
  during: () => Promise<void>,
): Promise<T> {
  const holder = await testDb().reserve();
  let sent: Promise<T> | undefined;
  try {
    await holder`begin`;
    await holder.unsafe(`lock table ${table} in exclusive mode`);
    sent = request();
    for (let attempt = 0; attempt < 400; attempt++) {
      const [row] = await testDb()`select state from private.idempotency_keys
        where merchant_id = ${record.merchantId} and idempotency_key = ${record.idempotencyKey}`;
      if (row?.state === "in_flight") break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await during();
  } finally {
    await holder`commit`;
    holder.release();
  }
  return sent;
}
