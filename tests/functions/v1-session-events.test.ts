/**
 * /v1 sessions tell the merchant how they ended through the outbox, delivered signed by real cron
 * ticks: session.completed (completed or cancelled) when the person ends the screen, session.expired
 * when nobody finished it within 30 minutes, which needs nothing but the tick. Both carry data.id
 * (the session's id on /v1) and data.metadata, with the mode and the /v1 status.
 *
 * Isolation: a tick is a global pass over its database, so this file runs its own instance on its
 * own database and every test starts with no sessions and no events.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { newStranger } from "../harness/identity";
import { useOwnService } from "../harness/own-service";
import { v1 } from "../harness/resource-api";
import { bootedSession, createdSession, sessionBody } from "../harness/resource-sessions";
import { delivered, merchantWithEndpoint } from "../harness/session-webhooks";
import { screenCall } from "../harness/sessions";
import { expectSignedBy } from "../harness/webhook-receiver";

const FUNCTIONS = ["resource-api", "hosted-capture", "process-biovital-enrollment", "session-expiry-and-webhooks"];
const HOSTED_CONSENT = { version: "hosted-capture-1", retention_days: 365 };

const service = useOwnService("v1_sessions", FUNCTIONS);
beforeEach(async () => {
  await service.own.sql`delete from private.hosted_sessions`;
});

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

describe("/v1 session webhooks", () => {
  it("session.completed for a completed and a cancelled session: data.id, data.metadata, the mode, the status and the result as GET shows them", async () => {
    const { key, receiver, secret } = await merchantWithEndpoint(service);
    const claimed = await createdSession(key, sessionBody("claim", { metadata: { order: "c-1" } }));
    const screen = await bootedSession(claimed.url);
    const person = newStranger();
    const done = await screenCall("complete", screen.screen_token, {
      capture_nonce: screen.capture_nonce,
      face_template: person.capture({ nonce: screen.capture_nonce, light: true }).descriptor,
      consent: { ...HOSTED_CONSENT, accepted: true },
    });
    expect(done.status, done.text).toBe(200);
    const dropped = await createdSession(key, sessionBody("claim", { metadata: { order: "c-2" } }));
    const droppedScreen = await bootedSession(dropped.url);
    expect((await screenCall("cancel", droppedScreen.screen_token, {})).status).toBe(200);

    const now = at(new Date(), 1);
    expect(await service.own.tick("session-expiry-and-webhooks", now)).toMatchObject({
      sessions_expired: 0,
      fanned_out_events: 2,
      succeeded: 2,
    });
    await receiver.waitFor(2);
    for (const request of receiver.received) await expectSignedBy(request, [secret], now);
    const events = delivered(receiver, "session.completed");
    for (const [session, status] of [
      [claimed, "completed"],
      [dropped, "cancelled"],
    ] as const) {
      const read = (await v1(`/sessions/${session.id}`, { key })).body;
      expect(read.status).toBe(status);
      expect(events.get(session.id)?.data).toMatchObject({
        id: session.id,
        object: "session",
        metadata: session.metadata,
        mode: "claim",
        status,
        result: read.result,
      });
    }
  });

  it("session.expired from the tick alone, once, 30 minutes after creation, with data.id and data.metadata", async () => {
    const { key, receiver, secret } = await merchantWithEndpoint(service);
    const t0 = new Date();
    const open = await createdSession(key, sessionBody("claim", { metadata: { n: "1" } }), { now: t0 });
    const opened = await createdSession(key, sessionBody("claim", { metadata: { n: "2" } }), { now: t0 });
    await bootedSession(opened.url, { now: at(t0, 10) });

    expect((await service.own.tick("session-expiry-and-webhooks", at(t0, 1799)))?.sessions_expired ?? 0).toBe(0);
    const expiry = at(t0, 1800);
    expect(await service.own.tick("session-expiry-and-webhooks", expiry)).toMatchObject({
      sessions_expired: 2,
      fanned_out_events: 2,
      succeeded: 2,
    });
    await receiver.waitFor(2);
    for (const request of receiver.received) await expectSignedBy(request, [secret], expiry);
    const events = delivered(receiver, "session.expired");
    for (const [session, n] of [
      [open, "1"],
      [opened, "2"],
    ] as const) {
      expect(events.get(session.id)).toMatchObject({
        created_at: session.expires_at,
        data: { id: session.id, metadata: { n }, object: "session", mode: "claim", status: "expired", result: null },
      });
      expect((await v1(`/sessions/${session.id}`, { key, now: at(t0, 1801) })).body).toMatchObject({ status: "expired", result: null });
    }
    expect(await service.own.tick("session-expiry-and-webhooks", at(t0, 1900))).toBeNull();
    expect((await service.own.sql`select count(*)::int as n from private.outbox_events where type = 'session.expired'`)[0].n).toBe(2);
  });
});
