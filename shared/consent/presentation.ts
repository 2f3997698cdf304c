/**
 * Verifying a disclosure as its holder presents it (RFC 9901: the SD-JWT, the disclosures the holder
 * keeps, and a key-binding JWT), for the merchant the disclosure was issued to: the issuer's
 * signature (the service's own keys), its expiry and audience, each disclosure against the digests
 * it signed, then the key binding against the SD-JWT's `cnf.jwk` (D-369): a JWS of that key
 * (ES256, EdDSA, RS256: a native SDK's platform key), or, for a browser whose key is a passkey, a
 * WebAuthn assertion over keyBindingChallenge(the KB-JWT's signing input) by the registered
 * credential whose key `cnf` holds (docs/decisions.md, D-642). No standard SD-JWT verifier knows the
 * second, so the service verifies it.
 */
import { compactVerify, createLocalJWKSet, flattenedVerify, importJWK, type JWK } from "jose";
import * as v from "valibot";
import { keyBindingChallenge, WEBAUTHN_KB_ALG } from "../contracts/device";
import { verifySignature } from "../devices/assertion";
import { assertionResponseSchema, type RelyingParty } from "../devices/ceremony";
import { keyThumbprint } from "../devices/keys";
import { type DeviceRefusal, deviceRef } from "../devices/policy";
import type {} from "../devices/rpc";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { jsonObject } from "../kernel/validation";
import { fromBase64Url, toBase64Url } from "../lib/crypto";
import type { KeySet } from "../lib/signing";
import { DISCLOSURE_JWT_TYPE } from "./disclose";

/** How far a key-binding JWT's `iat` may be from now (seconds): a presentation is made for one verification. */
export const KEY_BINDING_MAX_AGE_SECONDS = 300;

/** The JWS algorithms a device key signs a standard KB-JWT with (the ones a device registers). */
const JWS_ALGORITHMS = ["ES256", "EdDSA", "RS256"];

/** `POST /disclose-claims/verify`'s body: the presentation as the holder sent it, and the nonce the merchant gave them. */
export const presentationSchema = v.pipe(
  jsonObject,
  v.strictObject({
    presentation: v.pipe(v.string(), v.minLength(1), v.maxLength(65_536)),
    nonce: v.pipe(v.string(), v.minLength(8), v.maxLength(256)),
  }),
);

/** Why a presentation does not verify, one reason each; a device's refusals keep their own names. */
export const presentationRefusals = [
  "malformed",
  "issuer_signature_invalid",
  "not_a_disclosure",
  "not_this_merchants",
  "expired",
  "disclosure_invalid",
  "key_binding_missing",
  "key_binding_unbound",
  "key_binding_invalid",
  "nonce_mismatch",
  "audience_mismatch",
  "sd_hash_mismatch",
  "key_binding_stale",
  "key_mismatch",
] as const;
type PresentationRefusal = (typeof presentationRefusals)[number] | DeviceRefusal;

/** What a presentation that verifies shows: the disclosure, the claims the holder disclosed, and how the key bound them. */
export interface VerifiedPresentation {
  valid: true;
  disclosure_id: string;
  key_binding: "jws" | "webauthn";
  /** The registered device that signed a WebAuthn key binding (`dev_…`); null for a JWS. */
  device_id: string | null;
  claims: Record<string, unknown>;
}

type Refused = { valid: false; reason: PresentationRefusal };
const refuse = (reason: PresentationRefusal): Refused => ({ valid: false, reason });

const encoder = new TextEncoder();
const sha256Url = async (text: string) => toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));

