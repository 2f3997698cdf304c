/**
 * A software WebAuthn authenticator for HTTP tests: a real ES256 key pair (WebCrypto) that builds
 * and signs the exact structures a platform authenticator does (authenticator data, CBOR attestation
 * object with a COSE key, client data JSON, a DER ECDSA signature over authData ‖ SHA-256(clientData)),
 * so the service verifies the real protocol with @simplewebauthn/server. It plays both the
 * authenticator and the browser (the client data's origin), and each knob is a way a real one can
 * misbehave: user verification off, another origin, another RP ID, a counter that goes back.
 * The browser tests use Chromium's virtual authenticator instead (tests/browser/).
 */
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { expect } from "vitest";
import { assertionChallenge, descriptorDigest } from "../../shared/contracts/device";
import type { RelyingParty } from "../../shared/devices/ceremony";
import { firstPartyRelyingParty } from "../../shared/devices/ceremony";
import { fromBase64Url, toBase64Url } from "../../shared/lib/crypto";
import { call, replayHeaders } from "./http";
import { serviceUnderTest } from "./service";

/** The service's own relying party, as it computes it for requests to the service under test. */
export function serviceRelyingParty(): RelyingParty {
  return firstPartyRelyingParty(serviceUnderTest().baseUrl);
}

/** How one ceremony may go wrong on purpose (each defaults to what a good authenticator does). */
export interface CeremonyKnobs {
  /** User verification (the device's biometric or PIN) performed: the UV flag. */
  userVerified?: boolean;
  /** The page's origin the browser writes into the client data. */
  origin?: string;
  /** The RP ID whose hash the authenticator writes into its data. */
  rpId?: string;
  /** The counter to sign with (default: one more than the last). */
  signCount?: number;
}

const encoder = new TextEncoder();

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** An ECDSA signature as WebCrypto gives it (r ‖ s, 32 bytes each) in the DER form WebAuthn carries. */
function derSignature(raw: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const trimmed = bytes.slice(start);
    const body = trimmed[0] & 0x80 ? concat(new Uint8Array([0]), trimmed) : trimmed;
    return concat(new Uint8Array([0x02, body.length]), body);
  };
  const sequence = concat(integer(raw.slice(0, 32)), integer(raw.slice(32)));
  return concat(new Uint8Array([0x30, sequence.length]), sequence);
}

/** A passkey on a software authenticator: one credential, its key pair and counter. */
export class SoftwareAuthenticator {
  readonly credentialId = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  private signCount = 0;

  private constructor(
    private readonly keys: CryptoKeyPair,
    /** Backup eligible and backed up (a synced passkey): the BE and BS flags. */
    readonly synced: boolean,
  ) {}

  /** A new authenticator with a fresh ES256 key; `synced` (default true) as most platform passkeys are. */
  static async create(options: { synced?: boolean } = {}): Promise<SoftwareAuthenticator> {
    const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"])) as CryptoKeyPair;
    return new SoftwareAuthenticator(keys, options.synced ?? true);
  }

  private async authenticatorData(rpId: string, knobs: CeremonyKnobs, attested: Uint8Array | null): Promise<Uint8Array<ArrayBuffer>> {
    const uv = knobs.userVerified ?? true;
    const flags = 0x01 | (uv ? 0x04 : 0) | (this.synced ? 0x08 | 0x10 : 0) | (attested ? 0x40 : 0);
    const count = new Uint8Array(4);
    new DataView(count.buffer).setUint32(0, knobs.signCount ?? this.signCount);
    return concat(await sha256(encoder.encode(rpId)), new Uint8Array([flags]), count, attested ?? new Uint8Array());
  }

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string, origin: string): Uint8Array<ArrayBuffer> {
    return encoder.encode(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** What startRegistration would resolve to for `challenge` (base64url), attestation `none`. */
  async register(challenge: string, rp: RelyingParty = serviceRelyingParty(), knobs: CeremonyKnobs = {}) {
    const jwk = await crypto.subtle.exportKey("jwk", this.keys.publicKey);
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, fromBase64Url(jwk.x as string)],
      [-3, fromBase64Url(jwk.y as string)],
    ]);
    const id = fromBase64Url(this.credentialId);
    const idLength = new Uint8Array([id.length >> 8, id.length & 0xff]);
    const attested = concat(new Uint8Array(16), idLength, id, isoCBOR.encode(coseKey));
    const authData = await this.authenticatorData(knobs.rpId ?? rp.id, knobs, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]) as never,
    );
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: {
        clientDataJSON: toBase64Url(this.clientData("webauthn.create", challenge, knobs.origin ?? rp.origins[0])),
        attestationObject: toBase64Url(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** What startAuthentication would resolve to for `challenge` (base64url); the counter counts up. */
  async assert(challenge: string, rp: RelyingParty = serviceRelyingParty(), knobs: CeremonyKnobs = {}) {
    if (knobs.signCount === undefined) this.signCount++;
    const authData = await this.authenticatorData(knobs.rpId ?? rp.id, knobs, null);
    const clientDataJSON = this.clientData("webauthn.get", challenge, knobs.origin ?? rp.origins[0]);
    const signed = concat(authData, await sha256(clientDataJSON));
    const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, this.keys.privateKey, signed));
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: {
        clientDataJSON: toBase64Url(clientDataJSON),
        authenticatorData: toBase64Url(authData),
        signature: toBase64Url(derSignature(raw)),
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** Registers over a capture's descriptor: the WebAuthn challenge is assertionChallenge(challenge, digest). */
  async registerCapture(challenge: string, descriptor: unknown, knobs: CeremonyKnobs = {}, rp?: RelyingParty) {
    return this.register(assertionChallenge(challenge, await descriptorDigest(descriptor)), rp, knobs);
  }

  /** Signs a capture's descriptor: the WebAuthn challenge is assertionChallenge(challenge, digest). */
  async signCapture(challenge: string, descriptor: unknown, knobs: CeremonyKnobs = {}, rp?: RelyingParty) {
    return this.assert(assertionChallenge(challenge, await descriptorDigest(descriptor)), rp, knobs);
  }
}

/** A device challenge issued by the service under test (device-challenge) for `purpose`. */
export async function deviceChallenge(key: string, purpose: string, now?: Date): Promise<string> {
  const res = await call("device-challenge", { key, body: { purpose }, headers: replayHeaders(now), now });
  expect(res.status, res.text).toBe(200);
  return res.body.challenge as string;
}
