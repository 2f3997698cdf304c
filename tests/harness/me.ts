/**
 * The person's own page over HTTP (functions/me): a browser as a cookie jar and a client address,
 * the sign-in by presence on the hosted screen (boot and complete with simulator captures), and the
 * calls a signed-in page makes; a person with a passkey and the page's passkey ceremony (options, the
 * software authenticator's assertion, the start).
 */
import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { type SoftwareCredential, serviceRelyingParty } from "./authenticator";
import { seedDevice } from "./devices";
import { testDb } from "./factories";
import { type CallOptions, type CallResult, call, freshIp, replayHeaders } from "./http";
import { enrollStranger } from "./identity";
import { boot, screenCall } from "./sessions";

type Person = { capture(options: { nonce?: string; light?: boolean; at?: Date }): { descriptor: unknown; nonce: string } };

/** A browser: its cookies (name → value) and its address, and the CSRF token its page holds once signed in. */
export class Browser {
  readonly cookies = new Map<string, string>();
  csrf = "";

  /** A browser at its own address, or at `from` (persons behind one address: a household, an office). */
  constructor(readonly from = freshIp()) {}

  /** The function whose pages this browser calls (the console's harness sets its own). */
  protected readonly mount: string = "me";

  /** A call to /functions/v1/<mount>/<route> with this browser's cookies and address; Set-Cookie read back. */
  async call(route: string, options: Omit<CallOptions, "from"> = {}): Promise<CallResult> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const headers: Record<string, string> = { ...(cookie ? { cookie } : {}), ...options.headers };
    const result = await call(`${this.mount}${route}`, { ...options, headers, from: this.from });
    for (const line of result.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split("; ");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      if (attributes.includes("Max-Age=0")) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return result;
  }

  /** A state-changing call, with the CSRF token of the page. */
  post(route: string, body: unknown, options: Omit<CallOptions, "from" | "body"> = {}) {
    return this.call(route, { ...options, body, headers: { "x-csrf-token": this.csrf, ...options.headers } });
  }
}

/** The person on the capture screen: boot with the session token of the URL, complete with their capture. */
export async function proveOnScreen(url: string, person: Person, now?: Date) {
  const booted = await boot(new URL(url).hash.slice(1), { now });
  expect(booted.status, booted.text).toBe(200);
  const { descriptor } = person.capture({ nonce: booted.body.capture_nonce, light: true, at: now });
  return screenCall("complete", booted.body.screen_token, { capture_nonce: booted.body.capture_nonce, face_template: descriptor }, { now });
}

/** Signs `person` in from `browser` through merchant `merchantId`'s link: the finish's answer. */
export async function signIn(browser: Browser, merchantId: string, person: Person, now?: Date) {
  const started = await browser.call("/sign-in", { body: { merchant_id: merchantId, environment: "test" }, now });
  expect(started.status, started.text).toBe(201);
  const done = await proveOnScreen(started.body.url, person, now);
  expect(done.body, done.text).toMatchObject({ state: "completed", outcome: { approved: true } });
  const finished = await browser.call("/sign-in/finish", { body: { session_id: started.body.session_id }, now });
  expect(finished.status, finished.text).toBe(200);
  browser.csrf = finished.body.csrf_token;
  return finished;
}

