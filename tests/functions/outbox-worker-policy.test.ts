/**
 * A delivery the deployment's own policy refuses: an endpoint on loopback http, registered where
 * that was allowed, and an outbox worker deployed without WEBHOOK_ALLOW_LOOPBACK_HTTP=1. Nothing is
 * sent; the delivery fails for good, and the reason must reach the operator: in the summary the
 * worker logs for its cron tick, and in `webhook list`. Own service (a tick is a global pass) with
 * the policy off.
 */
import { describe, expect, it } from "vitest";
import type { RunSummary } from "../../shared/webhooks/run";
import { testDb } from "../harness/factories";
import { useOwnService } from "../harness/own-service";
import { cli } from "../harness/spawn";

const service = useOwnService("outbox_policy", ["session-expiry-and-webhooks"], { overrides: { WEBHOOK_ALLOW_LOOPBACK_HTTP: "0" } });

describe("a delivery refused by local policy", () => {
  it("is not sent, and the tick's log and webhook list say why", { timeout: 90_000 }, async () => {
    const { merchant, receiver, endpoint } = await service.subscribed();
    const { merchant_id } = merchant;
    const { own } = service;
    const now = new Date();
    const sql = testDb();
    const [event] =
      await sql`select private.outbox_emit(${merchant_id}::uuid, 'test', 'mandate.revoked', '{"granted_to":"agent_1"}'::jsonb, ${now.toISOString()}::timestamptz) as id`;

    const summary = (await own.tick("session-expiry-and-webhooks", now)) as RunSummary | null;
    expect(summary).toMatchObject({ claimed: 1, failed: 1, succeeded: 0 });
    expect(summary!.errors).toEqual([
      `endpoint ${endpoint.endpoint_id}: not sent, its URL is refused by this deployment: loopback http URLs are accepted only where WEBHOOK_ALLOW_LOOPBACK_HTTP=1 (local development); use https`,
    ]);
    expect(receiver.received).toEqual([]);

    const listed = await cli(["webhook", "list", "--merchant", merchant_id, "--json"], {
      DATABASE_URL: own.server.databaseUrl,
      WEBHOOK_SECRET_KEY: own.server.bindings.WEBHOOK_SECRET_KEY,
    });
    expect(listed.code, listed.stderr).toBe(0);
    const [shown] = JSON.parse(listed.stdout).endpoints;
    expect(shown.deliveries).toEqual({ pending: 0, succeeded: 0, failed: 1 });
    expect(shown.last_error).toEqual({
      at: expect.any(String),
      event_id: event.id,
      state: "failed",
      status: null,
      error: "url not allowed: loopback http URLs are accepted only where WEBHOOK_ALLOW_LOOPBACK_HTTP=1 (local development); use https",
    });
  });
});
