/**
 * Hosted sessions tell the merchant how they ended through the outbox: session.completed (completed,
 * failed or cancelled) written with the outcome, session.expired written by the outbox worker's
 * tick for a session that expired unfinished, each delivered signed by a real cron tick (Miniflare's
 * scheduled-event API). Reads report the expiry before any tick. Also the write failure of
 * hosted-session-create, made real by a database that refuses the row.
 *
 * Isolation: a tick is a global pass over its database (and the expiry pass expires every
 * session due), so this file runs its own instance on its own database, and every test starts
 * with no sessions, no events and no deliveries there: counts are exact.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger, newStranger } from "../harness/identity";
import { useOwnService } from "../harness/own-service";
import { delivered, merchantWithEndpoint } from "../harness/session-webhooks";
import { boot, createSession, openSession, readSession, screenCall } from "../harness/sessions";
import { expectSignedBy } from "../harness/webhook-receiver";

const FUNCTIONS = [
  "hosted-session-create",
  "hosted-session-get",
  "hosted-capture",
  "process-biovital-enrollment",
  "session-expiry-and-webhooks",
];

const service = useOwnService("hosted_sessions", FUNCTIONS);
beforeEach(async () => {
  await service.own.sql`delete from private.hosted_sessions`;
});

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

describe("session.completed", () => {
  it("is delivered signed for a completed, a failed and a cancelled session, with the state, the outcome and the metadata", async () => {
    const { merchant, receiver, secret } = await merchantWithEndpoint(service);
    const person = await enrollStranger(merchant.keys.pk_test);

    const ok = await openSession(merchant.keys.sk_test, { action: "login", metadata: { flow: "ok" } });
    const okScreen = (await boot(ok.session_token)).body;
    const okBody = {
      capture_nonce: okScreen.capture_nonce,
      face_template: person.capture({ nonce: okScreen.capture_nonce, light: true }).descriptor,
    };
    expect((await screenCall("complete", okScreen.screen_token, okBody)).body.state).toBe("completed");

    const unknown = await openSession(merchant.keys.sk_test, { action: "login", external_txn_ref: "visit-000001" });
    const unknownScreen = (await boot(unknown.session_token)).body;
    const stranger = newStranger().capture({ nonce: unknownScreen.capture_nonce, light: true }).descriptor;
    const failed = await screenCall("complete", unknownScreen.screen_token, {
      capture_nonce: unknownScreen.capture_nonce,
      face_template: stranger,
    });
    expect(failed.body.state).toBe("failed");

    const gone = await openSession(merchant.keys.sk_test, { action: "enroll", metadata: { flow: "gone" } });
    const goneScreen = (await boot(gone.session_token)).body;
    expect((await screenCall("cancel", goneScreen.screen_token, { reason: "permission_denied" })).body.state).toBe("cancelled");

    const now = at(new Date(), 1);
    expect(await service.own.tick("session-expiry-and-webhooks", now)).toMatchObject({
      sessions_expired: 0,
      fanned_out_events: 3,
      claimed: 3,
      succeeded: 3,
    });
    await receiver.waitFor(3);
    for (const request of receiver.received) await expectSignedBy(request, [secret], now);
    const events = delivered(receiver, "session.completed");
    expect([...events.keys()].sort()).toEqual([ok.session_id, unknown.session_id, gone.session_id].sort());

    for (const session of [ok, unknown, gone]) {
      const read = (await readSession(merchant.keys.sk_test, session.session_id)).body;
      expect(events.get(session.session_id)!.data).toEqual({
        id: session.session_id,
        metadata: read.metadata,
        state: read.state,
        action: read.action,
        external_txn_ref: read.external_txn_ref,
        ended_at: read.ended_at,
        result: read.result,
      });
    }
    expect(events.get(ok.session_id)!.data).toMatchObject({
      state: "completed",
      metadata: { flow: "ok" },
      result: { subject_ref: person.subject_ref },
    });
    expect(events.get(unknown.session_id)!.data).toMatchObject({ state: "failed", result: { approved: false, reason: "not_recognised" } });
    expect(events.get(gone.session_id)!.data).toMatchObject({
      state: "cancelled",
      result: { approved: false, reason: "permission_denied" },
    });
  });
});

describe("session.expired", () => {
  it("the first tick from expires_at on writes it once for each open or opened session; reads said expired before any tick", async () => {
    const { merchant, receiver, secret } = await merchantWithEndpoint(service);
    const t0 = new Date();
    const open = await openSession(merchant.keys.sk_test, { action: "login", ttl_seconds: 60, metadata: { n: "1" } }, t0);
    const opened = await openSession(merchant.keys.sk_test, { action: "sign", ttl_seconds: 60 }, t0);
    expect((await boot(opened.session_token, { now: at(t0, 5) })).status).toBe(200);
    const ended = await openSession(merchant.keys.sk_test, { action: "login", ttl_seconds: 60 }, t0);
    const endedScreen = (await boot(ended.session_token, { now: at(t0, 5) })).body;
    await screenCall("cancel", endedScreen.screen_token, {}, { now: at(t0, 6) });
    const longer = await openSession(merchant.keys.sk_test, { action: "login", ttl_seconds: 900 }, t0);

    expect((await readSession(merchant.keys.sk_test, open.session_id, at(t0, 60))).body.state).toBe("expired");
    expect((await service.own.tick("session-expiry-and-webhooks", at(t0, 30)))?.sessions_expired).toBe(0); // the cancel's event only
    await receiver.waitFor(1);

    const expiry = at(t0, 61);
    expect(await service.own.tick("session-expiry-and-webhooks", expiry)).toMatchObject({
      sessions_expired: 2,
      fanned_out_events: 2,
      succeeded: 2,
    });
    await receiver.waitFor(3);
    for (const request of receiver.received) await expectSignedBy(request, [secret], expiry);
    const events = delivered(receiver, "session.expired");
    expect([...events.keys()].sort()).toEqual([open.session_id, opened.session_id].sort());
    expect(events.get(open.session_id)).toMatchObject({
      created_at: open.expires_at,
      data: { id: open.session_id, metadata: { n: "1" }, state: "expired", action: "login", ended_at: open.expires_at, result: null },
    });
    expect(events.get(opened.session_id)!.data).toMatchObject({ state: "expired", action: "sign", ended_at: opened.expires_at });

    const stored = await service.own.sql`select id, state from private.hosted_sessions order by created_at, id`;
    const states = new Map(stored.map((r) => [`hs_${(r.id as string).replace(/-/g, "")}`, r.state]));
    expect(states.get(open.session_id)).toBe("expired");
    expect(states.get(opened.session_id)).toBe("expired");
    expect(states.get(ended.session_id)).toBe("cancelled");
    expect(states.get(longer.session_id)).toBe("open");
    expect((await readSession(merchant.keys.sk_test, opened.session_id, at(t0, 62))).body).toMatchObject({
      state: "expired",
      ended_at: opened.expires_at,
    });

    expect(await service.own.tick("session-expiry-and-webhooks", at(t0, 120))).toBeNull();
    expect((await service.own.sql`select count(*)::int as n from private.outbox_events where type = 'session.expired'`)[0].n).toBe(2);
  });

  it("a completion still running when the session expires is refused at its end and rolled back; the tick leaves a held session alone", async () => {
    const { merchant } = await merchantWithEndpoint(service);
    const t0 = new Date();
    const session = await openSession(merchant.keys.sk_test, { action: "login", ttl_seconds: 60 }, t0);
    const screen = (await boot(session.session_token, { now: at(t0, 1) })).body;
    const uuid = session.session_id.slice(3);
    const rollback = new Error("rollback");
    await service.own.sql
      .begin(async (tx) => {
        await rawRpc(tx, "hosted_session_complete_begin", {
          screen_token_hash: await sha256Hex(screen.screen_token),
          now: at(t0, 59).toISOString(),
        });
        await tx`insert into private.capture_nonces (environment, capture_nonce, merchant_id, acted_at)
          values ('test', ${screen.capture_nonce}, ${merchant.merchant_id}::uuid, ${at(t0, 60)})`;
        expect((await service.own.tick("session-expiry-and-webhooks", at(t0, 61)))?.sessions_expired ?? 0).toBe(0);
        const finish = rawRpc(tx, "hosted_session_complete_finish", {
          session_id: uuid,
          now: at(t0, 61).toISOString(),
          state: "completed",
          result: { approved: true, reason: null },
        });
        await expect(finish).rejects.toMatchObject({ code: "HA702" });
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback && (error as { code?: string }).code !== "HA702") throw error;
      });
    const acts = await service.own.sql`select count(*)::int as n from private.capture_nonces where capture_nonce = ${screen.capture_nonce}`;
    expect(acts[0].n, "the act was rolled back with the completion").toBe(0);
    expect(await service.own.tick("session-expiry-and-webhooks", at(t0, 62))).toMatchObject({ sessions_expired: 1 });
    expect((await readSession(merchant.keys.sk_test, session.session_id, at(t0, 62))).body).toMatchObject({ state: "expired" });
    const events = await service.own.sql`select type from private.outbox_events where data ->> 'id' = ${session.session_id}`;
    expect(events.map((e) => e.type)).toEqual(["session.expired"]);
  });
});

describe("hosted-session-create when the database refuses the write", () => {
  it("500 SESSION_WRITE_FAILED, saying nothing of the database", async () => {
    const merchant = await merchantFactory();
    await service.own
      .sql`alter table private.hosted_sessions add constraint refuses_this_reference check (external_txn_ref is distinct from 'refused-by-db')`;
    try {
      const res = await createSession(merchant.keys.sk_test, { action: "sign", external_txn_ref: "refused-by-db" });
      expect(errorOf(res)).toEqual({ status: 500, code: "SESSION_WRITE_FAILED" });
      expect(res.text).not.toMatch(/constraint|private\.|refuses_this_reference|stack/);
      expect((await createSession(merchant.keys.sk_test, { action: "sign", external_txn_ref: "accepted-by-db" })).status).toBe(201);
    } finally {
      await service.own.sql`alter table private.hosted_sessions drop constraint refuses_this_reference`;
    }
  });
});
