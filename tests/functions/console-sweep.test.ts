/**
 * The minute cron's sweep of the console's sign-in (docs/decisions.md, D-730): a real tick of
 * session-expiry-and-webhooks at a chosen time deletes the console's sign-ins that stopped counting
 * and its sessions that were over more than a day before it, and keeps every other. The rows are made
 * through the console's own routes on the request clock, two days back and now, so nothing waits.
 * Own service: a tick is a global pass over its database.
 */
import { describe, expect, it } from "vitest";
import { ownedMerchant } from "../harness/agents";
import { ConsoleBrowser, checkOf, signIn } from "../harness/console";
import { testDb } from "../harness/factories";
import { useOwnService } from "../harness/own-service";

const service = useOwnService("console_sweep", ["process-biovital-enrollment", "hosted-capture", "console", "session-expiry-and-webhooks"]);

const T0 = new Date(Math.ceil(Date.now() / 1000) * 1000);
const hoursBefore = (hours: number) => new Date(T0.getTime() - hours * 3_600_000);

describe("console: the minute cron sweeps the sign-in", () => {
  it("deletes sign-ins that stopped counting and sessions over more than a day before the tick; keeps the rest", async () => {
    const { merchant, owner } = await ownedMerchant();
    /** A sign-in started at `now` and left there (its hosted session expires unused): its session's id. */
    const started = async (now: Date) => {
      const page = await new ConsoleBrowser().form(
        "/sign-in",
        { merchant_id: merchant.merchant_id, environment: "test" },
        { now, csrf: null },
      );
      expect(page.status, page.text).toBe(200);
      // the page names it hs_ and 32 hex digits; the table holds the uuid (compared without its dashes)
      return checkOf(page).sessionId.replace(/^hs_/, "");
    };
    /** A browser signed in at `now`: its sign-in is used, its session open from then. */
    const signedIn = async (now: Date) => {
      const browser = new ConsoleBrowser();
      await signIn(browser, merchant.merchant_id, owner, now);
      return browser;
    };

    // Two days back: a sign-in left unused, and one used whose session then idled out: all gone at the tick.
    const oldUnused = await started(hoursBefore(48));
    await signedIn(hoursBefore(47));
    // Signed out two days back: its session is over since then, gone.
    const signedOut = await signedIn(hoursBefore(46));
    expect((await signedOut.form("/sign-out", {}, { now: hoursBefore(46) })).status).toBe(303);
    // Kept: a sign-in started 23 hours back (over 15 minutes later), a session idle since 23 hours back,
    // and one in use now.
    const recentUnused = await started(hoursBefore(23));
    await signedIn(hoursBefore(23));
    const current = await signedIn(T0);

    const db = testDb();
    const signIns = async () =>
      (
        await db`select g.session_id::text as id, g.created_at from private.owner_sign_ins g
                 join private.hosted_sessions s on s.id = g.session_id where s.merchant_id = ${merchant.merchant_id}`
      ).map((r) => ({ id: (r.id as string).replace(/-/g, ""), at: (r.created_at as Date).getTime() }));
    const sessions = async () =>
      (await db`select created_at from private.owner_sessions where merchant_id = ${merchant.merchant_id} order by created_at`).map((r) =>
        (r.created_at as Date).getTime(),
      );
    expect(await signIns()).toHaveLength(6);
    expect(await sessions()).toHaveLength(4);

    const summary = await service.own.tick("session-expiry-and-webhooks", T0);
    expect(summary).toMatchObject({ owner_sign_ins_swept: 3, owner_sessions_swept: 2 });
    const left = await signIns();
    expect(left.map((s) => s.at).sort()).toEqual([hoursBefore(23).getTime(), hoursBefore(23).getTime(), T0.getTime()]);
    expect(left.map((s) => s.id)).toContain(recentUnused);
    expect(left.map((s) => s.id)).not.toContain(oldUnused);
    expect(await sessions()).toEqual([hoursBefore(23).getTime(), T0.getTime()]);

    // The session in use goes on; a second tick finds nothing more of this console to delete.
    expect((await current.page("/keys", { now: T0 })).text).toContain('aria-current="page"');
    const again = await service.own.tick("session-expiry-and-webhooks", new Date(T0.getTime() + 60_000));
    expect(again?.owner_sign_ins_swept ?? 0).toBe(0);
    expect(again?.owner_sessions_swept ?? 0).toBe(0);
  }, 240_000);
});
