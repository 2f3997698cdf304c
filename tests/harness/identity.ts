import { expect } from "vitest";
import { baselineFromResult, evaluatePresence, type PresenceBaseline, type PresenceDescriptor } from "../../shared/engine";
import { faceEmbeddingOfPerson } from "../../shared/simulator";
import { deviceChallenge, SoftwareAuthenticator } from "./authenticator";
import { capture } from "./captures";
import { call, replayHeaders } from "./http";

export const CONSENT = { version: "2026-11", retention_days: 365 };

/** Enrols sandbox person `person` through the HTTP API and returns the 200 body plus the session token. */
export async function enrollPerson(publishableKey: string, person: number) {
  const { descriptor, nonce } = capture(person);
  const res = await call("process-biovital-enrollment", {
    key: publishableKey,
    body: { capture_nonce: nonce, face_template: descriptor, consent: CONSENT },
  });
  expect(res.status, res.text).toBe(200);
  return { ...res.body, session_token: res.headers.get("x-session-token") as string } as {
    subject_ref: string;
    session_token: string;
    session_token_hash: string;
  };
}

/** A live capture of someone who is no sandbox test person: a real capture with a random face. */
export function strangerCapture(): { descriptor: PresenceDescriptor; nonce: string } {
  const { descriptor, nonce } = capture(1);
  return { descriptor: withFace(descriptor, randomFace()), nonce };
}

/** A random unit-norm face embedding: nobody's. */
export function randomFace(): number[] {
  const raw = Array.from({ length: 128 }, () => Math.random() - 0.5);
  const norm = Math.hypot(...raw);
  return raw.map((x) => x / norm);
}

/**
 * A unit-norm face whose cosine similarity to the unit-norm `face` is exactly `similarity`: `face`
 * scaled, plus a random direction orthogonal to it. The protection of templates is a rotation, so
 * the service measures the same similarity.
 */
export function faceAtSimilarity(face: readonly number[], similarity: number): number[] {
  const noise = randomFace();
  const along = noise.reduce((sum, x, i) => sum + x * face[i], 0);
  const orthogonal = noise.map((x, i) => x - along * face[i]);
  const norm = Math.hypot(...orthogonal);
  const across = Math.sqrt(1 - similarity * similarity);
  return face.map((x, i) => similarity * x + across * (orthogonal[i] / norm));
}

/** The same capture with another face embedding (the signals stay those of a live person). */
function withFace(descriptor: PresenceDescriptor, embedding: number[]): PresenceDescriptor {
  return { ...descriptor, face: { ...descriptor.face, embedding } };
}

export { faceEmbeddingOfPerson };

type CaptureOptions = {
  attack?: "photo" | "replay" | "lipsync" | "screen";
  at?: Date;
  state?: "calm" | "coerced";
  nonce?: string;
  /** Show a face at exactly this cosine similarity to theirs instead of their own. */
  similarity?: number;
  /** A descriptor v2 under the light challenge (what the hosted screen sends). */
  light?: boolean;
  /** A silent descriptor v2 under the light challenge: a face-only capture (D-428). */
  faceOnly?: boolean;
};

/**
 * Someone nobody enrolled yet (a random face, or `face`), and a factory of live captures of them:
 * the first capture is the one they enrol with, and later ones keep to the baseline it leaves (a
 * calm capture shows no coercion).
 */
export function newStranger(face: number[] = randomFace()) {
  let baseline: PresenceBaseline | null = null;
  return {
    face,
    /** A fresh live capture of this person (bound to `nonce` when given). */
    capture(options: CaptureOptions = {}) {
      const { similarity, ...shot } = options;
      const fresh = capture(1, { ...shot, baseline });
      baseline ??= baselineFromResult(evaluatePresence(fresh.descriptor));
      return {
        descriptor: withFace(fresh.descriptor, similarity === undefined ? face : faceAtSimilarity(face, similarity)),
        nonce: fresh.nonce,
      };
    },
  };
}

/**
 * Enrols a person who is nobody else's (a random face, or `face`: the same face enrolled again, in
 * another environment for instance), and returns a capture factory for them.
 */
export async function enrollStranger(publishableKey: string, face: number[] = randomFace()) {
  const person = newStranger(face);
  // In live mode the person registers a passkey over their enrolment capture (docs/devices.md).
  const device = await SoftwareAuthenticator.create();
  const live = isLiveKey(publishableKey);
  const { descriptor, nonce } = person.capture(live ? { nonce: await deviceChallenge(publishableKey, "enroll") } : {});
  const res = await call("process-biovital-enrollment", {
    key: publishableKey,
    body: {
      capture_nonce: nonce,
      face_template: descriptor,
      consent: CONSENT,
      ...(live ? { device_registration: await device.registerCapture(nonce, descriptor) } : {}),
    },
  });
  expect(res.status, res.text).toBe(200);
  return {
    subject_ref: res.body.subject_ref as string,
    session_token: res.headers.get("x-session-token") as string,
    face: person.face,
    capture: person.capture,
    device,
    /**
     * A live capture signed on the person's device: a challenge issued to `key` for `purpose`, the
     * capture bound to it, and the assertion over it (`device_assertion` of the body).
     */
    async signedCapture(key: string, purpose: string, options: Omit<CaptureOptions, "nonce"> & { now?: Date } = {}) {
      const { now, ...shot } = options;
      const challenge = await deviceChallenge(key, purpose, now);
      const fresh = person.capture({ ...shot, nonce: challenge });
      return { ...fresh, device_assertion: await device.signCapture(challenge, fresh.descriptor) };
    },
  };
}

/** Whether an API key is a live one (live mode: captures count only signed on a device). */
export function isLiveKey(key: string): boolean {
  return /^(pk|sk)_live_/.test(key);
}

/** Sends one transaction with fresh replay headers. */
export function transact(
  key: string,
  body: Record<string, unknown>,
  options: { headers?: Record<string, string>; now?: Date; bearer?: string } = {},
) {
  const headers = { ...replayHeaders(options.now), ...options.headers };
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  return call("process-biovital-transaction", { key: options.bearer ? null : key, body, headers, now: options.now });
}
