/**
 * The hosted screen's wire contract: what its JSON endpoints (functions/hosted-capture/api.ts) answer
 * and take, as both sides read it. The server builds its answers to these types
 * (shared/sessions/screen.ts, outcomes.ts, complete.ts) and the page (client/pages/session.ts,
 * client/screen/modes.ts) reads them, so a field renamed on one side fails the other's compile.
 * It imports nothing: the browser bundle takes it whole.
 */

/**
 * What a merchant's hosted session asks of the person (hosted-session-create's `action`;
 * docs/decisions.md, "Hosted sessions"): `enroll` (consent, then enrolment), `login` (identify the
 * person, then the sink's ACTION_LOGIN; also the owner's sign-in at the MCP authorization endpoint,
 * shared/agents/sign-in.ts), `authorize` (a payment: identify, then ACTION_PAYMENT for amount_cents
 * in currency) and `sign` (identify, then ACTION_SIGN).
 */
/**
 * The reading's length, which the screen's words name (the console's preview words them alike):
 * free reading 20 s (docs/presence-descriptor.md allows 5 to 30); paced 30 s, which the paced checks need.
 */
export const FREE_SECONDS = 20;
export const PACED_SECONDS = 30;

export const sessionActions = ["enroll", "login", "authorize", "sign"] as const;

/**
 * The function API's session actions: a merchant's, or `verify`, the session of an agent
 * verification card (shared/agents/verifications.ts: identify the person, then the sink's
 * ACTION_LOGIN), which only the service opens.
 */
export const allSessionActions = [...sessionActions, "verify"] as const;
export type SessionAction = (typeof allSessionActions)[number];

/** The modes of a /v1 session (resource API 4.4; docs/resource-api.md#sessions); each is the session's action. */
export const sessionModes = ["claim", "recognise", "attribute", "mandate"] as const;
export type SessionMode = (typeof sessionModes)[number];

/** Every action a hosted session can have, so every one the screen may be booted with. */
export const screenActions = [...allSessionActions, ...sessionModes] as const;
export type ScreenAction = (typeof screenActions)[number];

/** A hosted session's states: open, opened (its token exchanged), then completed, failed, cancelled or expired. */
export const sessionStates = ["open", "opened", "completed", "failed", "cancelled", "expired"] as const;
export type SessionState = (typeof sessionStates)[number];

/** Why the person ended the screen without a capture (`POST /cancel`'s `reason`). */
export const cancelReasons = ["person_cancelled", "camera_unavailable", "permission_denied"] as const;
export type CancelReason = (typeof cancelReasons)[number];

/** The screen's page, below the hosted-capture function's mount; what follows `#` is the fragment below. */
export const SCREEN_PAGE_PATH = "/session";

/**
 * The screen URL's fragment, which browsers never send to a server nor put in a Referer: a session
 * token as it is (or after `token=`), or a handoff's code after `handoff=`.
 */
export const HANDOFF_FRAGMENT = "handoff=";
export const TOKEN_FRAGMENT = "token=";

/** An agent verification card's terms (action `verify`): who asks and why (a type, not an interface, so it fits the document's open record). */
export type ScreenCard = {
  verification_id: string;
  purpose: string | null;
  agent_name: string | null;
  requested_by: "owner" | "agent";
};

/**
 * A `mandate` session's terms as the merchant sent them (`POST /v1/sessions`' `mandate`, validated
 * there): what the screen words for the person before the capture that grants them.
 */
export type ScreenMandateTerms = {
  granted_to: string;
  agent_display_name?: string;
  scope: string[];
  constraints?: { merchant_allowlist?: string[]; category_allowlist?: string[]; country_allowlist?: string[] };
  ceiling?: { amount?: number; currency?: string; count?: number; period: "day" | "week" | "month" | "lifetime" };
  until: string;
  step_up_of?: string;
};

/** A /v1 session's `branding` (every field optional): the screen shows all but `domain`, where the url opens. */
export type ScreenBranding = {
  logo_url?: string;
  accent?: string;
  domain?: string;
  headline?: string;
  footer_note?: string;
};

/** A /v1 session's mode and its terms: what the screen asks, and where it sends the person after. */
export interface ScreenModeTerms {
  name: SessionMode;
  attribute: string | null;
  mandate: ScreenMandateTerms | null;
  branding: ScreenBranding | null;
  locale: string | null;
  return_url: string;
  cancel_url: string;
}

/**
 * What the screen's capture proves beyond the face (D-428): `face_voice`, the reading aloud under
 * the screen's light; or `face`, the face alone under the light, no microphone and nothing said:
 * the capture level a step-up needs (spec 4.7 rule 8), asked by a `mandate` session whose terms
 * step up (`step_up_of`) and by nothing else. The boot says which (`presence`), the completion
 * judges the capture by the same rule.
 */