/** A JWT segment's JSON object, or null. */
function segmentJson(segment: string | undefined): Record<string, unknown> | null {
  try {
    const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64Url(segment ?? "")));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Verifies `presentation` for the tenant's merchant (the disclosure's `aud`) with the nonce it gave
 * the holder. Answers the disclosed claims, or why not; a WebAuthn key binding is a use of the
 * credential (its counter judged and advanced, as a capture's).
 */
export async function verifyPresentation(
  deps: Deps,
  keys: KeySet,
  tenant: Tenant,
  rp: RelyingParty,
  body: v.InferOutput<typeof presentationSchema>,
): Promise<VerifiedPresentation | Refused> {
  const parts = body.presentation.split("~");
  if (parts.length < 2) return refuse("malformed");
  const kbJwt = parts[parts.length - 1];
  const disclosures = parts.slice(1, -1);
  let payload: Record<string, unknown>;
  try {
    const verified = await compactVerify(parts[0], createLocalJWKSet(keys.jwks), { algorithms: ["EdDSA"] });
    if (verified.protectedHeader.typ !== DISCLOSURE_JWT_TYPE) return refuse("not_a_disclosure");
    const parsed = segmentJson(toBase64Url(verified.payload));
    if (!parsed) return refuse("malformed");
    payload = parsed;
  } catch {
    return refuse("issuer_signature_invalid");
  }
  if (payload.aud !== tenant.merchantId) return refuse("not_this_merchants");
  if (typeof payload.exp !== "number" || payload.exp * 1000 <= deps.now.getTime()) return refuse("expired");

  const digests = Array.isArray(payload._sd) ? payload._sd : [];
  const claims: Record<string, unknown> = {};
  for (const disclosure of disclosures) {
    const decoded = (() => {
      try {
        return JSON.parse(new TextDecoder().decode(fromBase64Url(disclosure)));
      } catch {
        return null;
      }
    })();
    if (!Array.isArray(decoded) || decoded.length !== 3 || typeof decoded[1] !== "string") return refuse("disclosure_invalid");
    if (!digests.includes(await sha256Url(disclosure))) return refuse("disclosure_invalid");
    claims[decoded[1]] = decoded[2];
  }

  if (!kbJwt) return refuse("key_binding_missing");
  const jwk = (payload.cnf as { jwk?: JWK } | undefined)?.jwk;
  if (!jwk) return refuse("key_binding_unbound");
  const [header64, payload64, signature] = kbJwt.split(".");
  const header = segmentJson(header64);
  const kb = segmentJson(payload64);
  if (!header || !kb || !signature || header.typ !== "kb+jwt" || typeof header.alg !== "string") return refuse("key_binding_invalid");
  const signingInput = `${header64}.${payload64}`;

  // The signature first: the claims of a KB-JWT nobody signed say nothing.
  let deviceId: string | null = null;
  if (header.alg === WEBAUTHN_KB_ALG) {
    const signed = await webauthnKeyBinding(deps, tenant, rp, jwk, signingInput, signature);
    if (!signed.ok) return refuse(signed.reason);
    deviceId = signed.device_id;
  } else {
    if (!JWS_ALGORITHMS.includes(header.alg)) return refuse("key_binding_invalid");
    try {
      await flattenedVerify({ protected: header64, payload: payload64, signature }, await importJWK(jwk, header.alg), {
        algorithms: [header.alg],
      });
    } catch {
      return refuse("key_binding_invalid");
    }
  }
  if (kb.nonce !== body.nonce) return refuse("nonce_mismatch");
  if (kb.aud !== tenant.merchantId) return refuse("audience_mismatch");
  if (kb.sd_hash !== (await sha256Url(body.presentation.slice(0, body.presentation.length - kbJwt.length)))) {
    return refuse("sd_hash_mismatch");
  }
  if (typeof kb.iat !== "number" || Math.abs(kb.iat * 1000 - deps.now.getTime()) > KEY_BINDING_MAX_AGE_SECONDS * 1000) {
    return refuse("key_binding_stale");
  }
  return {
    valid: true,
    disclosure_id: String(payload.jti),
    key_binding: header.alg === WEBAUTHN_KB_ALG ? "webauthn" : "jws",
    device_id: deviceId,
    claims,
  };
}

/**
 * The WebAuthn key binding: the assertion (base64url JSON) of the registered credential whose key is
 * `jwk` (by RFC 7638 thumbprint), unrevoked, in the tenant's environment, over
 * keyBindingChallenge(signingInput), on the service's relying party with user verification: the
 * same ceremony, signature and counter checks as a capture's (verifySignature).
 */
async function webauthnKeyBinding(
  deps: Deps,
  tenant: Tenant,
  rp: RelyingParty,
  jwk: JWK,
  signingInput: string,
  signature: string,
): Promise<{ ok: true; device_id: string } | { ok: false; reason: PresentationRefusal }> {
  const parsed = v.safeParse(assertionResponseSchema, segmentJson(signature));
  if (!parsed.success) return { ok: false, reason: "key_binding_invalid" };
  const response = parsed.output;
  const { device } = await rpc(deps.sql, "device_credential_get", { environment: tenant.environment, credential_id: response.id });
  if (!device) return { ok: false, reason: "credential_unknown" };
  // The credential that signed must be the one whose key the disclosure was bound to.
  if (device.key_thumbprint !== (await keyThumbprint(jwk))) return { ok: false, reason: "key_mismatch" };
  if (device.revoked_at !== null && new Date(device.revoked_at) <= deps.now) return { ok: false, reason: "credential_revoked" };
  const verified = await verifySignature(deps, tenant.environment, device, response, await keyBindingChallenge(signingInput), rp);
  return verified.ok ? { ok: true, device_id: deviceRef(device.device_id) } : verified;
}

/** `POST /disclose-claims/verify`'s answer. */
export const presentationAnswerSchema = v.object({
  valid: described(v.boolean(), "Whether the presentation verifies: issuer, disclosures and key binding."),
  reason: v.optional(described(v.string(), "Why not, when it does not.")),
  disclosure_id: v.optional(described(v.string(), "The disclosure presented (`dsc_…`).")),
  key_binding: v.optional(
    described(
      v.picklist(["jws", "webauthn"]),
      "How the device key bound it: a JWS of that key, or a WebAuthn assertion over the KB-JWT's hash.",
    ),
  ),
  device_id: v.optional(described(v.nullable(v.string()), "The registered device that signed a WebAuthn key binding (`dev_…`).")),
  claims: v.optional(described(v.record(v.string(), v.unknown()), "The claims the holder disclosed, by key.")),
});
