/**
 * Hosted sessions of the resource API (resource API 2.2, 3.2, 4.4, 4.5; docs/resource-api.md#sessions):
 * the same sessions as hosted-session-create's, whose action is one of the four modes, with the
 * person's way back, a 30-minute lifetime, and a single-use `url` that opens the hosted screen.
 * The screen, its boot, completion and cancel are the function API's (screen.ts, complete.ts).
 */
import * as v from "valibot";
import { type SessionMode, sessionModes } from "../contracts/hosted-screen";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import type { PendingResponse } from "../kernel/rpc";
import { coded, metadataSchema, requiredAs } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import { issueRules } from "../mandates/issue";
import { issueInputOf, mandateTermsSchema } from "../mandates/terms";
import { screenUrl } from "./create";
import { readSession } from "./read";
import type {} from "./rpc";
import { newSessionToken } from "./tokens";

/** The modes of 4.4 are the contract's (docs/resource-api.md#sessions says what the screen does for each). */

export function isSessionMode(action: string): action is SessionMode {
  return (sessionModes as readonly string[]).includes(action);
}

/**
 * The predicates a session of mode `attribute` can answer: `document_verified`, an unexpired
 * verified identity document on record at the instant of the capture (assurance `face_voice_doc`).
 * Age predicates need a date of birth that no document evidence carries yet.
 */
export const sessionAttributes = ["document_verified"] as const;

const MAX_URL_LENGTH = 2048;

/** An absolute https URL without credentials, as the person's browser will be sent to it. */
function isReturnUrl(text: string): boolean {
  if (text.length > MAX_URL_LENGTH || !URL.canParse(text)) return false;
  const url = new URL(text);
  return url.protocol === "https:" && url.hostname !== "" && url.username === "" && url.password === "";
}

const returnUrl = v.pipe(v.string(coded("INVALID_RETURN_URL")), v.check(isReturnUrl, coded("INVALID_RETURN_URL")));
const brandingCode = coded("INVALID_BRANDING");
const HOST_NAME = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const plainText = (max: number) =>
  v.pipe(
    v.string(brandingCode),
    v.trim(),
    v.minLength(1, brandingCode),
    v.maxLength(max, brandingCode),
    v.regex(/^[^\p{Cc}]*$/u, brandingCode),
  );

