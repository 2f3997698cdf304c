/**
 * A WebAuthn authenticator in the test process, for the HTTP tests: it makes real registrations
 * (attestation `none`, a fresh ES256 key) and real assertions (ECDSA P-256 over the authenticator
 * data and the client data's hash, DER as authenticators sign) for any relying party and origin,
 * so the service's own verification (@simplewebauthn/server and shared/devices/ceremony.ts) runs
 * on them as on a browser's. The browser tests use Chromium's CDP virtual authenticator instead.
 * `userVerified: false`, another origin or RP ID, and a counter that goes back are what a test
 * asks for by option; nothing here knows what the service will decide.
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { expect } from "vitest";
import { assertionChallenge, descriptorDigest } from "../../shared/contracts/device";
import { firstPartyRelyingParty, type RelyingParty } from "../../shared/devices/ceremony";
import { toBase64Url } from "../../shared/lib/crypto";
import { type AttestationPlan, aaguidOf, attestationStatement, concat, sha256 } from "./attestation";
import { call, replayHeaders } from "./http";
import { serviceUnderTest } from "./service";

/** The flags byte of authenticator data (WebAuthn 6.1). */
function flags(options: { up: boolean; uv: boolean; be: boolean; bs: boolean; at: boolean }): number {
  return (options.up ? 0x01 : 0) | (options.uv ? 0x04 : 0) | (options.be ? 0x08 : 0) | (options.bs ? 0x10 : 0) | (options.at ? 0x40 : 0);
}

const uint32 = (n: number) => new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

export interface CeremonyOptions {
  /** The RP ID the authenticator data names (default: the origin's host name). */
  rpId?: string;
  userVerified?: boolean;
  /** A synced (multi-device) passkey: BE and BS set. */
  synced?: boolean;
  crossOrigin?: boolean;
}

/** One credential of a software authenticator: register it once, then sign assertions with it. */
export class SoftwareCredential {
  readonly id = toBase64Url(randomBytes(32));
  private readonly keys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  private counter = 0;

  /** The public key as SPKI PEM (what `biometric_attestation.device_pubkey_pem` carries). */
  get publicKeyPem(): string {
    return this.keys.publicKey.export({ type: "spki", format: "pem" }).toString();
  }

  /** The private key as PKCS #8 DER in base64: what a CDP virtual authenticator's WebAuthn.addCredential takes. */
  get privateKeyPkcs8(): string {
    return this.keys.privateKey.export({ type: "pkcs8", format: "der" }).toString("base64");
  }

  /** The public key as a JWK (what an SD-JWT's `cnf.jwk` should hold). */
  get publicJwk(): { kty: string; crv: string; x: string; y: string } {
    const { kty, crv, x, y } = this.keys.publicKey.export({ format: "jwk" });
    return { kty: kty!, crv: crv!, x: x!, y: y! };
  }

  /** Signs `data` with the credential's key as a JWS ES256 signature (raw r‖s), for a key-binding JWT. */
  signJws(data: string): string {
    return toBase64Url(sign("sha256", Buffer.from(data), { key: this.keys.privateKey, dsaEncoding: "ieee-p1363" }));
  }

