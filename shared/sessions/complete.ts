/**
 * The hosted screen's end of a session: complete (the person's capture, judged by the same
 * operations as process-biovital-enrollment, face-identify and process-biovital-transaction, for
 * the action the session asks) and cancel. Both present the screen credential the exchange issued.
 *
 * A completion locks the session, acts and records the outcome with its `session.completed` event in
 * one transaction. A judged refusal is an outcome (`failed`); an error that judged nothing (bad input,
 * a conflict, a 5xx) rolls it all back, and the session is still opened.
 */
import * as v from "valibot";
import { cancelReasons, capturePresenceOf, type ScreenAction, type SessionAction } from "../contracts/hosted-screen";
import { deviceAssertionField } from "../devices/capture";
import type { RelyingParty } from "../devices/ceremony";
import { documentEvidenceSchema } from "../identity/documents";
import { enrollmentSchema, enrollPerson } from "../identity/enrollment";
import { identifyOnDevice } from "../identity/identify";
import { type ForcedScenario, forcedScenario } from "../identity/scenario";
import type { Templates } from "../identity/template-store";
import { type Database, databaseError, type Transaction } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { HostedSessionPrincipal } from "../kernel/principal";
import { jsonObject, parseWith, requiredAs } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import type { KeySet } from "../lib/signing";
import { grantTermsDigest, grantTermsOf, issueMandate } from "../mandates/issue";
import { issueInputOf, type MandateTerms } from "../mandates/terms";
import type { TransactionAction } from "../transactions/input";
import type { CaptureIntent } from "../transactions/rpc";
import { transact } from "../transactions/transact";
import { screenDevicePurpose } from "./consume";
import { isSessionMode } from "./mode-session";
import { refusalOf, type SessionResult, screenOutcome } from "./outcomes";
import type { SessionToComplete } from "./rpc";

/**
 * The consent the hosted screen shows before an enrolment (its text is the screen's, in each
 * locale, under this version). The completion must carry it back, accepted, exactly as offered.
 */
export const HOSTED_CONSENT = { version: "hosted-capture-1", retention_days: 365 } as const;

/** The sink's act for each action that identifies the person first (spec 4.4). */
const sinkActs = {
  login: "ACTION_LOGIN",
  authorize: "ACTION_PAYMENT",
  sign: "ACTION_SIGN",
  verify: "ACTION_LOGIN",
} as const satisfies Record<Exclude<SessionAction, "enroll">, TransactionAction>;

/** The capture of login, authorize and sign: as face-identify and the sink take it, with the sink's optional document. */
const captureSchema = v.pipe(
  jsonObject,
  v.strictObject({
    capture_nonce: v.pipe(v.string(), v.minLength(8), v.maxLength(128)),
    face_template: requiredAs("FACE_TEMPLATE_REQUIRED", v.unknown()),
    document: v.optional(documentEvidenceSchema),
    /** The passkey's assertion over the capture (live mode: docs/devices.md). */
    device_assertion: deviceAssertionField,
  }),
);

/** What the acts need besides the request: the templates and the keys for pseudonyms, sessions and receipts. */
export interface CompletionKeys {
  templates: Templates;
  subjectRefSecret: string;
  signing: () => Promise<KeySet>;
  /** The relying party the screen's passkey ceremonies are for (the service's own). */
  rp: RelyingParty;
}

/**
 * `400 INVALID_INPUT` unless the capture answers the nonce issued for this session and is a
 * descriptor version 2. The hosted screen always lights the face (docs/presence-descriptor.md
 * 11.5), so a version 1 capture did not come from the screen as served: accepting it would let a
 * modified page skip the light challenge (docs/decisions.md, D-232). Any other version is the descriptor
 * parser's to refuse.
 */