/** `branding` (4.4): every field optional; the domain is a host name the merchant points at the service (CNAME). */
export const brandingSchema = v.strictObject(
  {
    logo_url: v.optional(v.pipe(v.string(brandingCode), v.check(isReturnUrl, brandingCode))),
    accent: v.optional(v.pipe(v.string(brandingCode), v.regex(/^#[0-9a-fA-F]{6}$/, brandingCode))),
    domain: v.optional(v.pipe(v.string(brandingCode), v.toLowerCase(), v.maxLength(253, brandingCode), v.regex(HOST_NAME, brandingCode))),
    headline: v.optional(plainText(80)),
    footer_note: v.optional(plainText(200)),
  },
  brandingCode,
);

/** A BCP 47 language tag (its form; the screen speaks the nearest of its locales). */
const localeSchema = v.pipe(v.string(), v.maxLength(35), v.regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/));

const facetokenSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(128));

type ModeFields = { mode: SessionMode; facetoken?: unknown; attribute?: unknown; mandate?: unknown };

/** `field` is present exactly for the modes that take it (`400 invalid_input` naming it otherwise). */
function presentFor<T extends ModeFields>(modes: readonly SessionMode[], field: "facetoken" | "attribute" | "mandate") {
  return v.forward<T, v.CheckIssue<T>, ["facetoken"]>(
    v.check(
      (body) => (body[field] !== undefined) === modes.includes(body.mode),
      `${field} is taken by ${modes.join(", ")} only, and required there`,
    ),
    [field] as never,
  );
}

/** `POST /v1/sessions` (4.4). A field a mode does not take is refused, as is one it needs and lacks (`400 invalid_input` naming it). */
export const createModeSessionSchema = v.pipe(
  v.strictObject({
    mode: v.picklist(sessionModes),
    return_url: requiredAs("INVALID_RETURN_URL", returnUrl),
    cancel_url: v.optional(returnUrl),
    facetoken: v.optional(facetokenSchema),
    attribute: v.optional(v.picklist(sessionAttributes)),
    mandate: v.optional(mandateTermsSchema),
    branding: v.optional(brandingSchema),
    locale: v.optional(localeSchema),
    metadata: v.optional(metadataSchema, {}),
  }),
  presentFor(["recognise", "attribute", "mandate"], "facetoken"),
  presentFor(["attribute"], "attribute"),
  presentFor(["mandate"], "mandate"),
  v.examples([
    { mode: "claim" as const, return_url: "https://shop.example/welcome", locale: "en", metadata: { signup: "A-1042" } },
    {
      mode: "attribute" as const,
      return_url: "https://shop.example/checkout",
      facetoken: `sub_${"4f0c".repeat(12)}`,
      attribute: "document_verified" as const,
      metadata: {},
    },
  ]),
);

export type CreateModeSession = v.InferOutput<typeof createModeSessionSchema>;

const timestamp = v.pipe(v.string(), v.isoTimestamp());
const nullable = <S extends v.GenericSchema>(schema: S) => v.nullable(schema);

/**
 * A session as /v1 answers it (2.2, 4.5; docs/resource-api.md#sessions): the document's response
 * schema, and what the tests hold every answer to. `url` only on the create's answer.
 */
export const modeSessionSchema = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^hs_[0-9a-f]{32}$/)),
  object: v.literal("session"),
  status: v.picklist(["open", "completed", "cancelled", "expired"]),
  mode: v.picklist(sessionModes),
  url: v.optional(v.pipe(v.string(), v.url())),
  return_url: v.string(),
  cancel_url: v.string(),
  facetoken: nullable(v.string()),
  attribute: nullable(v.picklist(sessionAttributes)),
  mandate: nullable(v.record(v.string(), v.unknown())),
  branding: nullable(v.record(v.string(), v.string())),
  locale: nullable(v.string()),
  metadata: v.record(v.string(), v.string()),
  created_at: timestamp,
  expires_at: timestamp,
  ended_at: nullable(timestamp),
  result: nullable(
    v.looseObject({
      approved: v.boolean(),
      reason: nullable(v.string()),
      facetoken: v.optional(nullable(v.string())),
    }),
  ),
});

/**
 * Opens a /v1 session and answers it with its url, the only time the url is shown. A mandate's
 * terms are judged now by mandate-issue's rules (the same codes), so a session never asks a person
 * to grant what cannot be granted. With an Idempotency-Key the answer is stored in the session's
 * own transaction.
 */
export async function createModeSession(
  deps: Deps,
  tenant: Tenant,
  body: CreateModeSession,
  serviceBase: string,
  storedResponse: PendingResponse | undefined,
) {
  if (body.mandate && body.facetoken) {
    issueRules(issueInputOf(body.mandate, body.facetoken, { capture_id: crypto.randomUUID() }), deps.now);
  }
  const sessionToken = newSessionToken();
  const answer = await rpc(deps.sql, "mode_session_create", {
    id: crypto.randomUUID(),
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    token_hash: await sha256Hex(sessionToken),
    mode: body.mode,
    return_url: body.return_url,
    cancel_url: body.cancel_url ?? body.return_url,
    facetoken: body.facetoken,
    attribute: body.attribute,
    mandate: body.mandate,
    branding: body.branding,
    locale: body.locale,
    metadata: body.metadata,
    now: deps.now.toISOString(),
    // The screen on the merchant's CNAME when branding names one, else on the service.
    url: screenUrl(body.branding?.domain ? `https://${body.branding.domain}` : serviceBase, sessionToken),
    ...(storedResponse && { stored_response: { record: storedResponse.record } }),
  });
  if (storedResponse) storedResponse.stored = true;
  return answer;
}

/** `GET /v1/sessions/{id}`: the session at the request clock; unknown, malformed, another tenant's or a function API session: `404 not_found`. */
export function readModeSession(deps: Deps, tenant: Tenant, id: string) {
  return readSession(deps, tenant, id, "mode_session_get");
}

/** Where the screen sends the person once the session ended: return_url (cancel_url when cancelled) with session_id and status. */
export function returnTo(ended: { session_id: string; status: string; return_url: string; cancel_url: string }): string {
  const url = new URL(ended.status === "cancelled" ? ended.cancel_url : ended.return_url);
  url.searchParams.set("session_id", ended.session_id);
  url.searchParams.set("status", ended.status);
  return url.toString();
}
