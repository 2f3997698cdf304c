/**
 * Agent verification cards (function API 2.8, 3.2, 4.14, 4.15): an owner of a merchant (with
 * their first-party session) or an agent an owner authorised (the MCP tool) asks a person to prove
 * presence. The card is a hosted session of action `verify` whose single-use token its `url`
 * carries: the hosted screen tells the person who asks and why, takes one capture, identifies the
 * person among the merchant's and records the sink's ACTION_LOGIN for them. The card's state is
 * read from that session, so it is only ever what the capture recorded: no call declares it.
 */
import * as v from "valibot";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { type MessageKey, translate } from "../kernel/i18n";
import type { AgentPrincipal, UserPrincipal } from "../kernel/principal";
import { coded, jsonObject, requiredAs } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import { canonicalUuid } from "../lib/uuid";
import { screenUrl, ttlSecondsSchema } from "../sessions/create";
import { userMessage } from "../sessions/outcomes";
import { newSessionToken } from "../sessions/tokens";
import type { AgentVerificationView } from "./rpc";

/** Who may ask for a card: an owner with their first-party session, or an agent an owner authorised. */
export type CardRequester = UserPrincipal | AgentPrincipal;

export const PURPOSE_MAX_CHARACTERS = 140;
const EXTERNAL_REF_MAX = 200;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const characters = (text: string) => [...text].length;

/** The body's fields; merchant_id is required on the function and, for an agent, defaults to its merchant. */
const requestFields = {
  external_ref: v.nullish(
    v.pipe(
      v.string(coded("INVALID_EXTERNAL_REF")),
      v.minLength(1, coded("INVALID_EXTERNAL_REF")),
      v.maxLength(EXTERNAL_REF_MAX, coded("INVALID_EXTERNAL_REF")),
      v.check((text) => !CONTROL.test(text), coded("INVALID_EXTERNAL_REF")),
    ),
  ),
  purpose: v.nullish(
    v.pipe(
      v.string(),
      v.description(`Shown to the person: why you ask. At most ${PURPOSE_MAX_CHARACTERS} characters, not blank.`),
      v.check((text) => text.trim().length > 0, coded("PURPOSE_EMPTY")),
      v.check((text) => characters(text) <= PURPOSE_MAX_CHARACTERS, coded("PURPOSE_TOO_LONG")),
      v.check((text) => !CONTROL.test(text), "must hold no control characters"),
    ),
  ),
  ttl_seconds: ttlSecondsSchema,
};
const merchantId = v.pipe(v.string(), v.minLength(1), v.maxLength(64));

/** agent-verification-request's body (spec 4.14); strict, null is absent; `400 MERCHANT_ID_REQUIRED` without merchant_id. */
export const requestSchema = v.pipe(
  jsonObject,
  v.strictObject({ merchant_id: requiredAs("MERCHANT_ID_REQUIRED", merchantId), ...requestFields }),
);

/** The MCP tool's arguments: the same fields, merchant_id optional (the agent's own merchant). */
export const toolRequestSchema = v.pipe(jsonObject, v.strictObject({ merchant_id: v.optional(merchantId), ...requestFields }));

