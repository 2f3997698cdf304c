/**
 * disclose-claims (spec 4.5): a merchant asks what it needs to know about a person who has just
 * proved presence, and gets each requested field resolved (claims.ts) as an SD-JWT signed with the
 * service's keys, verifiable offline against the published JWKS, with a `consent_token` that opens
 * the documents disclosed behind it until it expires or is revoked (revoke.ts). The disclosure is a
 * consent ledger entry written in the same transaction that issues it: no entry, no disclosure.
 */
import { calculateJwkThumbprint, type JWK } from "jose";
import * as v from "valibot";
import { jwkOfCoseKey, jwkOfSpkiPem, keyThumbprint } from "../devices/keys";
import { deviceRef } from "../devices/policy";
import type {} from "../devices/rpc";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError, type ErrorCode } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { jsonObject, ttlSeconds } from "../kernel/validation";
import { fromHex, randomBase64Url, sha256Hex } from "../lib/crypto";
import { canonicalJson } from "../lib/json";
import { contentDigest, issueSdJwt } from "../lib/sd-jwt";
import type { KeySet } from "../lib/signing";
import { canonicalUuid } from "../lib/uuid";
import { checkRequestedFields, disclosureTypes, type ResolvedClaim, resolveClaim } from "./claims";
import type { LedgerClaim } from "./rpc";

export const DISCLOSURE_TTL_SECONDS = { default: 3600, min: 60, max: 86_400 } as const;
export const MAX_REQUESTED_FIELDS = 32;
/** How old the capture behind a disclosure may be (as mandate-issue's proof). */
const ATTESTATION_MAX_AGE_SECONDS = 300;
/** The SD-JWT's `typ`: a disclosure of this service. */
export const DISCLOSURE_JWT_TYPE = "disclosure+sd-jwt";

const CONSENT_TOKEN = /^cst_[A-Za-z0-9_-]{43}$/;
const PRINTABLE = /^[\x21-\x7e]+$/;

const requestedField = v.strictObject({
  key: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  disclosure_type: v.picklist(disclosureTypes),
  requires_kyc: v.optional(v.boolean()),
  circuit_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  public_input: v.optional(v.record(v.string(), v.unknown())),
});

/** What disclosing can be refused with, besides its input's own codes (docs/functions.md, disclose-claims). */
export const discloseCodes = [
  "UNKNOWN_CLAIM",
  "DISCLOSURE_TYPE_NOT_SUPPORTED",
  "INVALID_CIRCUIT",
  "MERCHANT_MISMATCH",
  "BIOMETRIC_LIVENESS_FAILED",
  "ATTESTATION_INVALID",
  "DOCUMENT_REQUIRED",
  "CONSENT_MISSING",
  "CONSENT_REVOKED",
  "AUDIT_ID_REUSED",
] as const satisfies readonly ErrorCode[];

export const discloseSchema = v.pipe(
  jsonObject,
  v.strictObject({
    zk_proof_audit_id: v.pipe(v.string(), v.minLength(1), v.maxLength(128), v.regex(PRINTABLE)),
    merchant_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
    transaction_type: v.pipe(v.string(), v.minLength(1), v.maxLength(64), v.regex(PRINTABLE)),
    requestedFields: v.pipe(
      v.array(requestedField),
      v.minLength(1),
      v.maxLength(MAX_REQUESTED_FIELDS),
      v.check((fields) => new Set(fields.map((field) => field.key)).size === fields.length, "keys must be unique"),
    ),
    // The spec's fields (liveness_passed, vrc_confidence, device_pubkey_pem), and capture_id, which the spec does not
    // name: optional, for a merchant that holds the transaction_id; without it the device key finds the capture (D-368).
    biometric_attestation: v.strictObject({
      capture_id: v.optional(
        v.pipe(
          v.string(),
          v.check((id) => canonicalUuid(id) !== null, "a capture id (transaction_id)"),
        ),
      ),
      liveness_passed: v.optional(v.boolean()),
      vrc_confidence: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
      device_pubkey_pem: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(4096))),
    }),
    ttl_seconds: ttlSeconds(DISCLOSURE_TTL_SECONDS, "INVALID_DISCLOSURE_TTL"),
  }),
);