function requireScreenCapture(capture: { capture_nonce: string; face_template: unknown }, session: SessionToComplete): void {
  if (capture.capture_nonce !== session.capture_nonce) {
    throw new ApiError("INVALID_INPUT", { fields: ["capture_nonce"] }, "capture_nonce must be the nonce issued for this session.");
  }
  const template = capture.face_template;
  if (typeof template === "object" && template !== null && (template as { version?: unknown }).version === 1) {
    throw new ApiError(
      "INVALID_INPUT",
      { fields: ["face_template.version"] },
      "The hosted screen's capture must be a descriptor version 2, with the light challenge.",
    );
  }
}

/** Enrolment, with the hosted consent accepted as offered (`403 CONSENT_REQUIRED` otherwise). */
async function enroll(deps: Deps, keys: CompletionKeys, session: SessionToComplete, body: unknown, scenario: ForcedScenario | null) {
  const input = parseWith(enrollmentSchema, body);
  const { consent } = input;
  if (consent.accepted !== true || consent.version !== HOSTED_CONSENT.version || consent.retention_days !== HOSTED_CONSENT.retention_days) {
    throw new ApiError("CONSENT_REQUIRED", { consent: HOSTED_CONSENT });
  }
  requireScreenCapture(input, session);
  const tenant = { merchantId: session.merchant_id, environment: session.environment };
  const enrolled = await enrollPerson(deps, keys, tenant, input, { scenario, presentedSessionToken: undefined, rp: keys.rp });
  return {
    approved: true,
    reason: null,
    subject_ref: enrolled.subject_ref,
    consent: enrolled.consent,
    device_binding: enrolled.device_binding,
  };
}

/**
 * Who is this (face-identify, among the persons who consented with the merchant): a face the
 * merchant does not know is `not_recognised`; on a session for one person (a /v1 mode's
 * facetoken), another known face is `subject_mismatch`, and who it was stays unsaid.
 */
async function identify(deps: Deps, keys: CompletionKeys, session: SessionToComplete, body: unknown, scenario: ForcedScenario | null) {
  const input = parseWith(captureSchema, body);
  requireScreenCapture(input, session);
  const principal: HostedSessionPrincipal = {
    kind: "hosted_session",
    sessionId: session.session_id,
    merchantId: session.merchant_id,
    environment: session.environment,
  };
  const capture = { face_template: input.face_template, capture_nonce: input.capture_nonce };
  const purpose = screenDevicePurpose(session.action as ScreenAction);
  // The session's capture level, as its boot told the screen: a step-up's face is judged without the voice.
  const presence = capturePresenceOf(session.action, session.mandate_terms);
  const { answer: identified, device } = await identifyOnDevice(
    deps,
    keys,
    principal,
    { ...capture, device_assertion: input.device_assertion },
    {
      scenario,
      rp: keys.rp,
      purpose,
      modality: presence,
    },
  );
  if (!identified.matched || !identified.subject_ref || !device)
    return { approved: false, reason: "not_recognised", subject_ref: null } as const;
  if (session.facetoken !== null && identified.subject_ref !== session.facetoken) {
    return { approved: false, reason: "subject_mismatch", subject_ref: null } as const;
  }
  return { approved: true, subject_ref: identified.subject_ref, input, principal, capture, device, presence } as const;
}

/**
 * Who is this (face-identify, among the persons who consented with the merchant), then the act
 * for them through the sink with the same capture: one identification then one act, as the
 * capture rules allow. A face the merchant does not know is refused as `not_recognised`.
 */
async function identifyAndAct(
  deps: Deps,
  keys: CompletionKeys,
  session: SessionToComplete,
  action: keyof typeof sinkActs,
  body: unknown,
  scenario: ForcedScenario | null,
  intent?: CaptureIntent,
): Promise<SessionResult> {
  const identified = await identify(deps, keys, session, body, scenario);
  if (!identified.approved) return identified;
  const { input, principal, capture, device, presence } = identified;
  const subjectRef = identified.subject_ref;
  const act = {
    ...capture,
    presence,
    action: sinkActs[action],
    service_hash: session.external_txn_ref ?? `hosted_session:${session.session_id.replace(/-/g, "")}`,
    user_id: subjectRef,
    amount: session.amount_cents ?? undefined,
    currency: session.currency ?? undefined,
    document: input.document,
  };
  try {
    const approval = await transact(deps, keys, principal, act, {
      scenario,
      idempotencyKey: undefined,
      intent,
      // The identification verified the device over this capture; the act counts that signature.
      device: { verified: device },
    });
    return {
      approved: true,
      reason: null,
      subject_ref: subjectRef,
      transaction_id: approval.transaction_id,
      assurance_level: approval.assurance_level,
      receipt_id: approval.receipt_id,
      receipt_code: approval.receipt_code,
      immutability_seal: approval.immutability_seal,
      device_binding: approval.device_binding ?? null,
    };
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal) return { ...refusal, subject_ref: subjectRef };
    throw error;
  }
}

