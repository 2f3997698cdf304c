/**
 * A new device by re-proof (docs/devices.md, "Adding a device"; D-371): when no registered device
 * can approve (every one is lost), the person proves who they are again on the new device with a
 * live capture and the passport already on their record, and the device's passkey is registered in
 * the same ceremony. In one request: the registration over the capture's descriptor (the add_device
 * challenge is the descriptor's capture_nonce, consumed first), the face identified across the
 * environment, the capture judged live and uncoerced, the document verified by passive
 * authentication, and the credential stored only while that very document (the signed data group
 * hashes) is on the identified person's record and unexpired.
 */
import * as v from "valibot";
import { descriptorDigest } from "../contracts/device";
import type { RelyingParty } from "../devices/ceremony";
import { storeRegistration, verifyRegistration } from "../devices/registration";
import type { Deps } from "../kernel/deps";
import { ApiError, type ErrorCode } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { jsonObject } from "../kernel/validation";
import { verifyDocument } from "./document-verification";
import { documentEvidenceSchema } from "./documents";
import { FACE_MATCH_GATE } from "./face-match";
import { descriptorFrom, judge } from "./presence";
import { bestMatch, type Templates } from "./template-store";

/** device-add/passport: the add_device challenge (the descriptor's capture_nonce), the live capture, the passport's chip data, the new passkey. */
export const reproofSchema = v.pipe(
  jsonObject,
  v.strictObject({
    challenge: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/, "an issued challenge (43 characters of base64url)")),
    face_template: v.unknown(),
    document: documentEvidenceSchema,
    registration: v.record(v.string(), v.unknown()),
  }),
);

/** What a re-proof can be refused with besides its input's codes. */
export const reproofCodes = [
  "UNAUTHORIZED_DEVICE",
  "FACE_MATCH_BELOW_THRESHOLD",
  "BIOMETRIC_LIVENESS_FAILED",
  "COERCION_DETECTED",
  "DOCUMENT_REQUIRED",
] as const satisfies readonly ErrorCode[];

/**
 * Registers the new device's passkey for the person the live face and their passport on record
 * prove. Refusals, in order: the registration (`403 UNAUTHORIZED_DEVICE` with `reason`, the
 * challenge consumed whatever follows), no enrolled face at the gate (`403
 * FACE_MATCH_BELOW_THRESHOLD`), the capture (`403 BIOMETRIC_LIVENESS_FAILED`, `COERCION_DETECTED`),
 * the document's passive authentication (`403 DOCUMENT_REQUIRED` with its cause as `reason`, D-427),
 * and a document that is not on the person's record (`403 DOCUMENT_REQUIRED`, `reason:
 * document_not_on_record`).
 */
export async function reproveDevice(
  deps: Deps,
  templates: Templates,
  tenant: Tenant,
  rp: RelyingParty,
  body: v.InferOutput<typeof reproofSchema>,
) {
  const descriptor = descriptorFrom(body.face_template, body.challenge);
  const registration = await verifyRegistration(deps, tenant, {
    purpose: "add_device",
    challenge: body.challenge,
    descriptorDigest: await descriptorDigest(body.face_template),
    response: body.registration,
    rp,
  });
  if (!registration.ok) throw new ApiError("UNAUTHORIZED_DEVICE", { reason: registration.reason });

  const live = templates.protector.protect(descriptor.face.embedding);
  const match = await bestMatch(templates, tenant.environment, live);
  if (!match?.reachable || match.similarity < FACE_MATCH_GATE) throw new ApiError("FACE_MATCH_BELOW_THRESHOLD");
  const judgement = judge(descriptor, deps.now, null, null);
  if (!judgement.livenessPassed) throw new ApiError("BIOMETRIC_LIVENESS_FAILED", { reason: judgement.refusal });
  if (judgement.coercion) throw new ApiError("COERCION_DETECTED");
  const document = await verifyDocument(deps.sql, tenant.environment, body.document, deps.now);

  const stored = await storeRegistration(deps, tenant, match.identity_id, registration.registration, {
    via: "document",
    documentLds: document.lds_sha256,
  });
  if (!stored.ok) {
    if (stored.reason === "document_not_on_record") throw new ApiError("DOCUMENT_REQUIRED", { reason: stored.reason });
    throw new ApiError("UNAUTHORIZED_DEVICE", { reason: stored.reason });
  }
  return { device: stored.device };
}
