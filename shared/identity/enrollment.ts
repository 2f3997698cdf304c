/**
 * process-biovital-enrollment (spec 4.3): creates the identity from a live capture, or recognises
 * an already-enrolled face, and mints the device's first-party session. Consent is checked before
 * any biometric data is looked at.
 */
import * as v from "valibot";
import {
  deviceAssertionField,
  deviceRegistrationField,
  type EnrolmentDevice,
  type EnrolmentOnDevice,
  enrolmentDevice,
  unauthorizedDevice,
} from "../devices/capture";
import type { RelyingParty } from "../devices/ceremony";
import { baselineFromResult, type PresenceDescriptor, type PresenceResult } from "../engine";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError, type ErrorCode } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { coded, jsonObject, requiredAs } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import type { KeySet } from "../lib/signing";
import { FACE_COSINE_AT_GATE, sameFace } from "./face-match";
import { descriptorFrom, judge } from "./presence";
import type { EnrollParams } from "./rpc";

/** An enrolment failing at one of its stages (logged; nothing written). */
export const enrollmentFailureCodes = [
  "IDENTITY_CREATE_FAILED",
  "TEMPLATE_STORE_FAILED",
  "SESSION_MINT_FAILED",
] as const satisfies readonly ErrorCode[];

import type { ForcedScenario } from "./scenario";
import { type MintedSession, mintSession } from "./sessions";
import { subjectRef } from "./subject-ref";
import { bestMatch, type Templates } from "./template-store";

/** The version of the consent text the person accepted, and how many days it lets biometric data be kept. */
export const consentVersion = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(64));
export const retentionDays = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650));

/**
 * The body. Precedence of its codes: consent missing, not an object, without its `version` or
 * `retention_days` (`{}` included), or `accepted: false` is `403 CONSENT_REQUIRED`; no face_template
 * `422 FACE_TEMPLATE_REQUIRED`; anything else (a consent field present but malformed) `400 INVALID_INPUT`.
 */
export const enrollmentSchema = v.pipe(
  jsonObject,
  v.strictObject({
    consent: requiredAs(
      "CONSENT_REQUIRED",
      v.strictObject(
        {
          accepted: v.optional(v.literal(true, coded("CONSENT_REQUIRED"))),
          version: requiredAs("CONSENT_REQUIRED", consentVersion),
          retention_days: requiredAs("CONSENT_REQUIRED", retentionDays),
        },
        coded("CONSENT_REQUIRED"),
      ),
    ),
    face_template: requiredAs("FACE_TEMPLATE_REQUIRED", v.unknown()),
    capture_nonce: v.pipe(v.string(), v.minLength(8), v.maxLength(128)),
    /** A new person's first passkey, registered over this capture (live mode: shared/devices/capture.ts). */
    device_registration: deviceRegistrationField,
    /** A known person's passkey, asserted over this capture (live mode). */
    device_assertion: deviceAssertionField,
  }),
);

type EnrollmentBody = v.InferOutput<typeof enrollmentSchema>;

/** What enrollment needs besides the request: the templates and the keys for pseudonyms and sessions. */
export interface EnrollmentKeys {
  templates: Templates;
  subjectRefSecret: string;
  /** The signing keys, read when the session is minted (unusable keys are `500 SESSION_MINT_FAILED`). */
  signing: () => Promise<KeySet>;
}

interface Enrollment {
  subject_ref: string;
  session_token: string;
  session_token_hash: string;
  consent: { version: string; retention_days: number };
  device_binding: EnrolmentDevice["device"]["device_binding"];
}

/** A concurrent enrollment of the same face is resolved by searching again; this bounds the retries. */
const ENROLL_ATTEMPTS = 3;

/** Who an enrolment attempt enrols: the identity (new or recognised) and the merchant's pseudonym of it. */
export interface Enrollee {
  identityId: string;
  subjectRef: string;
}

/**
 * Enrols a live descriptor: recognises the face among this environment's protected templates, or
 * mints a new user_id; then `write` (one RPC: identity_enroll, or an act that enrols within its own
 * transaction, such as identity_claim) writes identity, template, consent, subject_ref and session.
 * A concurrent enrolment of the same face is searched again. The template store being unreachable
 * is `500 TEMPLATE_STORE_FAILED`; any other failure of the write is `500 IDENTITY_CREATE_FAILED`
 * unless the database named the stage (or the act's own refusal).
 */