/** What an act runs with: the completion's transaction (the act is always inside it, under a savepoint). */
type ActDeps = Deps & { sql: Transaction };

/** The act of the session's action or /v1 mode (docs/decisions.md, D-125 and D-146; docs/resource-api.md#sessions). */
async function actFor(deps: ActDeps, keys: CompletionKeys, session: SessionToComplete, body: unknown, scenario: ForcedScenario | null) {
  const action = session.action as ScreenAction;
  switch (action) {
    case "enroll":
    case "claim":
      return enroll(deps, keys, session, body, scenario);
    case "recognise": {
      const identified = await identify(deps, keys, session, body, scenario);
      return identified.approved
        ? { approved: true, reason: null, subject_ref: identified.subject_ref, device_binding: identified.device.device_binding }
        : identified;
    }
    case "attribute": {
      const acted = await identifyAndAct(deps, keys, session, "login", body, scenario, { purpose: "attribute" });
      return acted.approved ? { ...acted, attribute: session.attribute, value: acted.assurance_level === "face_voice_doc" } : acted;
    }
    case "mandate":
      return grant(deps, session, await identifyAndAct(deps, keys, session, "login", body, scenario, await grantIntent(deps, session)));
    case "verify":
      // A card's screen says it authorises nothing: its capture proves presence and nothing else (no grant).
      return identifyAndAct(deps, keys, session, action, body, scenario, { purpose: "verify" });
    default:
      return identifyAndAct(deps, keys, session, action, body, scenario);
  }
}

/**
 * What a mandate session's capture is made for: the grant of the session's terms, shown on the
 * screen, so the capture proves that grant (and no other). Terms the rules refuse now (stale while
 * the screen was open) can be granted by no capture: the act is then a plain login, and the issue
 * below refuses with the rule's code, as before.
 */
async function grantIntent(deps: Deps, session: SessionToComplete): Promise<CaptureIntent> {
  if (!session.facetoken || !session.mandate_terms) return { purpose: "login" };
  try {
    const input = issueInputOf(session.mandate_terms as MandateTerms, session.facetoken, { capture_id: crypto.randomUUID() });
    return { purpose: "grant", grant_terms_digest: await grantTermsDigest(grantTermsOf(input, deps.now)) };
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return { purpose: "login" };
    throw error;
  }
}

/**
 * A mandate session's grant: the person, identified as the session's facetoken, proved presence by
 * the login act made to grant these terms (grantIntent), whose capture is mandate-issue's proof. A grant the mandate rules refuse now (the
 * terms went stale while the screen was open: `until` passed, a step-up's parent was revoked, a
 * money scope needs a document) is a refusal: `document_required`, or `mandate_refused` with the rule's code.
 */
async function grant(deps: ActDeps, session: SessionToComplete, acted: SessionResult): Promise<SessionResult> {
  if (!acted.approved || !session.facetoken || !session.mandate_terms) return acted;
  const tenant = { merchantId: session.merchant_id, environment: session.environment };
  const terms = session.mandate_terms as MandateTerms;
  try {
    const input = issueInputOf(terms, session.facetoken, { capture_id: String(acted.transaction_id) });
    // Under its own savepoint: a rule the database refuses undoes the grant alone, and the act's capture stands.
    const issued = await deps.sql.savepoint((sql) => issueMandate({ ...deps, sql }, tenant, input));
    return { ...acted, mandate_id: issued.mandate_id };
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal) return { ...acted, ...refusal };
    if (error instanceof ApiError && error.status < 500) return { ...acted, approved: false, reason: "mandate_refused", code: error.code };
    throw error;
  }
}

