/**
 * The minute cron's sweep of the MCP authorization endpoint's sign-ins (docs/decisions.md, D-751): a
 * real tick of session-expiry-and-webhooks at a chosen time deletes the sign-ins by presence that
 * stopped counting more than a day before it, and keeps every other. The sign-ins are made through the
 * endpoint's own form and the hosted screen on the request clock, two days back, 23 hours back and now,
 * so nothing waits. Own service: a tick is a global pass over its database.
 */
import { auth } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { cookiesOf, MemoryProvider, mcpUrl, ownedMerchant } from "../harness/agents";
import { testDb } from "../harness/factories";
import { proveOnScreen } from "../harness/me";
import { useOwnService } from "../harness/own-service";

const service = useOwnService("mcp_sign_in_sweep", ["process-biovital-enrollment", "hosted-capture", "mcp", "session-expiry-and-webhooks"]);

const T0 = new Date(Math.ceil(Date.now() / 1000) * 1000);
const hoursBefore = (hours: number) => new Date(T0.getTime() - hours * 3_600_000);

const post = (url: URL, fields: Record<string, string>, now: Date, cookie?: string) =>
  fetch(url, {
    method: "POST",
    body: new URLSearchParams(fields),
    headers: { "x-test-now": now.toISOString(), ...(cookie ? { cookie } : {}) },
    redirect: "manual",
  });

describe("mcp: the minute cron sweeps the owner's sign-ins by presence", () => {
  it("deletes sign-ins that stopped counting more than a day before the tick; keeps the rest", async () => {
    const { merchant, owner } = await ownedMerchant();
    const provider = new MemoryProvider();
    expect(await auth(provider, { serverUrl: mcpUrl(), scope: "mandates:read mandates:write" })).toBe("REDIRECT");
    const url = provider.authorizationUrl!;

    /** "Prove it is me" at `now`, left there (its hosted session expires unused): its id, as the table holds it, and how to go on. */
    const started = async (now: Date) => {
      const page = await post(url, { sign_in: "presence", merchant_id: merchant.merchant_id, environment: "test" }, now);
      const html = await page.text();
      expect(page.status, html).toBe(200);
      const screenUrl = /href="([^"]+\/functions\/v1\/hosted-capture\/session#hst_[^"]+)"/.exec(html)![1];
      const sessionId = /name="presence_session" value="(hs_[0-9a-f]{32})"/.exec(html)![1];
      return { id: sessionId.replace(/^hs_/, ""), screenUrl, sessionId, cookie: cookiesOf(page) };
    };
    /** Signed in at `now`: proved on the screen and continued to the consent screen, so the sign-in is used. */
    const signedIn = async (now: Date) => {
      const sign = await started(now);
      expect((await proveOnScreen(sign.screenUrl, owner, now)).body).toMatchObject({ state: "completed", outcome: { approved: true } });
      const consent = await post(url, { presence_session: sign.sessionId }, now, sign.cookie);
      expect(consent.status, await consent.clone().text()).toBe(200);
      expect(await consent.text()).toContain('name="handle"');
      return sign;
    };

    // Two days back: one left unused (its session expired five minutes later) and one used: both gone at the tick.
    const oldUnused = await started(hoursBefore(48));
    const oldUsed = await signedIn(hoursBefore(47));
    // Kept: one started 23 hours back (over five minutes later), one used 23 hours back, and one started now.
    const recentUnused = await started(hoursBefore(23));
    const recentUsed = await signedIn(hoursBefore(23));
    const current = await started(T0);

    const db = testDb();
    const signIns = async () =>
      (
        await db`select g.session_id::text as id from private.agent_sign_ins g
                 join private.hosted_sessions s on s.id = g.session_id where s.merchant_id = ${merchant.merchant_id}`
      ).map((r) => (r.id as string).replace(/-/g, ""));
    expect(await signIns()).toHaveLength(5);

    const summary = await service.own.tick("session-expiry-and-webhooks", T0);
    expect(summary).toMatchObject({ agent_sign_ins_swept: 2 });
    const left = await signIns();
    expect(left.sort()).toEqual([recentUnused.id, recentUsed.id, current.id].sort());
    expect(left).not.toContain(oldUnused.id);
    expect(left).not.toContain(oldUsed.id);

    // The one started now still signs in; a second tick finds nothing more to delete.
    expect((await proveOnScreen(current.screenUrl, owner, T0)).body.state).toBe("completed");
    expect((await post(url, { presence_session: current.sessionId }, T0, current.cookie)).status).toBe(200);
    const again = await service.own.tick("session-expiry-and-webhooks", new Date(T0.getTime() + 60_000));
    expect(again?.agent_sign_ins_swept ?? 0).toBe(0);
  }, 240_000);
});
