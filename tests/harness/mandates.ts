import { expect } from "vitest";
import { passport } from "./documents";
import { merchantFactory } from "./factories";
import { call, replayHeaders } from "./http";
import { enrollStranger, transact } from "./identity";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;
type Person = Awaited<ReturnType<typeof enrollStranger>>;

/** A fresh capture of `person` through the transaction sink (with a valid sandbox passport when `document`): its transaction_id is mandate-issue's proof. */
export async function proofCapture(
  merchant: Merchant,
  person: Pick<Person, "capture" | "subject_ref" | "face">,
  options: { document?: boolean; at?: Date; dateOfBirth?: string } = {},
) {
  const shot = person.capture({ at: options.at });
  const res = await transact(
    merchant.keys.sk_test,
    {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: person.subject_ref,
      capture_nonce: shot.nonce,
      face_template: shot.descriptor,
      ...(options.document ? { document: await passport({ at: options.at, dateOfBirth: options.dateOfBirth }) } : {}),
    },
    { now: options.at },
  );
  expect(res.status, res.text).toBe(200);
  return res.body.transaction_id as string;
}

/** A mandate-issue body for `person`, proven by `captureId`, one day long. */
export function mandateBody(person: Person, captureId: string, extra: Record<string, unknown> = {}) {
  return {
    granted_by: person.subject_ref,
    granted_to: `agent_${crypto.randomUUID()}`,
    granted_to_kind: "agent",
    scopes: ["purchase"],
    ceiling: { kind: "amount", amount: 700, currency: "USD", period: "lifetime" },
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    proof: { capture_id: captureId },
    ...extra,
  };
}

export function issue(key: string, body: unknown, options: { now?: Date; headers?: Record<string, string> } = {}) {
  return call("mandate-issue", { key, body, headers: { ...replayHeaders(options.now), ...options.headers }, now: options.now });
}

/** A merchant, a person with a document on record, and an issued mandate (amount 700 USD lifetime by default). */
export async function mandateFixture(extra: Record<string, unknown> = {}) {
  const merchant = await merchantFactory();
  const person = await enrollStranger(merchant.keys.pk_test);
  const captureId = await proofCapture(merchant, person, { document: true });
  const res = await issue(merchant.keys.sk_test, mandateBody(person, captureId, extra));
  expect(res.status, res.text).toBe(201);
  return { merchant, person, mandate: res.body as Record<string, any> };
}

/** A transaction-sink request in which mandate `mandateId` stands in for `person` (spec 4.4 rule 5): a login with a fresh service_hash. */
export function standInRequest(person: Person, mandateId: string, extra: Record<string, unknown> = {}) {
  return {
    action: "ACTION_LOGIN",
    service_hash: `svc:${crypto.randomUUID()}`,
    user_id: person.subject_ref,
    mandate_id: mandateId,
    ...extra,
  };
}

export function consume(key: string, body: unknown, options: { idempotencyKey?: string | null; now?: Date; locale?: string } = {}) {
  const headers: Record<string, string> = { ...replayHeaders(options.now) };
  if (options.idempotencyKey !== null) headers["idempotency-key"] = options.idempotencyKey ?? `idem-${crypto.randomUUID()}`;
  if (options.locale) headers["accept-language"] = options.locale;
  return call("mandate-consume", { key, body, headers, now: options.now });
}

export function check(key: string, body: unknown, options: { now?: Date } = {}) {
  return call("mandate-check", { key, body, headers: replayHeaders(options.now), now: options.now });
}
