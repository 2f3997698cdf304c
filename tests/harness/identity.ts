import { expect } from "vitest";
import type { PresenceDescriptor } from "../../shared/engine";
import { capture } from "./captures";
import { call } from "./http";

export const CONSENT = { version: "2026-11", retention_days: 365 };

/** Enrols sandbox person `person` through the HTTP API and returns the 200 body plus the session token. */
export async function enrolPerson(publishableKey: string, person: number) {
  const { descriptor, nonce } = capture(person);
  const res = await call("process-biovital-enrollment", {
    key: publishableKey,
    body: { capture_nonce: nonce, face_template: descriptor, consent: CONSENT },
  });
  expect(res.status, res.text).toBe(200);
  return { ...res.body, session_token: res.headers.get("x-session-token") as string };
}

/** A live capture of someone who is no sandbox test person: a real capture with a random face. */
export function strangerCapture(): { descriptor: PresenceDescriptor; nonce: string } {
  const { descriptor, nonce } = capture(1);
  const raw = Array.from({ length: 128 }, () => Math.random() - 0.5);
  const norm = Math.hypot(...raw);
  return { descriptor: { ...descriptor, face: { ...descriptor.face, embedding: raw.map((x) => x / norm) } }, nonce };
}
