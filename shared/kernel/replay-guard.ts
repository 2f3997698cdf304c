/**
 * The replay guard of spec 4.1: `x-service-timestamp` (epoch seconds) within ±300 s of the server
 * clock and `x-service-nonce` never seen before for this merchant and environment inside that
 * window. This module checks the headers; the database claims the nonce atomically (primary key)
 * in the same call that authenticates the caller (shared/platform/auth.ts), so two racing copies
 * of one request cannot both pass.
 */
import { ApiError } from "./errors";

/** How far x-service-timestamp may be from the server clock, either way. */
const REPLAY_WINDOW_SECONDS = 300;
const NONCE = /^[A-Za-z0-9._~-]{8,128}$/;
const DIGITS = /^\d{1,32}$/;

const MILLISECONDS_MESSAGE = "x-service-timestamp is in milliseconds; send epoch seconds (within 300 seconds of the server clock).";

/** A nonce to claim, valid for the window around the request's instant. */
export interface ReplayClaim {
  nonce: string;
  windowSeconds: number;
}

/**
 * The request's replay claim: `400 TIMESTAMP_REQUIRED` (absent, or not a string of digits), `400
 * TIMESTAMP_OUT_OF_WINDOW` (digits, but not within the window as seconds; a value in milliseconds
 * gets a message saying so) or `400 NONCE_REQUIRED` when the headers do not make one.
 */
export function replayClaim(headers: Headers, now: Date): ReplayClaim {
  const timestamp = headers.get("x-service-timestamp");
  if (!timestamp || !DIGITS.test(timestamp)) throw new ApiError("TIMESTAMP_REQUIRED");
  const offset = (seconds: number) => Math.abs(seconds - now.getTime() / 1000);
  if (offset(Number(timestamp)) > REPLAY_WINDOW_SECONDS) {
    const inMilliseconds = offset(Number(timestamp) / 1000) <= REPLAY_WINDOW_SECONDS;
    throw new ApiError("TIMESTAMP_OUT_OF_WINDOW", {}, inMilliseconds ? MILLISECONDS_MESSAGE : undefined);
  }
  const nonce = headers.get("x-service-nonce");
  if (!nonce || !NONCE.test(nonce)) throw new ApiError("NONCE_REQUIRED");
  return { nonce, windowSeconds: REPLAY_WINDOW_SECONDS };
}