/**
 * A /v1 session's stored result: the person as the merchant's facetoken, the receipt of the act,
 * and the mode's answer (docs/resource-api.md#sessions); the function API's transaction id, seal
 * and uppercase code stay out.
 */
function modeSessionResult(result: SessionResult): Record<string, unknown> {
  const { subject_ref, code, transaction_id, immutability_seal, consent, ...rest } = result;
  return { ...rest, facetoken: subject_ref ?? null, ...(code && { code: code.toLowerCase() }) };
}

/**
 * Completes the session the screen credential names with the person's capture (the body of
 * process-biovital-enrollment for `enroll`, `{capture_nonce, face_template, document?}` otherwise).
 * Answers the outcome as the screen shows it (outcomes.ts#screenOutcome).
 *
 * One database transaction: begin locks the session (a second completion or a cancel meanwhile is
 * `409 COMPLETION_IN_PROGRESS`), the act runs on the same transaction (and on the template store
 * too when it is the main database, as by default), finish records the outcome and its
 * `session.completed`. An error that judged nothing rolls everything back, so the session stays
 * opened and nothing of the act remains. The act runs under a savepoint: a refusal the database
 * raised (the statement failed, so the act wrote nothing) rolls back to it and the outcome is
 * still recorded; a refusal the act judged keeps what it wrote (the sink records a refused capture).
 */
export async function completeSession(
  deps: Deps & { sql: Database },
  keys: CompletionKeys,
  screenToken: string,
  body: unknown,
  scenarioHeader?: string,
) {
  const startedAt = Date.now();
  const screenTokenHash = await sha256Hex(screenToken);
  return deps.sql.begin(async (tx) => {
    const session = await rpc(tx, "hosted_session_complete_begin", { screen_token_hash: screenTokenHash, now: deps.now.toISOString() });
    const scenario = forcedScenario(scenarioHeader, session.environment);
    let result: SessionResult;
    try {
      result = await tx.savepoint(async (sql) => {
        const actDeps = { ...deps, sql };
        const actKeys = keys.templates.store === deps.sql ? { ...keys, templates: { ...keys.templates, store: sql } } : keys;
        try {
          return await actFor(actDeps, actKeys, session, body, scenario);
        } catch (error) {
          const refusal = refusalOf(error);
          if (refusal) return refusal;
          throw error;
        }
      });
    } catch (error) {
      const refusal = refusalOf(databaseError(error));
      if (!refusal) throw databaseError(error);
      result = refusal;
    }
    const ended = await rpc(tx, "hosted_session_complete_finish", {
      session_id: session.session_id,
      // The clock at the end of the act: a session that expired meanwhile is refused, its act rolled back.
      now: new Date(deps.now.getTime() + (Date.now() - startedAt)).toISOString(),
      state: result.approved ? "completed" : "failed",
      result: isSessionMode(session.action) ? modeSessionResult(result) : result,
    });
    return { ended: screenOutcome(ended, deps.locale), merchantId: ended.merchant_id };
  });
}

/** `{reason?}`: why the person ended the screen without a capture (default `person_cancelled`). */
export const cancelSchema = v.pipe(jsonObject, v.strictObject({ reason: v.optional(v.picklist(cancelReasons), "person_cancelled") }));

/** Cancels the session the screen credential names; it ends with `session.completed` (state `cancelled`). */
export async function cancelSession(deps: Deps, screenToken: string, body: v.InferOutput<typeof cancelSchema>) {
  const ended = await rpc(deps.sql, "hosted_session_cancel", {
    screen_token_hash: await sha256Hex(screenToken),
    now: deps.now.toISOString(),
    reason: body.reason,
  });
  return { ended: screenOutcome(ended, deps.locale), merchantId: ended.merchant_id };
}
