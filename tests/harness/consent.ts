import { SDJwtInstance } from "@sd-jwt/core";
import { digest } from "@sd-jwt/crypto-nodejs";
import { createLocalJWKSet, flattenedVerify, importJWK, type JWK } from "jose";
import { expect } from "vitest";
import { keyBindingChallenge, WEBAUTHN_KB_ALG } from "../../shared/contracts/device";
import { toBase64Url } from "../../shared/lib/crypto";
import { type CeremonyKnobs, type SoftwareCredential, serviceRelyingParty } from "./authenticator";
import { merchantFactory, testDb } from "./factories";
import { call } from "./http";
import { enrollStranger } from "./identity";
import { presenceCapture } from "./mandates";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;

/** The identity behind a capture (tests only look; merchants never see it). */
export async function identityOfCapture(captureId: string): Promise<string> {
  const [row] = await testDb()`select identity_id::text from private.captures where id = ${captureId}::uuid`;
  return row.identity_id;
}

/**
 * A merchant, a person enrolled with it, and a fresh capture of them (with a verified document on
 * record when `document`, the sandbox passport's; born on `birthDate` when given, null for a document
 * that states none).
 */
export async function disclosureFixture(options: { document?: boolean; birthDate?: string | null; merchant?: Merchant } = {}) {
  const merchant = options.merchant ?? (await merchantFactory());
  const person = await enrollStranger(merchant.keys.pk_test);
  const captureId = await presenceCapture(merchant, person, { document: options.document ?? true });
  const identityId = await identityOfCapture(captureId);
  if (options.birthDate !== undefined)
    await testDb()`update private.identity_documents set date_of_birth = ${options.birthDate} where identity_id = ${identityId}`;
  return { merchant, person, captureId, identityId };
}

/** A disclose-claims body for `captureId` asking `fields`. */
export function discloseBody(merchant: Merchant, captureId: string, fields: unknown[], extra: Record<string, unknown> = {}) {
  return {
    zk_proof_audit_id: `audit-${crypto.randomUUID()}`,
    merchant_id: merchant.merchant_id,
    transaction_type: "account_opening",
    requestedFields: fields,
    biometric_attestation: { capture_id: captureId, liveness_passed: true, vrc_confidence: 0.97 },
    ...extra,
  };
}

export function disclose(key: string | null, body: unknown, now?: Date) {
  return call("disclose-claims", { key, body, now });
}

export function fetchDisclosure(key: string, consentToken: unknown, now?: Date) {
  return call("disclose-claims/fetch", { key, body: { consent_token: consentToken }, now });
}

export function revokeConsent(key: string | null, body: unknown, now?: Date) {
  return call("revoke-consent", { key, body, now });
}

/** The service's published keys, as a merchant fetches them. */
export async function publishedJwks(): Promise<{ keys: JWK[] }> {
  const res = await call("receipt-verify/jwks");
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** @sd-jwt/core's issuer check: the EdDSA signature of the issuer JWT against `jwks`, by kid. */
function issuerVerifier(jwks: { keys: JWK[] }) {
  const keySet = createLocalJWKSet(jwks);
  return async (data: string, signature: string) => {
    const [protectedHeader, payload] = data.split(".");
    try {
      await flattenedVerify({ protected: protectedHeader, payload, signature }, keySet, { algorithms: ["EdDSA"] });
      return true;
    } catch {
      return false;
    }
  };
}

/**
 * Verifies an SD-JWT offline as a merchant would, with @sd-jwt/core's verifier: the issuer JWT's
 * EdDSA signature against `jwks` (by kid), every disclosure against the digests it signed, and
 * iat/exp at `now`. Answers the claims with the disclosures applied, and the header.
 */
export async function verifySdJwtOffline(sdJwt: string, jwks: { keys: JWK[] }, now = new Date()) {
  const verifier = new SDJwtInstance({
    hasher: digest,
    verifier: issuerVerifier(jwks),
  });
  return verifier.verify(sdJwt, { currentDate: Math.floor(now.getTime() / 1000) } as never);
}

/**
 * An RFC 9901 presentation of `sdJwt` as its holder makes it: the disclosures `frame` keeps, then a
 * key-binding JWT (`typ: kb+jwt`, ES256) over `aud`, `nonce`, `iat` and the SD-JWT's `sd_hash`,
 * signed by `holder`'s key (@sd-jwt/core computes the hash; the key signs).
 */
export async function presentWithKeyBinding(
  sdJwt: string,
  frame: Record<string, boolean>,
  holder: { signJws(data: string): string },
  aud: string,
  nonce: string,
) {
  const instance = new SDJwtInstance({ hasher: digest, kbSignAlg: "ES256", kbSigner: (data: string) => holder.signJws(data) });
  return instance.present(sdJwt, frame as never, { kb: { payload: { iat: Math.floor(Date.now() / 1000), aud, nonce } } });
}

/**
 * A presentation of `sdJwt` whose key binding a passkey signs (D-642): the KB-JWT's header has
 * `alg: "webauthn"`, and its third segment is the credential's assertion (startAuthentication's
 * answer as base64url JSON) over keyBindingChallenge(the KB-JWT's signing input), on the service's
 * relying party unless `knobs` say otherwise. @sd-jwt/core writes the KB-JWT and its `sd_hash`.
 */
export async function presentWithPasskey(
  sdJwt: string,
  frame: Record<string, boolean>,
  credential: SoftwareCredential,
  aud: string,
  nonce: string,
  knobs: Pick<CeremonyKnobs, "userVerified" | "origin" | "rpId"> & { iat?: number } = {},
) {
  const rp = serviceRelyingParty();
  const kbSigner = async (signingInput: string) => {
    const assertion = credential.assert(await keyBindingChallenge(signingInput), knobs.origin ?? rp.origins[0], {
      rpId: knobs.rpId ?? rp.id,
      userVerified: knobs.userVerified,
    });
    return toBase64Url(Buffer.from(JSON.stringify(assertion)));
  };
  const instance = new SDJwtInstance({ hasher: digest, kbSignAlg: WEBAUTHN_KB_ALG, kbSigner });
  const iat = knobs.iat ?? Math.floor(Date.now() / 1000);
  return instance.present(sdJwt, frame as never, { kb: { payload: { iat, aud, nonce } } });
}

/** The service's verification of a presentation (disclose-claims/verify) for `key`'s merchant. */
export function verifyPresented(key: string, presentation: string, nonce: string) {
  return call("disclose-claims/verify", { key, body: { presentation, nonce } });
}

/**
 * Verifies a presentation as a merchant would, with @sd-jwt/core: the issuer's signature against
 * `jwks`, the disclosures, and the key-binding JWT against the SD-JWT's own `cnf.jwk` with `nonce`.
 */
export async function verifyPresentation(presentation: string, jwks: { keys: JWK[] }, nonce: string) {
  const verifier = new SDJwtInstance({
    hasher: digest,
    verifier: issuerVerifier(jwks),
    kbVerifier: async (data: string, signature: string, payload: { cnf?: { jwk?: JWK } }) => {
      const jwk = payload.cnf?.jwk;
      if (!jwk) return false;
      const [protectedHeader, kbPayload] = data.split(".");
      try {
        await flattenedVerify({ protected: protectedHeader, payload: kbPayload, signature }, await importJWK(jwk, "ES256"), {
          algorithms: ["ES256"],
        });
        return true;
      } catch {
        return false;
      }
    },
  });
  return verifier.verify(presentation, { keyBindingNonce: nonce, requireKeyBindings: true } as never);
}
