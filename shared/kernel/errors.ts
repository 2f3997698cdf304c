/**
 * The error catalogue: every API error code the service can answer with, its HTTP status and its
 * English text. Codes are spelled exactly as the specification spells them. A handler raises an
 * `ApiError`; the app factory turns it into `{error, code}` (plus any extra fields) with that status.
 */
export const errorCatalogue = {
  INVALID_INPUT: [400, "The request body or query is invalid."],
  UNSUPPORTED_VERSION: [400, "Service-Version names no version this API answers; see supported_versions."],
  INVALID_JSON: [400, "The request body is not valid JSON."],
  MERCHANT_ID_REQUIRED: [400, "merchant_id is required."],
  INVALID_SURFACE: [400, "surface must be capture or mandate."],
  SCENARIO_NOT_ALLOWED: [400, "x-service-scenario is only accepted with sandbox keys."],
  INVALID_SCENARIO: [400, "x-service-scenario is not a known scenario."],
  TIMESTAMP_REQUIRED: [400, "x-service-timestamp (epoch seconds) is required."],
  TIMESTAMP_OUT_OF_WINDOW: [400, "x-service-timestamp is more than 300 seconds away from the server clock."],
  NONCE_REQUIRED: [400, "x-service-nonce (8 to 128 characters of A-Z a-z 0-9 . _ ~ -) is required."],
  IDEMPOTENCY_KEY_INVALID: [400, "Idempotency-Key must be 8 to 200 printable characters."],
  AMOUNT_INVALID: [400, "amount must be a non-negative integer in the currency's minor unit (no floats, no strings)."],
  UNKNOWN_SCOPE: [400, "A scope is not in the closed vocabulary (see mandate-scopes)."],
  WILDCARD_SCOPE_FORBIDDEN: [400, "Scopes match exactly; wildcards are refused."],
  CONSTRAINTS_REQUIRED_FOR_SCOPE: [400, "The task scope needs constraints: at least one non-empty allowlist."],
  AMOUNT_CEILING_NOT_APPLICABLE: [400, "An amount ceiling applies only to the scopes purchase and payment."],
  AGENT_DISPLAY_NAME_EMPTY: [400, "agent_display_name, when present, must not be blank."],
  AGENT_DISPLAY_NAME_TOO_LONG: [400, "agent_display_name is at most 64 characters."],
  AGENT_DESCRIPTOR_EMPTY: [400, "agent_descriptor, when present, must not be blank."],
  AGENT_DESCRIPTOR_TOO_LONG: [400, "agent_descriptor is at most 140 characters."],
  INVALID_CEILING: [
    400,
    "The ceiling's shape does not match its kind (amount and currency for amount, count for count, both for both, neither for none).",
  ],
  EXPIRES_AT_NOT_IN_FUTURE: [400, "expires_at must be in the future: no mandate is open-ended or born expired."],
  EXPIRES_AT_TOO_FAR: [400, "expires_at is at most 365 days after issue: no mandate is open-ended."],
  STEP_UP_OF_INVALID: [400, "step_up_of is not a standing mandate of this person from this merchant."],
  LIVE_CAPTURE_REQUIRED: [400, "The descriptor is not a live capture, so it cannot be used to identify a face."],
  INVALID_ACTION: [400, "action must be one of enroll, login, authorize, sign."],
  INVALID_EXTERNAL_TXN_REF: [400, "external_txn_ref must be 8 to 128 of A-Z a-z 0-9 : . _ -."],
  INVALID_AMOUNT_CENTS: [400, "amount_cents must be a non-negative integer in the currency's minor unit, and applies only to authorize."],
  INVALID_CURRENCY: [400, "currency must be an active ISO 4217 code, and applies only to authorize."],
  AMOUNT_AND_REF_REQUIRED: [400, "authorize needs amount_cents, currency and external_txn_ref."],
  INVALID_TTL: [400, "ttl_seconds must be an integer from 60 to 900."],
  INVALID_BRAND: [400, "brand must be 1 to 80 characters, without control characters or surrounding spaces."],
  INVALID_METADATA: [400, "metadata must be an object whose values are strings."],
  METADATA_TOO_LARGE: [400, "metadata holds at most 50 keys of at most 40 characters, each value at most 500 characters."],
  PURPOSE_EMPTY: [400, "purpose, when present, must not be blank."],
  PURPOSE_TOO_LONG: [400, "purpose is at most 140 characters."],
  INVALID_EXTERNAL_REF: [400, "external_ref must be 1 to 200 characters, without control characters."],
  INVALID_RETURN_URL: [400, "return_url and cancel_url must be absolute https URLs of at most 2,048 characters, without credentials."],
  INVALID_BRANDING: [
    400,
    "branding takes logo_url (https), accent (#rrggbb), domain (a host name), headline (at most 80 characters) and footer_note (at most 200).",
  ],
  UNKNOWN_CLAIM: [400, "A requestedFields key is not in the claim catalogue (docs/functions.md, disclose-claims)."],
  DISCLOSURE_TYPE_NOT_SUPPORTED: [400, "This field cannot be disclosed with that disclosure_type (see the claim catalogue)."],
  INVALID_CIRCUIT: [400, "circuit_id or public_input does not fit the requested zk_proof field."],
  INVALID_DISCLOSURE_TTL: [400, "ttl_seconds must be an integer from 60 to 86400."],
  INVALID_HANDOFF_TTL: [400, "ttl_seconds must be an integer from 30 to 600."],
  API_KEY_REQUIRED: [401, "An API key is required in the x-service-api-key header."],
  INVALID_API_KEY: [401, "The API key is unknown or has been revoked."],
  INVALID_USER_TOKEN: [401, "The bearer token is not a valid, unexpired user session token."],
  INSUFFICIENT_SCOPE: [403, "The credential was not granted the scope this needs (an agent's tool, a key's management)."],
  AUTH_REQUIRED: [401, "This endpoint needs a secret key; a publishable key is not accepted here."],
  USER_TOKEN_REQUIRED: [
    401,
    "This function needs a person's first-party session token in Authorization: Bearer (agents: the MCP tool); a merchant API key is not accepted.",
  ],
  SCREEN_TOKEN_REQUIRED: [401, "The hosted screen's credential is required (Authorization: Bearer hsc_…, from boot)."],
  SCREEN_TOKEN_INVALID: [401, "The hosted screen's credential is unknown."],
  PERSON_SESSION_REQUIRED: [401, "Sign in to your own page first: this needs its session cookie."],
  PERSON_SESSION_EXPIRED: [401, "Your session on your own page has ended (idle or absolute timeout); sign in again."],
  OWNER_SESSION_REQUIRED: [401, "Sign in to the console first: this needs its session cookie."],
  OWNER_SESSION_EXPIRED: [401, "Your console session has ended (idle or absolute timeout); sign in again."],
  SIGN_IN_FAILED: [401, "The sign-in did not succeed (see reason); start it again."],
  ALLOWANCE_EXHAUSTED: [
    402,
    "This month's allowance of billed claims is used up; the operator can raise it (see allowance and resets_at).",
  ],
  CONSENT_REQUIRED: [403, "Consent (version and retention_days) is required to enrol."],
  BIOMETRIC_LIVENESS_FAILED: [403, "The capture did not prove a live person."],
  LIVENESS_REQUIRED: [403, "The proof does not show a live person at this instant; capture again (see reason)."],
  PROOF_INVALID: [403, "proof.capture_id must be a live, uncoerced capture of the granting human, at most five minutes old."],
  DOCUMENT_REQUIRED: [403, "This act needs a valid, unexpired identity document on record for the person; reason says what was wrong."],
  IDENTITY_MISMATCH: [403, "The live face belongs to someone other than user_id."],
  FACE_MATCH_BELOW_THRESHOLD: [403, "The live face does not match user_id's template closely enough (gate 0.75)."],
  COERCION_DETECTED: [403, "The capture shows signs of coercion; the act is refused."],
  UNAUTHORIZED_DEVICE: [403, "This device's session belongs to another person."],
  ACCESS_REVOKED: [403, "Access for this person has been revoked (session, consent or template)."],
  ATTESTATION_INVALID: [
    403,
    "biometric_attestation must lead to a live, uncoerced capture of the person by this merchant, at most five minutes old (its capture_id, or the registered key of the person's device); see reason.",
  ],
  CONSENT_MISSING: [403, "No consent of this person with this merchant is on record, or the consent token is unknown."],
  CONSENT_REVOKED: [403, "The consent was revoked or withdrawn, or its retention ran out."],
  CONSENT_EXPIRED: [403, "The consent token has expired; ask for a new disclosure."],
  MERCHANT_MISMATCH: [403, "merchant_id is not the merchant of this key."],
  NOT_MERCHANT_OWNER: [403, "Only an owner of the merchant may ask for an agent verification card."],
  PRESENCE_PROOF_INVALID: [
    403,
    "Erasing needs a fresh presence proof of this session: completed, approved, the same person, at most five minutes old, once (see reason).",
  ],
  CSRF_TOKEN_INVALID: [403, "x-csrf-token must be the CSRF token of this session."],
  CROSS_SITE_REQUEST: [
    403,
    "The request came from another site; the service's own pages (the person's page, the console) answer their own origin only.",
  ],
  not_found: [404, "Not found."],
  HANDOFF_CODE_INVALID: [404, "The handoff code is unknown, already used, replaced or expired."],
  DEVICE_ADDITION_INVALID: [
    404,
    "The device addition's approval code is unknown, already approved or expired; the new device can ask again.",
  ],
  FUNCTION_NOT_FOUND: [404, "No function with this name exists."],
  ROUTE_NOT_FOUND: [404, "No route matches this path."],
  METHOD_NOT_ALLOWED: [405, "This method is not allowed on this function."],
  NONCE_REUSED: [409, "x-service-nonce was already used; send a fresh nonce with every request."],
  IDEMPOTENCY_IN_FLIGHT: [409, "A request with this Idempotency-Key is still running; retry later with the same key."],
  SESSION_PRESENT: [409, "A session is already present on this device; enrollment is not needed."],
  IDENTITY_UNREACHABLE: [409, "This face belongs to an identity that cannot be reached (erased or on hold)."],
  CAPTURE_REPLAYED: [409, "This capture (capture_nonce) was already used; capture again with a fresh nonce."],
  ALREADY_CLAIMED: [409, "This person is already claimed by this merchant: facetoken is the one held; call recognitions instead."],
  ENROLLMENT_RACE: [409, "Another enrollment of this face completed at the same moment; retry."],
  AUDIT_ID_REUSED: [409, "zk_proof_audit_id was already used for another disclosure of this merchant."],
  ALIAS_TAKEN: [409, "The alias is already held by someone else."],
  CLAIM_TOKEN_INVALID: [409, "The claim token does not hold this alias."],
  KEY_INACTIVE: [409, "Only an active key can be rolled: this one is revoked, expired or already rolled."],
  ENDPOINT_DISABLED: [409, "The webhook endpoint is disabled; enable it first."],
  LAST_OWNER: [409, "The last owner of an account cannot be removed; invite another owner first."],
  ALREADY_OWNER: [409, "This person already owns the account."],
  THEME_DRAFT_CHANGED: [409, "The draft theme changed while it was being published; check it again and publish."],
  WEBHOOK_ENDPOINT_LIMIT: [409, "At most 16 active webhook endpoints per merchant and environment; disable one first."],
  SESSION_ALREADY_CONSUMED: [409, "This session token was already exchanged: a hosted session is single use."],
  SESSION_ENDED: [409, "This hosted session has already ended; see state."],
  COMPLETION_IN_PROGRESS: [409, "A completion of this hosted session is already running."],
  SIGN_IN_PENDING: [409, "The capture screen has not identified you yet; finish it, then ask again."],
  SESSION_EXPIRED: [410, "This hosted session has expired; the merchant can create a new one."],
  PAYLOAD_TOO_LARGE: [413, "The request body is too large."],
  UNSUPPORTED_MEDIA_TYPE: [415, "The request body must be application/json."],
  THEME_INVALID: [422, "The theme is not valid for its surface; see problems."],
  ASSET_INVALID: [422, "The file is not an accepted logo or font; see problem."],
  FACE_TEMPLATE_REQUIRED: [422, "face_template (the presence descriptor) is required."],
  IDEMPOTENCY_KEY_REUSED: [422, "This Idempotency-Key was used with a different request body."],
  RATE_LIMITED: [429, "Too many requests; retry after the time given in Retry-After."],
  IDENTITY_CREATE_FAILED: [500, "The identity could not be created."],
  TEMPLATE_STORE_FAILED: [500, "The protected template could not be stored."],
  SESSION_MINT_FAILED: [500, "The session could not be minted."],
  SESSION_WRITE_FAILED: [500, "The hosted session could not be stored."],
  INTERNAL_ERROR: [500, "An internal error occurred."],
  TEMPLATE_STORE_UNAVAILABLE: [503, "The template store cannot be reached; retry later."],
  SLO_BREACH_PAUSED: [503, "This function is paused by its circuit breaker after repeated failures; retry after Retry-After."],
  DATABASE_UNAVAILABLE: [503, "The database cannot be reached; retry later."],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof errorCatalogue;

/** A failure the client should see as `{error, code}` with the catalogue's status. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly extra: Record<string, unknown> = {},
    message?: string,
  ) {
    super(message ?? errorCatalogue[code][1]);
    this.status = errorCatalogue[code][0];
  }

  body(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.extra };
  }
}

/** Builds the JSON response for a catalogue code outside of a Hono context (the router, for instance). */
export function errorResponse(code: ErrorCode, init: ResponseInit = {}): Response {
  const error = new ApiError(code);
  return Response.json(error.body(), { ...init, status: error.status });
}
