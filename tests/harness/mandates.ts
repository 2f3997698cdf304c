import * as v from "valibot";
import { expect } from "vitest";
import { grantTermsOf } from "../../shared/mandates/issue";
import { issueInputOf, mandateTermsSchema } from "../../shared/mandates/terms";
import { passport } from "./documents";
import { merchantFactory } from "./factories";
import { call, replayHeaders } from "./http";
import { enrollStranger, transact } from "./identity";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;
type Person = Awaited<ReturnType<typeof enrollStranger>>;

/** The terms each grant capture of this run showed, by capture id: mandateBody asks for exactly those. */
const shownTerms = new Map<string, Record<string, unknown>>();

/**
 * mandate-issue's terms for `person` (the body without the proof): a fresh agent, a 700 USD
 * lifetime purchase ceiling, one day long; `extra` overrides any field.
 */
export function mandateTerms(person: Pick<Person, "subject_ref">, extra: Record<string, unknown> = {}) {
  return {
    granted_by: person.subject_ref,
    granted_to: `agent_${crypto.randomUUID()}`,
    granted_to_kind: "agent",
    scopes: ["purchase"],
    ceiling: { kind: "amount", amount: 700, currency: "USD", period: "lifetime" },
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    ...extra,
  } as Record<string, unknown>;
}

/**
 * A fresh capture of `person` through the transaction sink (with a valid sandbox passport when
 * `document`): a login, which proves presence and grants nothing (a disclosure's attestation, a
 * document put on record).
 */
export async function presenceCapture(
  merchant: Merchant,
  person: Pick<Person, "capture" | "subject_ref" | "face">,
  options: { document?: boolean; at?: Date; dateOfBirth?: string; grant?: Record<string, unknown> } = {},
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
      ...(options.grant ? { grant: options.grant } : {}),
    },
    { now: options.at },
  );
  expect(res.status, res.text).toBe(200);
  return res.body.transaction_id as string;
}

/**
 * A fresh grant capture of `person` (a login through the sink carrying `grant`: the terms the
 * person is shown, mandateTerms with `options.terms`): its transaction_id is mandate-issue's proof
 * for exactly those terms, once; mandateBody(person, id) asks for them.
 */
export async function proofCapture(
  merchant: Merchant,
  person: Pick<Person, "capture" | "subject_ref" | "face">,
  options: { document?: boolean; at?: Date; dateOfBirth?: string; terms?: Record<string, unknown> } = {},
) {
  const { granted_by: _, ...terms } = mandateTerms(person, options.terms);
  const id = await presenceCapture(merchant, person, { ...options, grant: terms });
  shownTerms.set(id, terms);
  return id;
}

/** A mandate-issue body for `person`, proven by `captureId`: the terms that capture showed (else fresh ones), `extra` overriding. */
export function mandateBody(
  person: Pick<Person, "subject_ref">,
  captureId: string,
  extra: Record<string, unknown> = {},
): Record<string, any> {
  return { ...mandateTerms(person, shownTerms.get(captureId)), ...extra, proof: { capture_id: captureId } };
}

/**
 * `body` (a `POST /v1/mandates` body, in the resource API's names) with a fresh proof: a grant
 * capture of its terms, as the person would make on being shown them; for terms no grant could
 * have (mandate-issue's rules refuse them before any proof is read), a plain login.
 */
export async function withGrantProof(
  merchant: Merchant,
  person: Pick<Person, "capture" | "subject_ref" | "face">,
  body: Record<string, unknown>,
  options: { at?: Date } = {},
): Promise<Record<string, any>> {
  const { granted_by, proof: _, ...terms } = body;
  const grant = grantableTerms(terms, String(granted_by), options.at ?? new Date());
  const captureId = await presenceCapture(merchant, person, { at: options.at, ...(grant && { grant }) });
  return { ...body, proof: { capture_id: captureId } };
}

/** Resource-API terms in mandate-issue's names, as the sink's `grant` takes them, or null when the rules refuse them. */
export function grantableTerms(terms: Record<string, unknown>, grantedBy: string, now: Date) {
  const parsed = v.safeParse(mandateTermsSchema, terms);
  if (!parsed.success) return null;
  const { granted_by: _, proof: __, ...grant } = issueInputOf(parsed.output, grantedBy, { capture_id: crypto.randomUUID() });
  try {
    grantTermsOf(grant, now);
  } catch {
    return null;
  }
  return grant;
}

export function issue(key: string, body: unknown, options: { now?: Date; headers?: Record<string, string> } = {}) {
  return call("mandate-issue", { key, body, headers: { ...replayHeaders(options.now), ...options.headers }, now: options.now });
}

/** A merchant, a person with a document on record, and an issued mandate (amount 700 USD lifetime by default). */
export async function mandateFixture(extra: Record<string, unknown> = {}) {
  const merchant = await merchantFactory();
  const person = await enrollStranger(merchant.keys.pk_test);
  const captureId = await proofCapture(merchant, person, { document: true, terms: extra });
  const res = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
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