export const capturePresences = ["face_voice", "face"] as const;
export type CapturePresence = (typeof capturePresences)[number];

export function capturePresenceOf(action: string, mandate: { step_up_of?: unknown } | null | undefined): CapturePresence {
  return action === "mandate" && typeof mandate?.step_up_of === "string" ? "face" : "face_voice";
}

/**
 * What the person's passkey does for a capture of `action`: register their first one (enrolments:
 * `enroll`, `claim`, unless their device holds one already: D-641) or sign with one of theirs
 * (every other action).
 */
export function passkeyCeremonyOf(action: ScreenAction): "register" | "assert" {
  return action === "enroll" || action === "claim" ? "register" : "assert";
}

/**
 * The passkey ceremony the boot serves for the session's capture (live mode; docs/devices.md,
 * "Registration options"): the options of navigator.credentials.create or .get as the service
 * issued them (relying party, user handle, algorithms, residentKey and userVerification required),
 * all but the challenge, which the page derives once the capture is made:
 * assertionChallenge(capture_nonce, descriptorDigest(descriptor)) (shared/contracts/device.ts).
 */
export type ScreenPasskey =
  | {
      ceremony: "register";
      /** PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 3) without its challenge. */
      options: { rp: { id?: string; name: string }; user: { id: string; name: string; displayName: string }; [field: string]: unknown };
      /**
       * PublicKeyCredentialRequestOptionsJSON without its challenge, for a passkey the person may
       * hold already (made at another merchant): tried first, registering only when the device has
       * none for the service (docs/decisions.md, D-641).
       */
      existing: { rpId?: string; [field: string]: unknown };
    }
  | {
      ceremony: "assert";
      /** PublicKeyCredentialRequestOptionsJSON without its challenge. */
      options: { rpId?: string; [field: string]: unknown };
    };

/** What `POST /boot` answers (docs/functions.md#hosted-capture). */
export interface ScreenBoot {
  session_id: string;
  merchant_id: string;
  environment: "test" | "live";
  action: ScreenAction;
  external_txn_ref: string | null;
  amount_cents: number | null;
  currency: string | null;
  /** The name shown: the session's brand, else the published capture theme's, else the merchant's. */
  display_name: string;
  expires_at: string;
  /** The screen's locale (a /v1 session's own, when set); `locales` those the service speaks. */
  locale: string;
  locales: string[];
  /** The consent an enrolment asks (`enroll`, `claim`), else null. */
  consent: { version: string; retention_days: number } | null;
  card: ScreenCard | null;
  capture_nonce: string;
  /** What the capture proves beyond the face: `face` for a step-up's grant (no microphone, nothing read aloud), else `face_voice`. */
  presence: CapturePresence;
  /** The passkey ceremony of the capture in live mode; null in the sandbox, where none is asked. */
  passkey: ScreenPasskey | null;
  /**
   * The merchant page that opened the screen in a popup (its origin, as the merchant's server named
   * it): the screen posts the session's end to it alone (SESSION_ENDED_MESSAGE; D-643). Null otherwise.
   */
  opener_origin: string | null;
  screen_token: string;
  /** The merchant's capture theme (merchant-theme-get's answer). */
  theme: { customized: boolean; theme: Record<string, string | number> };
  /** Only for a /v1 session. */
  mode?: ScreenModeTerms;
}

/** What `POST /complete` and `POST /cancel` answer: how the session ended, with what to tell the person. */
export interface SessionEnded {
  session_id: string;
  state: SessionState;
  action: string;
  ended_at: string;
  outcome: { approved: boolean; reason: string | null; user_message: string; receipt_code: string | null };
  /** A /v1 session's way back: return_url (cancel_url after a cancel) with session_id and status. */
  return_to?: string;
}

/** A handoff's state as `POST /handoff/status` answers it, as the screen reads it. */
export interface HandoffStatus {
  handoff_id: string;
  state: "pending" | "claimed" | "expired" | "replaced";
}

/** A handoff as `POST /handoff` answers it: also the phone's URL and that URL as a QR code (SVG). */
export interface ScreenHandoff extends HandoffStatus {
  url: string;
  qr_svg: string;
}

/**
 * The `type` of the message a screen opened in a popup posts to its opener's origin when the session
 * ends (D-643): `{type, session_id, state, approved, reason}`. A signal, not a proof: the merchant's
 * server reads the result with its key (hosted-session-get).
 */
export const SESSION_ENDED_MESSAGE = "hauth.session.ended";
