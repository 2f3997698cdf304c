/** What the person's own page answers (functions/me), as schemas for its OpenAPI document. */
import * as v from "valibot";
import { described, instant, orNull } from "../kernel/answers";

export const signInStartedSchema = v.object({
  session_id: described(v.string(), "The hosted login session to prove presence in (hs_…); the finish names it."),
  url: described(v.string(), "The capture screen's address, its session token in the fragment."),
  expires_at: instant("When the capture screen stops accepting the capture."),
});

export const passkeyOptionsAnswerSchema = v.object({
  environment: described(v.picklist(["test", "live"]), "The environment whose passkeys may answer."),
  options: described(
    v.record(v.string(), v.unknown()),
    "navigator.credentials.get's publicKey options as JSON (PublicKeyCredentialRequestOptionsJSON): the challenge, the service's RP ID, user verification required, no allowCredentials.",
  ),
  expires_at: instant("When the challenge stops being accepted (two minutes; single use)."),
});

const sessionEnds = {
  environment: described(v.picklist(["test", "live"]), "The environment of the person's identity: the page shows that one only."),
  expires_at: instant("The session's absolute end."),
  idle_expires_at: instant("When the session ends without another request (moves on with each)."),
};

export const signedInSchema = v.object({
  signed_in: v.literal(true),
  csrf_token: described(v.string(), "Carried in x-csrf-token by every state-changing request of this session."),
  ...sessionEnds,
});

export const personSessionSchema = v.object(sessionEnds);

export const signedOutSchema = v.object({ signed_out: v.literal(true) });

const money = v.pipe(v.number(), v.integer());

const personMandateSchema = v.object({
  mandate_id: described(v.string(), "mdt_…"),
  status: described(v.string(), "Effective status now: active, exhausted, expired or revoked."),
  merchant: v.object({ merchant_id: v.string(), name: described(v.string(), "The merchant's display name.") }),
  granted_to: described(v.string(), "The merchant's identifier of the agent."),
  granted_to_kind: v.string(),
  agent_display_name: v.optional(v.string()),
  agent_descriptor: v.optional(v.string()),
  scopes: v.array(v.string()),
  scope_labels: described(v.array(v.string()), "Each scope in the request's locale, in the same order."),
  ceiling: v.object({
    kind: v.string(),
    amount: v.nullable(money),
    currency: v.nullable(v.string()),
    count: v.nullable(money),
    period: v.string(),
  }),
  remaining: described(
    v.object({
      amount: v.nullable(money),
      currency: v.nullable(v.string()),
      count: v.nullable(money),
      period_resets_at: v.nullable(v.string()),
    }),
    "What remains of the ceiling this period.",
  ),
  expires_at: instant("The mandate's expiry."),
  created_at: instant("When it was issued."),
  revoked_at: orNull(v.string(), "When it was revoked."),
  last_consumptions: described(
    v.array(
      v.object({
        consumption_id: v.string(),
        scope: v.string(),
        amount: v.optional(money),
        currency: v.optional(v.string()),
        created_at: v.string(),
      }),
    ),
    "The last five uses, newest first.",
  ),
});

export const personMandatesSchema = v.object({
  mandates: described(v.array(personMandateSchema), "Every mandate the person granted, at every merchant, newest first."),
});

export const revokedSchema = v.object({
  revoked: described(
    v.array(v.object({ mandate_id: v.string(), already_revoked: v.boolean(), revoked_at: v.string() })),
    "Each mandate revoked by this request (already_revoked: it was before).",
  ),
});

export const personMerchantsSchema = v.object({
  merchants: described(
    v.array(
      v.object({
        merchant_id: v.string(),
        name: described(v.string(), "The merchant's display name."),
        known_since: instant("When the merchant first took the person on."),
        consent_state: described(v.picklist(["active", "revoked", "missing"]), "Whether a consent with the merchant stands now."),
        consents: v.array(
          v.object({
            version: described(v.string(), "The consent text's version the person accepted."),
            retention_days: v.pipe(v.number(), v.integer()),
            granted_at: instant("When the person consented."),
            retained_until: instant("When the retention runs out, unless withdrawn before."),
            ended_at: orNull(v.string(), "When it ended (withdrawn or ran out)."),
            ended_by: orNull(v.picklist(["consent_withdrawn", "consent_expired"]), "How it ended."),
          }),
        ),
      }),
    ),
    "Each merchant that holds the person, oldest first.",
  ),
});