type DiscloseBody = v.InferOutput<typeof discloseSchema>;

/** Where the disclosure is issued from and verified against. */
export interface Issuer {
  keys: KeySet;
  /** The service's base URL: the SD-JWT's `iss`. */
  baseUrl: string;
}

/** `dsc_` + the ledger entry's uuid without dashes. */
export const disclosureId = (uuid: string) => `dsc_${uuid.replace(/-/g, "")}`;

/** The JWKS the SD-JWT verifies against (receipt-verify publishes the service's keys). */
export const jwksUri = (baseUrl: string) => `${baseUrl}/functions/v1/receipt-verify/jwks`;
const fetchUrl = (baseUrl: string) => `${baseUrl}/functions/v1/disclose-claims/fetch`;

/**
 * The registered device whose key `biometric_attestation.device_pubkey_pem` is (an SPKI PEM of an
 * ES256, EdDSA or RS256 key), found by the key's JWK thumbprint in the tenant's environment, with the
 * registered key as the SD-JWT's confirmation key. A PEM that is no such key is `400 INVALID_INPUT`
 * on that field; a key no device of this environment registered, or one revoked, `403
 * ATTESTATION_INVALID` (`device_unknown`, `device_revoked`).
 */
async function presentedDevice(deps: Deps, tenant: Tenant, pem: string): Promise<{ deviceId: string; identityId: string; jwk: JWK }> {
  const jwk = await jwkOfSpkiPem(pem);
  if (!jwk) throw new ApiError("INVALID_INPUT", { fields: ["biometric_attestation.device_pubkey_pem"] });
  const { device } = await rpc(deps.sql, "device_credential_by_key", {
    environment: tenant.environment,
    key_thumbprint: await keyThumbprint(jwk),
  });
  if (!device) throw new ApiError("ATTESTATION_INVALID", { reason: "device_unknown" });
  if (device.revoked_at !== null && new Date(device.revoked_at) <= deps.now)
    throw new ApiError("ATTESTATION_INVALID", { reason: "device_revoked" });
  return { deviceId: device.device_id, identityId: device.identity_id, jwk: jwkOfCoseKey(fromHex(device.public_key_hex)) };
}

/** What the SD-JWT says of a disclosed claim: the value, the predicate's result, or the document's digest. */
function signedClaim(claim: ResolvedClaim, digests: Map<string, string>): unknown {
  if (claim.status !== "disclosed") return undefined;
  if (claim.disclosure_type === "value") return claim.value;
  if (claim.disclosure_type === "zk_proof") return claim.zk_proof.result;
  return { digest: digests.get(claim.key) };
}

/**
 * Discloses the requested fields of the person a fresh capture proved present (D-368): the capture
 * `biometric_attestation.capture_id` names, or else the newest fresh capture this merchant made of
 * the person whose registered device key `device_pubkey_pem` is; with the key, the SD-JWT's `cnf`
 * holds it and the capture must be that device's person's. Neither: `403 ATTESTATION_INVALID`
 * (`capture_unidentified`). `merchant_id` must be the key's (`403 MERCHANT_MISMATCH`); an attestation
 * that says liveness failed is `403 BIOMETRIC_LIVENESS_FAILED`; a field with `requires_kyc` for a
 * person without a verified document is `403 DOCUMENT_REQUIRED`; no consent with the merchant `403
 * CONSENT_MISSING`, an ended one `403 CONSENT_REVOKED`.
 */
