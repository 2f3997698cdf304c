/**
 * What the identity functions answer on the function API, as schemas (the OpenAPI document's
 * success bodies; the tests hold every answer to them): face-identify, enrolment and the
 * transaction sink.
 */
import * as v from "valibot";
import { deviceBindings } from "../contracts/device";
import { described, orNull } from "../kernel/answers";
import { decisionAnswerSchema } from "../mandates/answers";

/** device_binding as every answer that counted a capture carries it (docs/devices.md, "Assurance levels"). */
export const deviceBindingAnswer = described(
  v.picklist(deviceBindings),
  "What signed the capture: hardware (an attested key that cannot leave the device), synced (a passkey the platform may copy), none (no device: the sandbox, or a mandate standing in, where nobody was present; its mandate block says what signed the grant). Absent where no capture counted (no match).",
);

/** face-identify's answer: the person the merchant knows, or no one (then no similarity). */
export const identifyAnswerSchema = v.object({
  matched: described(v.boolean(), "Whether the live face is a person the merchant has enrolled."),
  subject_ref: orNull(v.string(), "The merchant's pseudonym of the person, when matched."),
  confidence: described(
    v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    "The match score when matched (calibrated so that 0.75 is the gate, D-385); 0 when not.",
  ),
  device_binding: v.optional(deviceBindingAnswer),
});

/** process-biovital-enrollment's answer. */
export const enrollmentAnswerSchema = v.object({
  success: v.literal(true),
  status: described(v.string(), "enrolled, or already_enrolled."),
  subject_ref: described(v.string(), "The merchant's pseudonym of the person."),
  session_token_hash: described(v.string(), "The SHA-256 of the first-party session token (the token itself is in its header)."),
  consent: described(v.object({ version: v.string(), retention_days: v.number() }), "The consent recorded."),
  device_binding: deviceBindingAnswer,
});

/** process-biovital-transaction's answer: the act approved, with its signed receipt. */
export const transactionAnswerSchema = v.object({
  success: v.literal(true),
  status: described(v.literal("approved"), "The act was approved (a live act's refusal is an error; a mandate's is the refusal answer)."),
  transaction_id: described(v.string(), "The act's id."),
  service_hash: described(v.string(), "What the act was about, as sent."),
  immutability_seal: described(v.string(), "The receipt's seal."),
  assurance_level: described(v.string(), "How the person was verified (mandate: a mandate stood in for them)."),
  receipt_id: described(v.string(), "The receipt's id (receipt-verify)."),
  receipt_code: described(v.string(), "The receipt's short code."),
  device_binding: v.optional(deviceBindingAnswer),
  mandate: v.optional(described(v.record(v.string(), v.unknown()), "The mandate's decision, when a mandate stood in.")),
});

/**
 * process-biovital-transaction's refusal when a mandate stood in (spec 7.2, D-425): the decision's
 * refusal as mandate-consume answers it, with `success: false` and `status: "refused"`.
 */
export const transactionRefusalSchema = v.object({
  ...decisionAnswerSchema.entries,
  success: v.literal(false),
  status: described(v.literal("refused"), "The mandate did not cover the act; nothing was recorded."),
  allowed: v.literal(false),
  reason: decisionAnswerSchema.entries.reason.wrapped,
});

/** Every 200 of the sink: an approved act, or a mandate's refusal. */
export const transactionOutcomeSchema = v.union([transactionAnswerSchema, transactionRefusalSchema]);