/** agent-verification-result's query (spec 4.15). */
export const resultSchema = v.strictObject({ verification_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

type RequestBody = Omit<v.InferOutput<typeof requestSchema>, "merchant_id"> & { merchant_id?: string };

/** The owner on whose authority the requester acts, and the first-party session they presented (which must still be live). */
const ownerOf = (requester: CardRequester) =>
  requester.kind === "user"
    ? { owner_identity_id: requester.identityId, session_token_hash: requester.sessionTokenHash }
    : { owner_identity_id: requester.ownerIdentityId };

const AGENT_NAME_MAX_CHARACTERS = 200;

/** A registered client name as the screen shows it: at most 200 characters (registration bounds none); none when blank. */
function shownName(name: string | null): string | undefined {
  const shown = [...(name ?? "").trim()].slice(0, AGENT_NAME_MAX_CHARACTERS).join("");
  return shown.length > 0 ? shown : undefined;
}

/** What minting needs besides the request: the service's base URL (for `url`) and the agent's registered name. */
export interface CardContext {
  serviceBaseUrl: string;
  agentName: string | null;
}

/**
 * Mints a card (spec 4.14) for a merchant the requester owns (an agent: the merchant it was
 * authorised for), in the requester's environment; anything else is `403 NOT_MERCHANT_OWNER`,
 * an unknown merchant included. An owner's first-party session revoked or expired in the database
 * is `403 ACCESS_REVOKED`. The token is shown once, inside `url`; only its SHA-256 is kept.
 */
export async function requestVerification(deps: Deps, requester: CardRequester, body: RequestBody, context: CardContext) {
  const requested = body.merchant_id ?? (requester.kind === "agent" ? requester.merchantId : undefined);
  const merchant = requested === undefined ? null : canonicalUuid(requested);
  if (!merchant || (requester.kind === "agent" && merchant !== requester.merchantId)) throw new ApiError("NOT_MERCHANT_OWNER");
  const sessionToken = newSessionToken();
  const card = await rpc(deps.sql, "agent_verification_request", {
    id: crypto.randomUUID(),
    session_id: crypto.randomUUID(),
    merchant_id: merchant,
    environment: requester.environment,
    ...ownerOf(requester),
    ...(requester.kind === "agent" ? { agent_client_id: requester.clientId, agent_name: shownName(context.agentName) } : {}),
    external_ref: body.external_ref ?? undefined,
    purpose: body.purpose ?? undefined,
    ttl_seconds: body.ttl_seconds,
    token_hash: await sha256Hex(sessionToken),
    now: deps.now.toISOString(),
  });
  return {
    verification_id: card.verification_id,
    url: screenUrl(context.serviceBaseUrl, sessionToken),
    merchant_id: card.merchant_id,
    external_ref: card.external_ref,
    purpose: card.purpose,
    state: card.state,
    expires_at: card.expires_at,
    ttl_seconds: card.ttl_seconds,
  };
}

/** Per state: the reason (a refusal's is the capture's own), the English developer message and the person's words. */
const stateWords: Record<Exclude<AgentVerificationView["state"], "refused">, { developer: string; user: MessageKey }> = {
  pending: { developer: "The card was never opened: nobody has opened its url yet.", user: "card.pending" },
  opened: { developer: "The person opened the card and is in the capture.", user: "card.opened" },
  verified: {
    developer: "The person proved presence on the hosted screen; receipt_code verifies it (receipt-verify).",
    user: "card.verified",
  },
  expired: { developer: "The card's ttl passed before presence was proven; ask for a new card.", user: "card.expired" },
};

/**
 * A card's state (spec 4.15), always `200`: `reason`, `developer_message` and the localised
 * `user_message`; `verified` also carries `assurance_level` and `receipt_code`. A card of a merchant
 * the requester does not own (an agent: of another merchant), unknown or malformed, is `404 not_found`.
 */
export async function verificationResult(deps: Deps, requester: CardRequester, verificationId: string) {
  const id = canonicalUuid(verificationId.startsWith("av_") ? verificationId.slice(3) : verificationId);
  const card = id
    ? await rpc(deps.sql, "agent_verification_result", {
        verification_id: id,
        ...ownerOf(requester),
        environment: requester.environment,
        ...(requester.kind === "agent" ? { merchant_id: requester.merchantId } : {}),
        now: deps.now.toISOString(),
      })
    : null;
  if (!card) throw new ApiError("not_found");
  const common = {
    verification_id: card.verification_id,
    merchant_id: card.merchant_id,
    external_ref: card.external_ref,
    state: card.state,
    expires_at: card.expires_at,
  };
  if (card.state === "refused") {
    const reason = card.refusal_reason ?? "refused";
    return {
      ...common,
      reason,
      developer_message: `The capture did not prove presence (${reason}); a card takes one capture: ask for a new card.`,
      user_message: userMessage(deps.locale, "verify", { approved: false, reason }),
    };
  }
  const words = stateWords[card.state];
  return {
    ...common,
    reason: card.state,
    developer_message: words.developer,
    user_message: translate(deps.locale, words.user),
    ...(card.state === "verified" ? { assurance_level: card.assurance_level, receipt_code: card.receipt_code } : {}),
  };
}

const cardStates = ["pending", "opened", "verified", "refused", "expired"] as const;

/** agent-verification-request's answer: the card, with its url (shown once). */
export const cardAnswerSchema = v.object({
  verification_id: described(v.pipe(v.string(), v.startsWith("av_")), "The card's id."),
  url: described(v.pipe(v.string(), v.url()), "Opens the hosted screen once: send it to the person."),
  merchant_id: v.string(),
  external_ref: v.nullable(v.string()),
  purpose: described(v.nullable(v.string()), "What the person is shown, when given."),
  state: v.picklist(cardStates),
  expires_at: described(v.pipe(v.string(), v.isoTimestamp()), "When the card expires."),
  ttl_seconds: v.number(),
});

/** agent-verification-result's answer: the card's state, and once verified its receipt. */
export const cardResultSchema = v.object({
  verification_id: v.string(),
  merchant_id: v.string(),
  external_ref: v.nullable(v.string()),
  state: described(v.picklist(cardStates), "pending, opened, verified, refused or expired."),
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
  reason: v.optional(described(v.string(), "Why it is not verified (yet).")),
  developer_message: v.optional(v.string()),
  user_message: v.optional(v.string()),
  assurance_level: v.optional(v.string()),
  receipt_code: v.optional(v.string()),
  verified_at: v.optional(v.pipe(v.string(), v.isoTimestamp())),
});