  private coseKey(): Uint8Array {
    const { x, y } = this.publicJwk;
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(x, "base64url")],
        [-3, Buffer.from(y, "base64url")],
      ]),
    );
  }

  private clientData(type: string, challenge: string, origin: string, options: CeremonyOptions): string {
    return toBase64Url(Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: options.crossOrigin ?? false })));
  }

  /** The authenticator data of a registration (attested credential data included) for `rpId`. */
  private registrationAuthData(rpId: string, options: CeremonyOptions, aaguid: Uint8Array): Uint8Array<ArrayBuffer> {
    const synced = options.synced ?? false;
    const credentialId = Buffer.from(this.id, "base64url");
    return concat(
      sha256(rpId),
      new Uint8Array([flags({ up: true, uv: options.userVerified ?? true, be: synced, bs: synced, at: true })]),
      uint32(this.counter),
      aaguid,
      new Uint8Array([credentialId.length >> 8, credentialId.length & 255]),
      credentialId,
      this.coseKey(),
    );
  }

  /** A registration answer: the client data, and the attestation object of `fmt` and `attStmt` over `authData`. */
  private registrationResponse(clientDataJSON: string, authData: Uint8Array, fmt: string, attStmt: Map<string, unknown>) {
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ["fmt", fmt],
        ["attStmt", attStmt],
        ["authData", authData],
      ]) as never,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: { clientDataJSON, attestationObject: toBase64Url(attestationObject), transports: ["internal"] },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** A `startRegistration` answer for `challenge` (the WebAuthn challenge, base64url) at `origin`, attestation `none`. */
  register(challenge: string, origin: string, options: CeremonyOptions = {}) {
    const authData = this.registrationAuthData(options.rpId ?? new URL(origin).hostname, options, new Uint8Array(16));
    return this.registrationResponse(this.clientData("webauthn.create", challenge, origin, options), authData, "none", new Map());
  }

  /**
   * A `startRegistration` answer whose attestation object carries the statement `plan` asks for
   * (./attestation.ts: packed full or self, fido-u2f, tpm), signed over this very registration.
   */
  async registerAttested(challenge: string, origin: string, plan: AttestationPlan, options: CeremonyOptions = {}) {
    const rpId = options.rpId ?? new URL(origin).hostname;
    const aaguid = aaguidOf(plan);
    const authData = this.registrationAuthData(rpId, options, aaguid);
    const clientDataJSON = this.clientData("webauthn.create", challenge, origin, options);
    const { x, y } = this.publicJwk;
    const { fmt, attStmt } = await attestationStatement(plan, {
      authData,
      clientDataHash: sha256(Buffer.from(clientDataJSON, "base64url")),
      rpIdHash: sha256(rpId),
      credentialId: Buffer.from(this.id, "base64url"),
      aaguid,
      x: Buffer.from(x, "base64url"),
      y: Buffer.from(y, "base64url"),
      credentialKey: this.keys.privateKey,
    });
    return this.registrationResponse(clientDataJSON, authData, fmt, attStmt);
  }

  /**
   * A `startAuthentication` answer for `challenge` at `origin`; the counter rises unless `counter`
   * says otherwise. `userHandle` (base64url): a discoverable credential's user.id, as its assertion carries it.
   */
  assert(challenge: string, origin: string, options: CeremonyOptions & { counter?: number; userHandle?: string } = {}) {
    const rpId = options.rpId ?? new URL(origin).hostname;
    const synced = options.synced ?? false;
    this.counter = options.counter ?? this.counter + 1;
    const authData = concat(
      sha256(rpId),
      new Uint8Array([flags({ up: true, uv: options.userVerified ?? true, be: synced, bs: synced, at: false })]),
      uint32(this.counter),
    );
    const clientDataJSON = this.clientData("webauthn.get", challenge, origin, options);
    const signature = sign("sha256", concat(authData, sha256(Buffer.from(clientDataJSON, "base64url"))), this.keys.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: {
        clientDataJSON,
        authenticatorData: toBase64Url(authData),
        signature: toBase64Url(signature),
        ...(options.userHandle ? { userHandle: options.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}

/** The service's own relying party, as it computes it for requests to the service under test. */
export function serviceRelyingParty(): RelyingParty {
  return firstPartyRelyingParty(serviceUnderTest().baseUrl);
}

/** How one capture's ceremony may go wrong on purpose (each defaults to what a good authenticator does). */
export interface CeremonyKnobs {
  /** User verification (the device's biometric or PIN) performed: the UV flag. */
  userVerified?: boolean;
  /** The page's origin the browser writes into the client data (default: the service's). */
  origin?: string;
  /** The RP ID whose hash the authenticator writes (default: the service's). */
  rpId?: string;
  /** The counter to sign with (default: one more than the last). */
  signCount?: number;
  /** A registration's attestation statement (./attestation.ts); default none. */
  attestation?: AttestationPlan;
}

/**
 * A person's passkey as the live-mode HTTP tests use it: one SoftwareCredential that registers over,
 * and signs, a capture's descriptor (the WebAuthn challenge is assertionChallenge(issued challenge,
 * descriptorDigest(descriptor)): shared/contracts/device.ts) for the service's relying party.
 */
export class SoftwareAuthenticator {
  private readonly credential = new SoftwareCredential();

  private constructor(
    /** Backup eligible and backed up: the BE and BS flags (a synced passkey). */
    readonly synced: boolean,
  ) {}

  /** A new passkey; `synced` (default true) as most platform passkeys are. */
  static async create(options: { synced?: boolean } = {}): Promise<SoftwareAuthenticator> {
    return new SoftwareAuthenticator(options.synced ?? true);
  }

  get credentialId(): string {
    return this.credential.id;
  }

  /** startRegistration's answer over a capture. */
  async registerCapture(challenge: string, descriptor: unknown, knobs: CeremonyKnobs = {}) {
    const rp = serviceRelyingParty();
    const webauthnChallenge = assertionChallenge(challenge, await descriptorDigest(descriptor));
    const options = { rpId: knobs.rpId ?? rp.id, userVerified: knobs.userVerified, synced: this.synced };
    const origin = knobs.origin ?? rp.origins[0];
    return knobs.attestation
      ? this.credential.registerAttested(webauthnChallenge, origin, knobs.attestation, options)
      : this.credential.register(webauthnChallenge, origin, options);
  }

  /** startAuthentication's answer over a capture; the counter rises unless `signCount` says otherwise. */
  async signCapture(challenge: string, descriptor: unknown, knobs: CeremonyKnobs = {}) {
    const rp = serviceRelyingParty();
    const webauthnChallenge = assertionChallenge(challenge, await descriptorDigest(descriptor));
    return this.credential.assert(webauthnChallenge, knobs.origin ?? rp.origins[0], {
      rpId: knobs.rpId ?? rp.id,
      userVerified: knobs.userVerified,
      synced: this.synced,
      ...(knobs.signCount === undefined ? {} : { counter: knobs.signCount }),
    });
  }
}

/** A device challenge issued by the service under test (device-challenge) for `purpose`, at `now`. */
export async function deviceChallenge(key: string, purpose: string, now?: Date): Promise<string> {
  const res = await call("device-challenge", { key, body: { purpose }, headers: replayHeaders(now), now });
  expect(res.status, res.text).toBe(200);
  return res.body.challenge as string;
}