/** Whether `merchant`'s face-identify finds `person` by a fresh capture of their face (the merchant's next call after an erasure). */
export async function identifies(merchant: { keys: { pk_test: string } }, person: Person): Promise<boolean> {
  const shot = person.capture({});
  const res = await call("face-identify", {
    key: merchant.keys.pk_test,
    body: { capture_nonce: shot.nonce, face_template: shot.descriptor },
    headers: replayHeaders(),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.matched as boolean;
}

/** A user handle as the service issues one with a registration's options (16 random bytes, base64url). */
export const newUserHandle = () => randomBytes(16).toString("base64url");

/** A person enrolled at `merchant` with a passkey registered under a user handle the service issued. */
export async function personWithPasskey(merchant: { merchant_id: string; keys: { pk_test: string } }, face?: number[]) {
  const person = await enrollStranger(merchant.keys.pk_test, face);
  const [{ identity_id }] = await testDb()`select identity_id from private.subject_refs where subject_ref = ${person.subject_ref}`;
  const userHandle = newUserHandle();
  const { credential, device } = await seedDevice(merchant.merchant_id, "test", identity_id, { userHandle });
  return { person, identityId: identity_id as string, userHandle, credential, device };
}

/** How the software authenticator's assertion differs from a good one, and the request clock. */
export interface AssertionKnobs {
  userHandle?: string | null;
  userVerified?: boolean;
  now?: Date;
}

/** The page's passkey ceremony from `browser`: options, the authenticator's assertion over their challenge. */
export async function assertWith(browser: Browser, credential: SoftwareCredential, knobs: AssertionKnobs = {}) {
  const options = await browser.call("/passkey/options", { body: { environment: "test" }, now: knobs.now });
  expect(options.status, options.text).toBe(200);
  const rp = serviceRelyingParty();
  expect(options.body.options).toMatchObject({ rpId: rp.id, userVerification: "required", allowCredentials: [] });
  const challenge = options.body.options.challenge as string;
  const assertion = credential.assert(challenge, rp.origins[0], {
    rpId: rp.id,
    userVerified: knobs.userVerified,
    ...(knobs.userHandle ? { userHandle: knobs.userHandle } : {}),
  });
  return { challenge, assertion };
}

/** The passkey sign-in's start: the assertion sent; its answer (the capture screen, or the refusal). */
export async function passkeyStart(browser: Browser, credential: SoftwareCredential, knobs: AssertionKnobs = {}) {
  const { challenge, assertion } = await assertWith(browser, credential, knobs);
  return browser.call("/passkey/sign-in", { body: { environment: "test", challenge, assertion }, now: knobs.now });
}

/**
 * What the database still holds that identifies the person (D-470), table by table, as counts: at
 * `merchantId` (its captures with personal data, app sessions, aliases, consents, mandates and
 * disclosed documents) or at every merchant without it, and the identity's own (template,
 * documents, baseline, not marked erased, the page's sessions, devices) whatever the scope. Every
 * count is 0 once the person erased themselves there and no consent of theirs stands anywhere.
 * What stays by design is not counted: the consent ledger, receipts and captures' verdicts, the
 * revoked mandates as records, the merchants' pseudonyms (D-470: they name no one).
 */
export async function identifyingRows(identityId: string, merchantId?: string) {
  const db = testDb();
  const at = merchantId ? db`and merchant_id = ${merchantId}::uuid` : db``;
  const count = async (query: Promise<{ n: number }[]>) => (await query)[0].n;
  return {
    face_templates: await count(db`select count(*)::int as n from private.face_templates where identity_id = ${identityId}`),
    identity_documents: await count(db`select count(*)::int as n from private.identity_documents where identity_id = ${identityId}`),
    baseline: await count(db`select count(*)::int as n from private.identities where id = ${identityId} and baseline is not null`),
    not_erased: await count(db`select count(*)::int as n from private.identities where id = ${identityId} and erased_at is null`),
    person_sessions: await count(
      db`select count(*)::int as n from private.person_sessions where identity_id = ${identityId} and ended_at is null`,
    ),
    devices: await count(
      db`select count(*)::int as n from private.device_credentials where identity_id = ${identityId} and revoked_at is null`,
    ),
    captures_with_personal_data: await count(
      db`select count(*)::int as n from private.captures where identity_id = ${identityId} ${at}
        and (face_similarity is not null or amount_minor is not null or currency is not null or liveness_reason is not null
             or personal_data_erased_at is null)`,
    ),
    sessions: await count(
      db`select count(*)::int as n from private.sessions where identity_id = ${identityId} ${at} and revoked_at is null`,
    ),
    aliases: await count(db`select count(*)::int as n from private.aliases where identity_id = ${identityId} ${at}`),
    consents: await count(
      db`select count(*)::int as n from private.consents where identity_id = ${identityId} ${at} and revoked_at is null`,
    ),
    mandates: await count(
      db`select count(*)::int as n from private.mandates where granted_by = ${identityId} ${at} and status <> 'revoked'`,
    ),
    disclosed_documents: await count(
      db`select count(*)::int as n from private.disclosed_documents d join private.consent_ledger l on l.id = d.disclosure_id
        where l.identity_id = ${identityId} ${merchantId ? db`and l.merchant_id = ${merchantId}::uuid` : db``}`,
    ),
  };
}

/** `identifyingRows` of a person erased in its scope: every count 0. */
export const NOTHING_IDENTIFYING = {
  face_templates: 0,
  identity_documents: 0,
  baseline: 0,
  not_erased: 0,
  person_sessions: 0,
  devices: 0,
  captures_with_personal_data: 0,
  sessions: 0,
  aliases: 0,
  consents: 0,
  mandates: 0,
  disclosed_documents: 0,
} satisfies Awaited<ReturnType<typeof identifyingRows>>;