export async function enrollLive<T>(
  deps: Deps,
  keys: EnrollmentKeys,
  tenant: Tenant,
  live: {
    descriptor: PresenceDescriptor;
    judgement: PresenceResult;
    consent: Enrollment["consent"];
    presentedSessionHash?: string;
    /** The device's answers over the capture (shared/devices/capture.ts#enrolmentDevice). */
    device: Omit<EnrolmentOnDevice, "challenge">;
  },
  write: (params: EnrollParams, enrollee: Enrollee, session: MintedSession, device: EnrolmentDevice["device"]) => Promise<T>,
): Promise<T> {
  const embedding = keys.templates.protector.protect(live.descriptor.face.embedding);
  // The device is judged once (its challenge is single use), for the person the first search found.
  let proven: { existing: boolean; device: EnrolmentDevice } | undefined;
  for (let attempt = 1; ; attempt++) {
    const match = await bestMatch(keys.templates, tenant.environment, embedding).catch(storeFailure);
    const existing = match !== null && sameFace(match.similarity);
    const identityId = existing ? match.identity_id : crypto.randomUUID();
    proven ??= {
      existing,
      device: await enrolmentDevice(deps, tenant, existing ? identityId : null, {
        ...live.device,
        challenge: live.descriptor.capture_nonce,
      }),
    };
    // A racing enrolment stored this face meanwhile: a device judged for a new person is then one of a
    // known person. A capture no device signed (the sandbox's) is judged the same either way, so the
    // race ends as it did before devices: the claim's 409, the enrolment's existing person.
    if (proven.existing !== existing && proven.device.device.device_binding !== "none") throw unauthorizedDevice("credential_unknown");
    const { credential, device } = proven.device;
    const ref = await subjectRef(keys.subjectRefSecret, identityId, tenant.merchantId);
    const session = await mintSession(keys.signing, identityId, tenant, deps.now);
    try {
      const params: EnrollParams = {
        environment: tenant.environment,
        merchant_id: tenant.merchantId,
        now: deps.now.toISOString(),
        capture_nonce: live.descriptor.capture_nonce,
        identity_id: identityId,
        existing,
        subject_ref: ref,
        key_id: keys.templates.protector.keyId,
        embedding,
        code: keys.templates.protector.code(embedding),
        match_threshold: FACE_COSINE_AT_GATE,
        consent: live.consent,
        session: { token_hash: session.tokenHash, expires_at: session.expiresAt.toISOString() },
        baseline: baselineFromResult(live.judgement),
        ...(live.presentedSessionHash ? { presented_session_hash: live.presentedSessionHash } : {}),
        ...(credential ? { device: credential } : {}),
      };
      return await write(params, { identityId, subjectRef: ref }, session, device);
    } catch (error) {
      if (error instanceof ApiError && error.code === "ENROLLMENT_RACE" && attempt < ENROLL_ATTEMPTS) continue;
      storeFailure(error);
    }
  }
}

/**
 * process-biovital-enrollment's act: judges the capture (`403 BIOMETRIC_LIVENESS_FAILED`), then
 * enrols it. `presentedSessionToken` is the device's current session, if any (a session already
 * present is `409 SESSION_PRESENT`).
 */
export async function enrollPerson(
  deps: Deps,
  keys: EnrollmentKeys,
  tenant: Tenant,
  body: EnrollmentBody,
  options: { scenario: ForcedScenario | null; presentedSessionToken: string | undefined; rp: RelyingParty },
): Promise<Enrollment> {
  const descriptor = descriptorFrom(body.face_template, body.capture_nonce);
  const judgement = judge(descriptor, deps.now, null, options.scenario);
  if (!judgement.livenessPassed) throw new ApiError("BIOMETRIC_LIVENESS_FAILED", { reason: judgement.refusal });
  if (options.scenario === "duplicate_enroll") throw new ApiError("IDENTITY_UNREACHABLE", { reason: "duplicate_enroll" });

  const consent = { version: body.consent.version, retention_days: body.consent.retention_days };
  const presentedSessionHash = options.presentedSessionToken ? await sha256Hex(options.presentedSessionToken) : undefined;
  const device = {
    descriptor: body.face_template,
    registration: body.device_registration,
    assertion: body.device_assertion,
    rp: options.rp,
  };
  const live = { descriptor, judgement: judgement.result, consent, presentedSessionHash, device };
  return enrollLive(deps, keys, tenant, live, async (params, enrollee, session, proved) => {
    await rpc(keys.templates.store, "identity_enroll", params);
    return {
      subject_ref: enrollee.subjectRef,
      session_token: session.token,
      session_token_hash: session.tokenHash,
      consent,
      device_binding: proved.device_binding,
    };
  });
}

function storeFailure(error: unknown): never {
  if (error instanceof ApiError) {
    if (error.code === "DATABASE_UNAVAILABLE") throw new ApiError("TEMPLATE_STORE_FAILED");
    throw error;
  }
  console.error(JSON.stringify({ error: `enrollment failed: ${String(error)}` }));
  throw new ApiError("IDENTITY_CREATE_FAILED");
}
