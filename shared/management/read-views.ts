/**
 * Read views for support (docs/management.md, "Read views"): the environment's receipts, the consents
 * its persons gave the merchant and the disclosures it received, newest first, filtered, in cursor
 * pages (shared/kernel/cursor.ts over private.keyset_page). Read with a key that acts (`api`) or a
 * dashboard key (`management.read`); none of them answers a disclosed value or anything the merchant
 * does not hold already.
 */
import * as v from "valibot";
import { described, instant, orNull } from "../kernel/answers";
import { decodeCursor, nextCursor } from "../kernel/cursor";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { RECEIPT_ACTIONS, RECEIPT_CODE } from "../receipts/signed-receipt";
import { list } from "./answers";
import type {} from "./rpc";
import { pageLimit } from "./webhooks";

const facetoken = v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128)));
const cursor = v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200)));
const facetokenAnswer = orNull(v.string(), "The person, by the facetoken (subject_ref) the merchant holds for them.");

// ---------------------------------------------------------------------------------------------
// Receipts
// ---------------------------------------------------------------------------------------------
export const receiptPageQuerySchema = v.strictObject({
  facetoken,
  action: v.optional(v.picklist(RECEIPT_ACTIONS)),
  code: v.optional(v.pipe(v.string(), v.regex(RECEIPT_CODE))),
  cursor,
  limit: pageLimit,
});

export const receiptSummarySchema = v.pipe(
  v.object({
    id: described(v.pipe(v.string(), v.uuid()), "The receipt's id (GET /v1/receipts/{id}/verify takes it, or the code)."),
    object: v.literal("receipt"),
    code: described(v.string(), "The short code a person may type to verify it."),
    transaction_id: described(v.pipe(v.string(), v.uuid()), "The act (capture) the receipt attests."),
    facetoken: facetokenAnswer,
    action: described(v.picklist(RECEIPT_ACTIONS), "The act: ACTION_LOGIN, _PAYMENT, _SIGN, _SIGNUP, or ACTION_MANDATE."),
    amount: orNull(v.number(), "The act's amount in the currency's minor unit, when it carries money."),
    currency: orNull(v.string(), "ISO 4217 currency of amount."),
    assurance_level: orNull(v.string(), "face, face_voice or face_voice_doc: what was proven at the act."),
    device_binding: orNull(v.string(), "hardware, synced or none: the device that signed the capture."),
    seal: described(v.string(), "SHA-256 of the signed receipt, the leaf of its anchor."),
    anchored: described(v.boolean(), "Whether its seal is in an anchored Merkle root yet (live receipts only)."),
    issued_at: instant("When it was signed."),
  }),
  v.examples([
    {
      id: "0f8c2b1e-7d4a-4c1b-9b7e-2f1a3c5d7e90",
      object: "receipt",
      code: "RCPT-7K2M-QX9D-4HPT",
      transaction_id: "7a1e9c2d-3b4f-4e5a-8c6d-9e0f1a2b3c4d",
      facetoken: "sub_2f6c1a9e4b7d3c8f0e5a1b6c9d2e7f4a8b3c6d1e9f0a5b7c",
      action: "ACTION_PAYMENT",
      amount: 2599,
      currency: "EUR",
      assurance_level: "face_voice_doc",
      device_binding: "hardware",
      seal: "9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c1b3d5f7e9a1c3b5d7f9e1a3c5b7d9f1e",
      anchored: true,
      issued_at: "2026-11-27T10:15:02.481Z",
    },
  ]),
);

export const receiptPageSchema = list(receiptSummarySchema, "The page's receipts, newest first.");

// ---------------------------------------------------------------------------------------------
// Consents
// ---------------------------------------------------------------------------------------------
export const consentStatuses = ["active", "withdrawn", "expired"] as const;

export const consentPageQuerySchema = v.strictObject({
  facetoken,
  status: v.optional(v.picklist(consentStatuses)),
  cursor,
  limit: pageLimit,
});

export const consentSchema = v.pipe(
  v.object({
    id: described(v.pipe(v.string(), v.startsWith("cnt_")), "The consent's id (its entry in the consent ledger)."),
    object: v.literal("consent"),
    facetoken: facetokenAnswer,
    version: described(v.string(), "The consent text's version the person agreed to."),
    retention_days: described(v.number(), "How long the biometric template may be kept under it."),
    status: described(v.picklist(consentStatuses), "active; withdrawn (by the person or the merchant); expired (its retention ran out)."),
    granted_at: instant("When the person gave it."),
    ended_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When it was withdrawn or expired."),
  }),
  v.examples([
    {
      id: "cnt_5b1d9e3a7c2f4e6a8b0d1c3e5f7a9b2d",
      object: "consent",
      facetoken: "sub_2f6c1a9e4b7d3c8f0e5a1b6c9d2e7f4a8b3c6d1e9f0a5b7c",
      version: "hosted-capture-1",
      retention_days: 365,
      status: "active",
      granted_at: "2026-11-20T08:01:44.120Z",
      ended_at: null,
    },
  ]),
);