export const consentLedgerSchema = v.object({
  entries: described(
    v.array(
      v.object({
        seq: v.pipe(v.number(), v.integer()),
        kind: described(
          v.picklist(["consent_granted", "consent_withdrawn", "consent_expired", "disclosure", "disclosure_revoked", "data_erased"]),
          "What the entry records.",
        ),
        merchant: v.object({ merchant_id: v.string(), name: v.string() }),
        recorded_at: instant("When it was recorded."),
        ends_seq: v.optional(v.pipe(v.number(), v.integer())),
        version: v.optional(v.string()),
        retention_days: v.optional(v.pipe(v.number(), v.integer())),
        purpose: v.optional(described(v.string(), "A disclosure's transaction type.")),
        claims: v.optional(
          described(
            v.array(v.object({ key: v.string(), disclosure_type: v.string(), status: v.string() })),
            "A disclosure's claims: which, how, and whether each was disclosed; never a value.",
          ),
        ),
        disclosure_expires_at: v.optional(v.string()),
        reason: v.optional(v.string()),
        prev_hash: described(v.string(), "The previous entry's row_hash (64 zeros for the first)."),
        row_hash: described(v.string(), "SHA-256 over this entry and prev_hash."),
      }),
    ),
    "The person's consent ledger, in order.",
  ),
  verification: v.object({
    ok: described(v.boolean(), "Whether every entry's hash and link recompute."),
    entries: v.pipe(v.number(), v.integer()),
    breaks: v.array(v.object({ seq: v.pipe(v.number(), v.integer()), reason: v.string() })),
  }),
});

export const withdrawnSchema = v.object({
  revoked: v.literal(true),
  already_revoked: described(v.boolean(), "True when the consent had ended before this request."),
  revoked_at: instant("When it was withdrawn."),
});

const merchantRef = v.object({ merchant_id: v.string(), name: described(v.string(), "The merchant's display name.") });

export const personDisclosuresSchema = v.object({
  disclosures: described(
    v.array(
      v.object({
        disclosure_seq: described(v.pipe(v.number(), v.integer()), "The disclosure's entry in the consent ledger."),
        merchant: merchantRef,
        disclosed_at: instant("When it was disclosed."),
        purpose: described(v.string(), "The transaction type the merchant gave."),
        claims: described(
          v.array(v.object({ key: v.string(), disclosure_type: v.string(), status: v.string() })),
          "Which claims, how, and whether each was disclosed; never a value.",
        ),
        expires_at: instant("When the merchant's consent token stops opening it."),
        revoked_at: orNull(v.string(), "When it was revoked, if it was."),
      }),
    ),
    "What each merchant received about the person, newest first.",
  ),
});

export const personReceiptsSchema = v.object({
  acts: described(
    v.array(
      v.object({
        transaction_id: v.string(),
        merchant: merchantRef,
        action: v.string(),
        purpose: v.nullable(v.string()),
        approved: v.boolean(),
        refusal: orNull(v.string(), "Why it was refused (a refusal code), on a refused act."),
        assurance_level: v.nullable(v.string()),
        amount: orNull(v.object({ minor: v.pipe(v.number(), v.integer()), currency: v.string() }), "The act's amount, unless erased."),
        created_at: instant("When the act was made."),
        receipt: orNull(
          v.object({
            receipt_id: v.string(),
            code: described(v.string(), "RCPT-…: receipt-verify checks it, without a key."),
            issued_at: v.string(),
            verify_url: described(v.string(), "receipt-verify for this code."),
          }),
          "The receipt of an approved act.",
        ),
      }),
    ),
    "The person's own acts at every merchant, approved and refused, newest first (at most 200).",
  ),
});

export const erasedSchema = v.object({
  erased: v.literal(true),
  merchants: described(v.pipe(v.number(), v.integer()), "How many merchants it erased the person at (each told by identity.erased)."),
  identity_erased: described(
    v.boolean(),
    "True when no consent stands anywhere any more: the identity itself is erased and the session ended.",
  ),
});

export const exportCreatedSchema = v.object({
  export_id: described(v.string(), "exp_…: downloads the file once, with this session's person."),
  expires_at: instant("After this the file cannot be downloaded, and is deleted."),
});

/** The export file (docs/functions.md#me, "The export file"). */
export const exportFileSchema = v.object({
  format: described(v.literal("me-export/1"), "The file's format and version."),
  generated_at: instant("When it was generated."),
  environment: v.picklist(["test", "live"]),
  identity: described(
    v.object({ enrolled_at: v.string(), documents: v.array(v.record(v.string(), v.unknown())) }),
    "When the identity was created, and the identity documents on record (type, country, expiry, when verified; no image, no number).",
  ),
  merchants: described(
    v.array(v.record(v.string(), v.unknown())),
    "As /merchants answers them, each with the merchant's pseudonym for the person.",
  ),
  mandates: described(v.array(v.record(v.string(), v.unknown())), "As /mandates answers them, without labels."),
  consent_ledger: described(v.record(v.string(), v.unknown()), "As /consent-ledger answers it."),
  disclosures: described(v.array(v.record(v.string(), v.unknown())), "As /disclosures answers them."),
  acts: described(v.array(v.record(v.string(), v.unknown())), "As /receipts answers them, without verify_url (at most 200)."),
});
