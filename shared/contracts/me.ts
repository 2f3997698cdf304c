/**
 * The person's page's wire contract (functions/me; docs/decisions.md, D-465 to D-472 and D-540 to
 * D-546): the routes the page (client/me/page.ts) calls and the fields it reads of their answers.
 * The answers are documented by the server's schemas (shared/persons/answers.ts, shared/devices/devices.ts);
 * tests/unit/me-contract.test.ts checks that each schema's output gives every field typed here, so
 * a field renamed on the server fails the page's compile check. It imports nothing: the browser
 * bundle takes it whole.
 */

/** The function's routes below its mount, as the page calls them. */
export const ME_ROUTES = {
  signIn: "/sign-in",
  signInFinish: "/sign-in/finish",
  passkeyOptions: "/passkey/options",
  passkeySignIn: "/passkey/sign-in",
  session: "/session",
  signOut: "/sign-out",
  mandates: "/mandates",
  revokeMandates: "/mandates/revoke",
  merchants: "/merchants",
  consentLedger: "/consent-ledger",
  withdrawConsent: "/consents/withdraw",
  disclosures: "/disclosures",
  receipts: "/receipts",
  devices: "/devices",
  revokeDevice: "/devices/revoke",
  renameDevice: "/devices/rename",
  exports: "/exports",
  presence: "/presence",
  erase: "/erase",
} as const;

/**
 * The query of the link a merchant puts behind "manage what you authorised" (D-541): its id, and
 * the environment (`live` when absent).
 *
 * @example https://auth.example.com/functions/v1/me?merchant=7c1e…&environment=test
 */
export const ME_LINK_PARAMS = { merchant: "merchant", environment: "environment" } as const;

/** The header every state-changing request carries the session's CSRF token in (D-466). */
export const CSRF_HEADER = "x-csrf-token";

/** A capture screen opened for the person: the sign-in's, or an erasure's fresh presence proof. */
export interface MeScreen {
  session_id: string;
  url: string;
  expires_at: string;
}

export interface MeSignedIn {
  signed_in: true;
  csrf_token: string;
  environment: "test" | "live";
  expires_at: string;
  idle_expires_at: string;
}

/** The passkey sign-in's options (POST /passkey/options): navigator.credentials.get's, as JSON, challenge included. */
export interface MePasskeyOptions {
  environment: "test" | "live";
  options: Record<string, unknown> & { challenge: string };
  expires_at: string;
}

export interface MeSession {
  environment: "test" | "live";
  expires_at: string;
  idle_expires_at: string;
}

export interface MeMerchantRef {
  merchant_id: string;
  name: string;
}

export interface MeMandate {
  mandate_id: string;
  status: string;
  merchant: MeMerchantRef;
  granted_to: string;
  granted_to_kind: string;
  agent_display_name?: string;
  scopes: string[];
  scope_labels: string[];
  ceiling: { kind: string; amount: number | null; currency: string | null; count: number | null; period: string };
  remaining: { amount: number | null; currency: string | null; count: number | null; period_resets_at: string | null };
  expires_at: string;
  revoked_at: string | null;
  last_consumptions: { consumption_id: string; scope: string; amount?: number; currency?: string; created_at: string }[];
}

export interface MeMerchant extends MeMerchantRef {
  known_since: string;
  consent_state: "active" | "revoked" | "missing";
  consents: {
    version: string;
    retention_days: number;
    granted_at: string;
    retained_until: string;
    ended_at: string | null;
    ended_by: "consent_withdrawn" | "consent_expired" | null;
  }[];
}

export interface MeClaim {
  key: string;
  disclosure_type: string;
  status: string;
}

export interface MeLedger {
  entries: { seq: number; kind: string; merchant: MeMerchantRef; recorded_at: string; purpose?: string; version?: string }[];
  verification: { ok: boolean; entries: number; breaks: { seq: number; reason: string }[] };
}

export interface MeDisclosure {
  disclosure_seq: number;
  merchant: MeMerchantRef;
  disclosed_at: string;
  purpose: string;
  claims: MeClaim[];
  expires_at: string;
  revoked_at: string | null;
}

export interface MeAct {
  transaction_id: string;
  merchant: MeMerchantRef;
  action: string;
  approved: boolean;
  refusal: string | null;
  amount: { minor: number; currency: string } | null;
  created_at: string;
  receipt: { code: string; verify_url: string } | null;
}

export interface MeDevice {
  device_id: string;
  name: string | null;
  device_binding: "hardware" | "synced";
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A device named (POST /me/devices/rename): the device as it now reads. */
export interface MeDeviceRenamed {
  device: MeDevice;
}

/** The answers of the page's reads, by route. */
export interface MeReads {
  mandates: { mandates: MeMandate[] };
  merchants: { merchants: MeMerchant[] };
  consentLedger: MeLedger;
  disclosures: { disclosures: MeDisclosure[] };
  receipts: { acts: MeAct[] };
  devices: { devices: MeDevice[] };
}

export interface MeExportCreated {
  export_id: string;
  expires_at: string;
}

export interface MeErased {
  erased: true;
  merchants: number;
  identity_erased: boolean;
}
