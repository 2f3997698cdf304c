import * as v from "valibot";
import { deviceAssertionField } from "../devices/capture";
import { documentEvidenceSchema } from "../identity/documents";
import { coded, minorUnitAmount } from "../kernel/validation";
import { currencySchema } from "../lib/money";
import { contextSchema } from "../mandates/decision";
import { grantTermsSchema } from "../mandates/issue";

const transactionActions = ["ACTION_LOGIN", "ACTION_PAYMENT", "ACTION_SIGN", "ACTION_SIGNUP"] as const;
export type TransactionAction = (typeof transactionActions)[number];
/** Acts that bind the person legally or move money need a valid identity document on record (rule 3). */
export const DOCUMENT_ACTIONS: ReadonlySet<TransactionAction> = new Set(["ACTION_PAYMENT", "ACTION_SIGN"]);

/** A `service_hash`: 8 to 128 of A-Z a-z 0-9 : . _ - (also the form of a hosted session's external_txn_ref). */
export const SERVICE_HASH = /^[A-Za-z0-9:._-]{8,128}$/;

/**
 * The body of process-biovital-transaction (spec 4.4). Money is an integer in the minor unit or
 * `400 AMOUNT_INVALID` (rule 2, also when a payment carries no amount); amount and currency come
 * together; everything else is `400 INVALID_INPUT` with its fields.
 */
export const transactionSchema = v.pipe(
  v.strictObject({
    action: v.picklist(transactionActions),
    service_hash: v.pipe(v.string(), v.regex(SERVICE_HASH, "8 to 128 of A-Z a-z 0-9 : . _ -")),
    user_id: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
    capture_nonce: v.optional(v.pipe(v.string(), v.minLength(8), v.maxLength(128))),
    face_template: v.optional(v.unknown()),
    amount: v.optional(minorUnitAmount),
    currency: v.optional(currencySchema),
    document: v.optional(documentEvidenceSchema),
    mandate_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
    scope: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
    context: contextSchema,
    /**
     * The terms of a mandate the person is shown and grants with this capture (mandate-issue's
     * fields without `granted_by` and `proof`): the capture becomes a grant capture, the one proof
     * mandate-issue takes for a mandate with exactly these terms, once. A live login only.
     */
    grant: v.optional(grantTermsSchema),
    /** The device's assertion over the capture: required in live mode (docs/devices.md). */
    device_assertion: deviceAssertionField,
    /**
     * What the live capture proves beyond the face (D-428): `face_voice` (default), or `face`, the
     * face-only capture level a step-up needs (spec 4.7 rule 8): only with a `grant` that steps up
     * (`grant.step_up_of`), and a version 2 descriptor with the light challenge.
     */
    presence: v.optional(v.picklist(["face_voice", "face"])),
  }),
  v.forward(
    v.partialCheck(
      [["presence"], ["grant"]],
      (input) => input.presence !== "face" || input.grant?.step_up_of !== undefined,
      "a face-only capture proves a step-up grant only (grant.step_up_of)",
    ),
    ["presence"],
  ),
  v.forward(
    v.partialCheck(
      [["grant"], ["action"], ["mandate_id"]],
      (input) => input.grant === undefined || (input.action === "ACTION_LOGIN" && input.mandate_id === undefined),
      "grant is a live ACTION_LOGIN's: a mandate cannot stand in for a grant",
    ),
    ["grant"],
  ),
  v.partialCheck(
    [["action"], ["amount"]],
    (input) => input.action !== "ACTION_PAYMENT" || input.amount !== undefined,
    coded("AMOUNT_INVALID"),
  ),
  v.forward(
    v.partialCheck(
      [["amount"], ["currency"]],
      (input) => input.amount === undefined || input.currency !== undefined,
      "currency is required",
    ),
    ["currency"],
  ),
  v.forward(
    v.partialCheck([["amount"], ["currency"]], (input) => input.currency === undefined || input.amount !== undefined, "amount is required"),
    ["amount"],
  ),
);

export type TransactionBody = v.InferOutput<typeof transactionSchema>;
