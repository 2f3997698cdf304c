/**
 * SQL-level tests of when a sign-in by presence stops counting (docs/decisions.md, D-750), the one rule
 * the refusal of a sign-in (private.sign_in_session_refusal: stale) and the minute cron's sweeps of the
 * person's page (person_passkey_sweep) and of the console (owner_console_sweep) share, at its edges.
 * The functions read only the hosted session's row, so each case is a row built from its times alone.
 */
import { describe, expect, it } from "vitest";
import { testDb } from "../harness/factories";

const realPostgres = Boolean(process.env.DATABASE_URL);
const T0 = new Date("2027-05-01T10:00:00.000Z");
const minutes = (n: number) => new Date(T0.getTime() + n * 60_000).toISOString();

/** A hosted login session's row with only these fields set (the functions read no other). */
type SessionTimes = { state: string; expires_at: string; ended_at?: string; result?: Record<string, unknown> };

/** private.sign_in_counts_until(used_at, session). */
async function countsUntil(usedAt: string | null, session: SessionTimes): Promise<string | null> {
  const [row] = await testDb()`
    select private.sign_in_counts_until(${usedAt}::timestamptz,
      jsonb_populate_record(null::private.hosted_sessions, ${JSON.stringify(session)}::text::jsonb)) as at`;
  return row.at === null ? null : new Date(row.at).toISOString();
}

/** private.sign_in_session_refusal(session, now). */
async function refusal(session: SessionTimes, now: string): Promise<string | null> {
  const [row] = await testDb()`
    select private.sign_in_session_refusal(
      jsonb_populate_record(null::private.hosted_sessions, ${JSON.stringify(session)}::text::jsonb), ${now}::timestamptz) as reason`;
  return row.reason;
}

describe.skipIf(!realPostgres)("a sign-in stops counting by one rule", () => {
  it("a used sign-in stops counting when it was used, whatever its session", async () => {
    expect(await countsUntil(minutes(3), { state: "opened", expires_at: minutes(15) })).toBe(minutes(3));
    expect(await countsUntil(minutes(3), { state: "completed", expires_at: minutes(15), ended_at: minutes(2) })).toBe(minutes(3));
  });

  it("an unused one stops at its session's expiry when that comes after the ten minutes past its end", async () => {
    expect(await countsUntil(null, { state: "completed", expires_at: minutes(15), ended_at: minutes(2) })).toBe(minutes(15));
  });

  it("an unused one stops ten minutes after its session ended when that is later than the expiry", async () => {
    expect(await countsUntil(null, { state: "completed", expires_at: minutes(15), ended_at: minutes(14) })).toBe(minutes(24));
    // An expired session is ended by the expiry pass, after its expires_at.
    expect(await countsUntil(null, { state: "expired", expires_at: minutes(15), ended_at: minutes(16) })).toBe(minutes(26));
  });

  it("an unused one whose session has neither ended nor expired counts until the session expires", async () => {
    expect(await countsUntil(null, { state: "open", expires_at: minutes(15) })).toBe(minutes(15));
    expect(await countsUntil(null, { state: "opened", expires_at: minutes(15) })).toBe(minutes(15));
  });

  it("the refusal answers stale from the same instant: ten minutes after the session ended, not at them", async () => {
    const approved: SessionTimes = { state: "completed", expires_at: minutes(15), ended_at: minutes(2), result: { approved: true } };
    expect(await refusal(approved, minutes(12))).toBeNull();
    expect(await refusal(approved, new Date(Date.parse(minutes(12)) + 1).toISOString())).toBe("stale");
    const [row] = await testDb()`
      select private.sign_in_stale_at(jsonb_populate_record(null::private.hosted_sessions, ${JSON.stringify(approved)}::text::jsonb)) as at`;
    expect(new Date(row.at).toISOString()).toBe(minutes(12));
  });

  it("the sweeps delete what stopped counting more than a day before now", async () => {
    const [row] = await testDb()`select private.sweep_cutoff(${minutes(0)}::timestamptz) as at`;
    expect(new Date(row.at).toISOString()).toBe(minutes(-24 * 60));
  });
});