export async function discloseClaims(deps: Deps, issuer: Issuer, tenant: Tenant, body: DiscloseBody) {
  if (body.merchant_id.toLowerCase() !== tenant.merchantId.toLowerCase()) throw new ApiError("MERCHANT_MISMATCH");
  checkRequestedFields(body.requestedFields);
  const attestation = body.biometric_attestation;
  if (attestation.liveness_passed === false) throw new ApiError("BIOMETRIC_LIVENESS_FAILED", { reason: "attested_failed" });
  const device = attestation.device_pubkey_pem === undefined ? null : await presentedDevice(deps, tenant, attestation.device_pubkey_pem);
  const captureId = attestation.capture_id === undefined ? null : canonicalUuid(attestation.capture_id)!;
  if (!captureId && !device) throw new ApiError("ATTESTATION_INVALID", { reason: "capture_unidentified" });
  const cnf = device ? { jwk: device.jwk } : undefined;

  const subject = await rpc(deps.sql, "disclosure_subject", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    ...(captureId ? { capture_id: captureId } : { identity_id: device!.identityId }),
    proof_max_age_seconds: ATTESTATION_MAX_AGE_SECONDS,
  });
  // A key presented with a capture must be a device of the capture's person.
  if (device && device.identityId !== subject.identity_id) throw new ApiError("ATTESTATION_INVALID", { reason: "device_not_the_persons" });
  if (!subject.document && body.requestedFields.some((field) => field.requires_kyc)) throw new ApiError("DOCUMENT_REQUIRED");

  const today = deps.now.toISOString().slice(0, 10);
  const claims = body.requestedFields.map((field) => resolveClaim(field, subject, today));
  const documents = claims.flatMap((claim) =>
    claim.status === "disclosed" && claim.disclosure_type === "document" ? [{ key: claim.key, document: claim.document }] : [],
  );
  const digests = new Map(
    await Promise.all(documents.map(async ({ key, document }) => [key, await contentDigest(canonicalJson(document))] as const)),
  );

  const id = crypto.randomUUID();
  const consentToken = `cst_${randomBase64Url(32)}`;
  const issuedAt = Math.floor(deps.now.getTime() / 1000);
  const expiresAt = new Date((issuedAt + body.ttl_seconds) * 1000);
  const sdJwt = await signDisclosure(
    issuer,
    {
      aud: tenant.merchantId,
      iat: issuedAt,
      exp: issuedAt + body.ttl_seconds,
      jti: disclosureId(id),
      zk_proof_audit_id: body.zk_proof_audit_id,
      transaction_type: body.transaction_type,
      ...(cnf ? { cnf } : {}),
    },
    claims,
    digests,
  );

  const entry = await rpc(deps.sql, "disclosure_record", {
    id,
    identity_id: subject.identity_id,
    merchant_id: tenant.merchantId,
    now: deps.now.toISOString(),
    consent_token_hash: await sha256Hex(consentToken),
    expires_at: expiresAt.toISOString(),
    zk_proof_audit_id: body.zk_proof_audit_id,
    transaction_type: body.transaction_type,
    claims: claims.map(ledgerClaim),
    attestation: {
      capture_id: subject.capture_id,
      ...(device ? { device_id: deviceRef(device.deviceId) } : {}),
      ...(attestation.liveness_passed === undefined ? {} : { liveness_passed: attestation.liveness_passed }),
      ...(attestation.vrc_confidence === undefined ? {} : { vrc_confidence: attestation.vrc_confidence }),
      ...(cnf ? { device_key_thumbprint: await calculateJwkThumbprint(cnf.jwk) } : {}),
    },
    sd_jwt_digest: await contentDigest(sdJwt),
    documents,
  });

  return {
    disclosure_id: disclosureId(id),
    zk_proof_audit_id: body.zk_proof_audit_id,
    merchant_id: tenant.merchantId,
    transaction_type: body.transaction_type,
    consent_token: consentToken,
    expires_at: expiresAt.toISOString(),
    claims: claims.map((claim) => responseClaim(claim, digests, issuer.baseUrl)),
    sd_jwt: sdJwt,
    verification: { issuer: issuer.baseUrl, jwks_uri: jwksUri(issuer.baseUrl), typ: DISCLOSURE_JWT_TYPE, alg: "EdDSA" },
    consent: { ledger_seq: entry.seq, ledger_hash: entry.row_hash, recorded_at: entry.recorded_at },
  };
}

