/**
 * What the hosted-session operations answer on the function API, as schemas (the OpenAPI
 * document's success bodies; the tests hold every answer to them): the session (create, get,
 * consume), the screen's boot, and a session's end (complete, cancel).
 */
import * as v from "valibot";
import { allSessionActions, capturePresences, sessionStates } from "../contracts/hosted-screen";
import { described, instant, metadataAnswer, orNull } from "../kernel/answers";
import { environments } from "../kernel/principal";

/** A hosted session as hosted-session-get shows it. */
export const hostedSessionSchema = v.object({
  session_id: described(v.pipe(v.string(), v.startsWith("hs_")), "The session's id."),
  merchant_id: described(v.string(), "The merchant it belongs to."),
  state: described(v.picklist(sessionStates), "open, opened (its token exchanged), then completed, failed, cancelled or expired."),
  action: described(v.picklist(allSessionActions), "What the person is asked to do."),
  external_txn_ref: orNull(v.string(), "The merchant's reference, when given."),
  amount_cents: orNull(v.pipe(v.number(), v.integer()), "The amount shown to the person, in the currency's minor unit."),
  currency: orNull(v.string(), "ISO 4217, with the amount."),
  brand: orNull(v.string(), "The brand name shown to the person, when given."),
  metadata: metadataAnswer,
  single_use: described(v.boolean(), "The token can be exchanged once."),
  ttl_seconds: described(v.pipe(v.number(), v.integer()), "How long the session lives."),
  created_at: instant("When it was created."),
  expires_at: instant("When it expires."),
  opened_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When its token was exchanged."),
  ended_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When it ended."),
  result: orNull(v.record(v.string(), v.unknown()), "What came of it once ended: approved, reason, receipt_code …"),
});

/** hosted-session-create's answer: the session with its token and the screen's url, shown this once. */
export const createdSessionSchema = v.object({
  ...hostedSessionSchema.entries,
  session_token: described(v.pipe(v.string(), v.startsWith("hst_")), "The single-use token (also in the url's fragment)."),
  url: described(v.pipe(v.string(), v.url()), "Opens the hosted screen, once."),
});

/** hosted-session-consume's answer: the session, with what a merchant's own screen needs to capture. */
export const consumedSessionSchema = v.object({
  ...hostedSessionSchema.entries,
  capture_nonce: described(v.string(), "The nonce the capture must carry."),
  screen_token: described(v.pipe(v.string(), v.startsWith("hsc_")), "The screen credential for complete and cancel."),
});

/** The screen's boot: the session as the person's screen needs it. */
export const bootAnswerSchema = v.object({
  session_id: v.string(),
  merchant_id: v.string(),
  environment: v.picklist(environments),
  action: described(v.string(), "What the person is asked to do (a /v1 session's act, for one with a mode)."),
  mode: v.optional(
    described(
      v.object({
        name: v.string(),
        attribute: v.nullable(v.string()),
        mandate: v.nullable(v.record(v.string(), v.unknown())),
        branding: v.nullable(v.record(v.string(), v.string())),
        locale: v.nullable(v.string()),
        return_url: v.string(),
        cancel_url: v.string(),
      }),
      "A /v1 session's mode and its terms: what the screen asks, and where it sends the person after.",
    ),
  ),
  external_txn_ref: v.nullable(v.string()),
  amount_cents: v.nullable(v.number()),
  currency: v.nullable(v.string()),
  display_name: described(v.string(), "The merchant's name, shown to the person."),
  expires_at: instant("When the session expires."),
  locale: described(v.string(), "The screen's locale."),
  locales: described(v.array(v.string()), "The locales the screen offers."),
  consent: orNull(v.record(v.string(), v.unknown()), "The consent offered, for an enrolment."),
  card: orNull(v.record(v.string(), v.unknown()), "An agent's verification card: its agent and purpose."),
  capture_nonce: described(v.string(), "The nonce the capture must carry."),
  presence: described(
    v.picklist(capturePresences),
    "What the capture proves beyond the face: `face` (the face alone under the screen's light, nothing said) for a mandate session that steps up, else `face_voice`.",
  ),
  passkey: orNull(
    v.object({
      ceremony: v.picklist(["register", "assert"]),
      options: v.record(v.string(), v.unknown()),
      existing: v.optional(
        described(
          v.record(v.string(), v.unknown()),
          "An enrolment's: the options of an assertion by a passkey the person holds already (made at another merchant), tried before registering.",
        ),
      ),
    }),
    "Live mode: the passkey ceremony of the capture, its WebAuthn options as issued but the challenge (assertionChallenge(capture_nonce, descriptor digest)).",
  ),
  opener_origin: orNull(
    v.string(),
    "The merchant page that opened the screen in a popup: the screen posts the session's end to this origin alone.",
  ),
  screen_token: described(v.pipe(v.string(), v.startsWith("hsc_")), "The screen credential for complete and cancel."),
  theme: described(v.record(v.string(), v.unknown()), "The merchant's capture theme (merchant-theme-get's answer)."),
});

/** complete's and cancel's answer: how the session ended, with what to tell the person. */
export const sessionEndedSchema = v.object({
  session_id: v.string(),
  state: v.picklist(sessionStates),
  action: described(v.string(), "What the person was asked to do (a /v1 session's act, for one with a mode)."),
  ended_at: instant("When it ended."),
  outcome: described(
    v.object({
      approved: v.boolean(),
      reason: v.nullable(v.string()),
      user_message: v.string(),
      receipt_code: v.nullable(v.string()),
    }),
    "Approved or not, why, the message for the person and the receipt's code.",
  ),
  return_to: v.optional(described(v.pipe(v.string(), v.url()), "Where the screen sends the person next (return_url or cancel_url).")),
});
