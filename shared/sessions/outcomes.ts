/**
 * What a hosted session came to, as stored (`result`) and as the screen shows it. An outcome is
 * either the act's approval or a refusal with a stable machine `reason`; the screen also gets the
 * reason in the person's words (`user_message`, en / pt-BR / es).
 */
import type { ScreenAction, SessionEnded, SessionState } from "../contracts/hosted-screen";
import { documentRefusalReasons } from "../identity/documents";
import { ApiError, type ErrorCode } from "../kernel/errors";
import { type Locale, type MessageKey, translate } from "../kernel/i18n";
import { returnTo } from "./mode-session";
import type { HostedSessionView } from "./rpc";

/** The stored outcome of a session that ended (`result`). */
export interface SessionResult {
  approved: boolean;
  /** Null on approval; otherwise the stable reason (the engine's, the act's, or the screen's cancel). */
  reason: string | null;
  /** On a refused capture: the error the same act answers with on its own endpoint. */
  code?: ErrorCode;
  /** The merchant's pseudonym for the person, once identified or enrolled. */
  subject_ref?: string | null;
  [field: string]: unknown;
}

/**
 * The errors that are a judged capture's refusal, each with its reason when the error names none:
 * they end the session as `failed`. Every other error (bad input, a conflict, a 5xx) is an error of
 * the request, and the session stays opened.
 */
const refusalReasons: Partial<Record<ErrorCode, string>> = {
  BIOMETRIC_LIVENESS_FAILED: "liveness_failed",
  LIVE_CAPTURE_REQUIRED: "liveness_failed",
  COERCION_DETECTED: "coercion_detected",
  DOCUMENT_REQUIRED: "document_required",
  IDENTITY_MISMATCH: "identity_mismatch",
  FACE_MATCH_BELOW_THRESHOLD: "face_match_below_threshold",
  ACCESS_REVOKED: "access_revoked",
  IDENTITY_UNREACHABLE: "identity_unreachable",
  // A device refusal used up the session's challenge: the capture cannot count any more (docs/devices.md).
  UNAUTHORIZED_DEVICE: "unauthorized_device",
};

/** The refusal an error of the act stands for, or null when it is no refusal. */
export function refusalOf(error: unknown): SessionResult | null {
  if (!(error instanceof ApiError)) return null;
  const fallback = refusalReasons[error.code];
  if (!fallback) return null;
  const named = error.extra.reason;
  // None on record reads document_required; one presented and refused document_rejected, its cause in `document_reason` (D-427).
  if (error.code === "DOCUMENT_REQUIRED" && named === "document_missing") return { approved: false, reason: fallback, code: error.code };
  if (error.code === "DOCUMENT_REQUIRED" && documentRefusalReasons.includes(named as never)) {
    return { approved: false, reason: "document_rejected", code: error.code, document_reason: named };
  }
  return { approved: false, reason: typeof named === "string" ? named : fallback, code: error.code };
}

/** The words for each reason; reasons of one meaning share them, and any other liveness reason reads as `liveness`. */
const reasonMessages: Record<string, MessageKey> = {
  low_quality: "session.refused.low_quality",
  no_speech: "session.refused.no_speech",
  no_pulse: "session.refused.no_pulse",
  av_desync: "session.refused.av_desync",
  light_not_followed: "session.refused.light_not_followed",
  capture_stale: "session.refused.capture_stale",
  coercion_detected: "session.refused.coercion_detected",
  not_recognised: "session.refused.not_recognised",
  document_required: "session.refused.document_required",
  document_unverifiable: "session.refused.document_required",
  mandate_refused: "session.refused.mandate_refused",
  document_rejected: "session.refused.document_rejected",
  identity_mismatch: "session.refused.face_mismatch",
  face_match_below_threshold: "session.refused.face_mismatch",
  subject_mismatch: "session.refused.face_mismatch",
  unknown_user: "session.refused.face_mismatch",
  access_revoked: "session.refused.access_revoked",
  consent_revoked: "session.refused.access_revoked",
  identity_erased: "session.refused.access_revoked",
  template_revoked: "session.refused.access_revoked",
  session_revoked: "session.refused.access_revoked",
  identity_unreachable: "session.refused.identity_unreachable",
  duplicate_enroll: "session.refused.identity_unreachable",
  person_cancelled: "session.cancelled.person_cancelled",
  camera_unavailable: "session.cancelled.camera_unavailable",
  permission_denied: "session.cancelled.permission_denied",
};

/** The outcome in the person's words (the screen's `user_message`). */
export function userMessage(locale: Locale, action: ScreenAction, result: SessionResult): string {
  if (result.approved) return translate(locale, `session.approved.${action}`);
  const reason = result.reason ?? "";
  if (result.code === "UNAUTHORIZED_DEVICE") {
    // The person's own device said no (cancelled, or its biometric or PIN did not pass): trying again can help, another device need not.
    return translate(locale, reason === "user_not_verified" ? "session.refused.user_not_verified" : "session.refused.unauthorized_device");
  }
  return translate(locale, reasonMessages[reason] ?? "session.refused.liveness");
}

/**
 * What the screen shows of a session that ended (the answer of complete and cancel): its state and
 * the outcome in words. The person's pseudonym and the act's ids stay with the merchant; the
 * receipt code is the person's to keep (receipt-verify). A /v1 session also says where the screen
 * sends the person (`return_to`: the return_url, or the cancel_url after a cancel, with session_id
 * and status).
 */
export function screenOutcome(session: HostedSessionView, locale: Locale): SessionEnded {
  const result = session.result as SessionResult;
  return {
    session_id: session.session_id,
    state: session.state as SessionState,
    action: session.action,
    // Complete and cancel answer a session that ended, so it has ended_at.
    ended_at: session.ended_at as string,
    outcome: {
      approved: result.approved,
      reason: result.reason,
      user_message: userMessage(locale, session.action as ScreenAction, result),
      receipt_code: typeof result.receipt_code === "string" ? result.receipt_code : null,
    },
    ...(session.return_url !== undefined && session.cancel_url !== undefined && session.status !== undefined
      ? { return_to: returnTo({ ...session, return_url: session.return_url, cancel_url: session.cancel_url, status: session.status }) }
      : {}),
  };
}