/**
 * The disclosure as an SD-JWT: `envelope` (audience, times, ids, the device key) always shown, and
 * each disclosed field a selectively disclosable claim of its key.
 */
function signDisclosure(issuer: Issuer, envelope: Record<string, unknown>, claims: ResolvedClaim[], digests: Map<string, string>) {
  const disclosed = claims.filter((claim) => claim.status === "disclosed");
  return issueSdJwt(
    issuer.keys,
    { iss: issuer.baseUrl, ...envelope, ...Object.fromEntries(disclosed.map((claim) => [claim.key, signedClaim(claim, digests)])) },
    disclosed.map((claim) => claim.key),
    DISCLOSURE_JWT_TYPE,
  );
}

function ledgerClaim(claim: ResolvedClaim): LedgerClaim {
  return { key: claim.key, disclosure_type: claim.disclosure_type, status: claim.status };
}

/** A claim as the response shows it: a document stays behind the consent token (its digest and where to fetch it). */
function responseClaim(claim: ResolvedClaim, digests: Map<string, string>, baseUrl: string) {
  if (claim.status === "disclosed" && claim.disclosure_type === "document") {
    const { document: _behindTheToken, ...rest } = claim;
    return { ...rest, document: { digest: digests.get(claim.key), fetch_url: fetchUrl(baseUrl) } };
  }
  return claim;
}

export const fetchSchema = v.pipe(jsonObject, v.strictObject({ consent_token: v.pipe(v.string(), v.minLength(1), v.maxLength(256)) }));

/**
 * What a consent token unlocks for the merchant it was issued to: the disclosure's record and the
 * documents disclosed behind it, each with the digest its SD-JWT carries. Unknown (or another
 * merchant's) `403 CONSENT_MISSING`; revoked, or the person's consent with the merchant ended,
 * `403 CONSENT_REVOKED`; past `expires_at` `403 CONSENT_EXPIRED`.
 */
export async function fetchDisclosure(deps: Deps, tenant: Tenant, body: v.InferOutput<typeof fetchSchema>) {
  if (!CONSENT_TOKEN.test(body.consent_token)) throw new ApiError("CONSENT_MISSING");
  const disclosure = await rpc(deps.sql, "disclosure_fetch", {
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    consent_token_hash: await sha256Hex(body.consent_token),
  });
  return {
    ...disclosure,
    disclosure_id: disclosureId(disclosure.disclosure_id),
    documents: await Promise.all(
      disclosure.documents.map(async ({ key, document }) => ({ key, document, digest: await contentDigest(canonicalJson(document)) })),
    ),
  };
}

/** A consent token's SHA-256, when it has the form of one (revoke.ts). */
export async function consentTokenHash(token: string): Promise<string | null> {
  return CONSENT_TOKEN.test(token) ? sha256Hex(token) : null;
}

const disclosedClaim = v.object({ key: v.string(), disclosure_type: v.string(), status: v.string() });

/** disclose-claims' answer: the SD-JWT and the consent token that opens what is behind it. */
export const disclosureAnswerSchema = v.object({
  disclosure_id: v.string(),
  zk_proof_audit_id: v.string(),
  merchant_id: v.string(),
  transaction_type: v.string(),
  consent_token: described(v.string(), "Opens the disclosure's documents (the fetch) until revoked or expired."),
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
  claims: described(v.array(disclosedClaim), "Each requested claim: how it is disclosed and whether it was."),
  sd_jwt: described(v.string(), "The SD-JWT, verifiable offline against the published JWKS."),
  consent: v.optional(v.record(v.string(), v.unknown())),
  verification: v.optional(v.record(v.string(), v.unknown())),
});

/** disclose-claims/fetch's answer: what the consent token unlocks. */
export const disclosureFetchSchema = v.object({
  disclosure_id: v.string(),
  zk_proof_audit_id: v.string(),
  transaction_type: v.string(),
  issued_at: v.pipe(v.string(), v.isoTimestamp()),
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
  claims: v.array(disclosedClaim),
  documents: described(v.array(v.record(v.string(), v.unknown())), "The documents the claims disclose, with their digests."),
});