export const consentPageSchema = list(consentSchema, "The page's consents, newest first.");

// ---------------------------------------------------------------------------------------------
// Disclosures
// ---------------------------------------------------------------------------------------------
export const disclosureStatuses = ["active", "expired", "revoked"] as const;

export const disclosurePageQuerySchema = v.strictObject({
  facetoken,
  status: v.optional(v.picklist(disclosureStatuses)),
  cursor,
  limit: pageLimit,
});

export const disclosureSummarySchema = v.pipe(
  v.object({
    id: described(v.pipe(v.string(), v.startsWith("dsc_")), "The disclosure's id (disclose-claims' disclosure_id)."),
    object: v.literal("disclosure"),
    facetoken: facetokenAnswer,
    purpose: orNull(v.string(), "The transaction type the claims were asked for."),
    claims: described(
      v.array(v.object({ key: v.string(), disclosure_type: v.nullable(v.string()), status: v.nullable(v.string()) })),
      "Each claim asked for: its key, how it was disclosed and whether it was; never its value.",
    ),
    status: described(v.picklist(disclosureStatuses), "active; expired (its consent token no longer opens it); revoked."),
    disclosed_at: instant("When it was made."),
    expires_at: instant("When its consent token stops opening it."),
    revoked_at: orNull(v.pipe(v.string(), v.isoTimestamp()), "When it was revoked."),
  }),
  v.examples([
    {
      id: "dsc_8e2a4c6b0d1f3e5a7c9b2d4f6e8a0c1b",
      object: "disclosure",
      facetoken: "sub_2f6c1a9e4b7d3c8f0e5a1b6c9d2e7f4a8b3c6d1e9f0a5b7c",
      purpose: "account_opening",
      claims: [{ key: "age_over_18", disclosure_type: "zk_predicate", status: "disclosed" }],
      status: "active",
      disclosed_at: "2026-11-21T14:30:09.002Z",
      expires_at: "2026-12-21T14:30:09.002Z",
      revoked_at: null,
    },
  ]),
);

export const disclosurePageSchema = list(disclosureSummarySchema, "The page's disclosures, newest first (never a value).");

// ---------------------------------------------------------------------------------------------
// The pages
// ---------------------------------------------------------------------------------------------
type PageQuery = { cursor?: string; limit: number } & Record<string, string | number | undefined>;

/** The filters given, without the paging fields (the RPCs take them as present-or-absent keys). */
function filtersOf({ cursor: _cursor, limit: _limit, ...filters }: PageQuery): Record<string, string> {
  return Object.fromEntries(Object.entries(filters).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}

/** The views whose rows have a status read at the request clock (a session or a disclosure runs out); the others take no clock. */
const CLOCKED = new Set(["management_sessions_page", "management_disclosures_page"]);

/** One page of a read view: the tenant's rows after the cursor, filtered, and the next page's cursor. */
export async function readViewPage<T>(
  deps: Deps,
  tenant: Tenant,
  name: "management_sessions_page" | "management_receipts_page" | "management_consents_page" | "management_disclosures_page",
  query: PageQuery,
) {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const rows = await rpc(deps.sql, name, {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    ...(CLOCKED.has(name) ? { now: deps.now.toISOString() } : {}),
    limit: query.limit,
    ...filtersOf(query),
    ...(after ? { after } : {}),
  });
  return { object: "list" as const, data: rows.data as T[], next_cursor: nextCursor(rows) };
}

export const pageReceipts = (deps: Deps, tenant: Tenant, query: v.InferOutput<typeof receiptPageQuerySchema>) =>
  readViewPage<v.InferOutput<typeof receiptSummarySchema>>(deps, tenant, "management_receipts_page", query);

export const pageConsents = (deps: Deps, tenant: Tenant, query: v.InferOutput<typeof consentPageQuerySchema>) =>
  readViewPage<v.InferOutput<typeof consentSchema>>(deps, tenant, "management_consents_page", query);

export const pageDisclosures = (deps: Deps, tenant: Tenant, query: v.InferOutput<typeof disclosurePageQuerySchema>) =>
  readViewPage<v.InferOutput<typeof disclosureSummarySchema>>(deps, tenant, "management_disclosures_page", query);
