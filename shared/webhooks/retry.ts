/**
 * When a failed delivery is tried again (docs/webhooks.md#retries). Pure functions of the clock
 * the worker passes in, so the whole 72-hour schedule is tested without waiting.
 *
 * After the n-th failed attempt the next one is due `min(1 min × 2^(n−1), 8 h)` later, times a
 * uniform jitter of ±20 % so that endpoints recovering from an outage are not hit in lockstep. A
 * `Retry-After` later than that wins. Nothing is scheduled past the end of the 72-hour window
 * (counted from the delivery's creation): the last attempt is made at the window's end, and an
 * attempt that fails at or after it ends the delivery as failed (replayable).
 */

export const RETRY_WINDOW_MS = 72 * 3_600_000;
const FIRST_RETRY_DELAY_MS = 60_000;
export const MAX_RETRY_DELAY_MS = 8 * 3_600_000;
const RETRY_JITTER = 0.2;

/** The delay before the attempt after the `failedAttempts`-th failure, before jitter. */
export function nominalRetryDelayMs(failedAttempts: number): number {
  const exponent = Math.max(0, Math.min(failedAttempts - 1, 30));
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** exponent, MAX_RETRY_DELAY_MS);
}

/** The jittered delay: nominal × U[0.8, 1.2]. `random` is injectable for tests. */
export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  return Math.round(nominalRetryDelayMs(failedAttempts) * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

interface RetryInput {
  /** Attempts made so far, the failed one included (1 after the first failure). */
  attempt: number;
  /** Start of the delivery's window (its creation). */
  windowStart: Date;
  /** When the attempt failed. */
  failedAt: Date;
  /** The receiver's Retry-After as an absolute time, when it sent one. */
  retryAfter?: Date | null;
  random?: () => number;
}

/**
 * The time of the next attempt, or null when the delivery is given up (the failed attempt was made
 * at or after the end of the window).
 *
 * @example nextAttemptAt({ attempt: 1, windowStart, failedAt }) // ≈ failedAt + 48 to 72 s
 */
export function nextAttemptAt({ attempt, windowStart, failedAt, retryAfter, random }: RetryInput): Date | null {
  const deadline = windowStart.getTime() + RETRY_WINDOW_MS;
  if (failedAt.getTime() >= deadline) return null;
  let next = failedAt.getTime() + retryDelayMs(attempt, random);
  if (retryAfter && retryAfter.getTime() > next) next = retryAfter.getTime();
  return new Date(Math.min(next, deadline));
}

/**
 * `Retry-After` as an absolute time: delay-seconds (`120`) or an HTTP-date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`). Anything else, or a time not after `now`, is null.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): Date | null {
  if (!value) return null;
  const text = value.trim();
  let at: number;
  if (/^\d+$/.test(text)) at = now.getTime() + Math.min(Number(text), 10 * 365 * 86_400) * 1000;
  else if (/[a-z]/i.test(text)) at = Date.parse(text);
  else return null;
  return Number.isFinite(at) && at > now.getTime() ? new Date(at) : null;
}

interface ScheduleRow {
  attempt: number;
  /** Nominal delay after the previous attempt (0 for the first). */
  delayMs: number;
  /** Nominal time of the attempt from the window's start. */
  atMs: number;
}

/** The nominal schedule (no jitter, no Retry-After, instant failures), for the docs and tests. */
export function nominalSchedule(): ScheduleRow[] {
  const rows: ScheduleRow[] = [{ attempt: 1, delayMs: 0, atMs: 0 }];
  while (rows[rows.length - 1].atMs < RETRY_WINDOW_MS) {
    const last = rows[rows.length - 1];
    const atMs = Math.min(last.atMs + nominalRetryDelayMs(last.attempt), RETRY_WINDOW_MS);
    rows.push({ attempt: last.attempt + 1, delayMs: atMs - last.atMs, atMs });
  }
  return rows;
}
