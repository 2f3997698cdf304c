/**
 * The outbox worker against real HTTP receivers on loopback. Every pass is a real cron tick of the
 * worker, run through Miniflare's scheduled-event API at a time the test chooses; its summary is
 * the one the worker logs, read from the tick's trace (tests/harness/own-service.ts).
 *
 * Isolation: a tick is a global pass over everything due in its database, as in production. So
 * this file runs its own instance of the service (the outbox worker only) on its own fresh
 * database, never the run's shared one, and every test starts with an empty outbox and no
 * deliveries there: a pass sees exactly the events its test wrote, and its counts are exact.
 * Events are written with private.outbox_emit directly, as the mandate RPCs do.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../scripts/local/server";
import { rpc } from "../../shared/kernel/db/rpc";
import type { Environment } from "../../shared/kernel/principal";
import { replayEvents, rotateEndpointSecret } from "../../shared/webhooks/endpoints";
import { nominalRetryDelayMs, RETRY_WINDOW_MS } from "../../shared/webhooks/retry";
import { DELIVERY_CONCURRENCY, ENDPOINT_CONCURRENCY, type RunSummary } from "../../shared/webhooks/run";
import { verifyWebhook } from "../../shared/webhooks/signature";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { useOwnService } from "../harness/own-service";
import { startVariantServer } from "../harness/variant-server";
import { expectSignedBy, maxOverlap, type Responder } from "../harness/webhook-receiver";

const T0 = new Date("2031-03-03T12:00:00.000Z");
const HOUR = 3_600_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

const service = useOwnService("outbox_worker", ["session-expiry-and-webhooks"], { endpointsAt: T0 });
const { receiver, endpointFor } = service;

/** A merchant with one test-environment endpoint on a fresh receiver. */
async function subscribed(respond?: Responder, options: { eventTypes?: string[] } = {}) {
  const { merchant, receiver: r, endpoint } = await service.subscribed(respond, options);
  return { merchantId: merchant.merchant_id, receiver: r, endpoint };
}

/** Writes one event to the outbox as an RPC would, and returns its id. */
async function emit(
  merchantId: string,
  type: string,
  data: Record<string, unknown>,
  createdAt: Date,
  environment: Environment = "test",
): Promise<string> {
  const sql = testDb();
  const [row] =
    await sql`select private.outbox_emit(${merchantId}::uuid, ${environment}, ${type}, ${sql.json(data as never)}, ${createdAt.toISOString()}::timestamptz) as id`;
  return row.id as string;
}

/** What a pass that logged nothing did: the worker logs every pass that fanned out, claimed or failed. */
const IDLE: RunSummary = {
  fanned_out_events: 0,
  deliveries_created: 0,
  claimed: 0,
  succeeded: 0,
  retried: 0,
  failed: 0,
  released: 0,
  stale: 0,
  endpoints_disabled: 0,
  batches: 0,
  errors: [],
  ms: 0,
};

/** One cron tick of the outbox worker at `now`: the summary it logged. */
async function pass(now: Date): Promise<RunSummary> {
  return ((await service.own.tick("session-expiry-and-webhooks", now)) as RunSummary | null) ?? IDLE;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  origin: string;
  state: string;
  attempt_count: number;
  created_at: Date;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
}

async function deliveriesOf(endpointId: string): Promise<DeliveryRow[]> {
  const rows = await testDb()`
    select id, event_id, origin, state, attempt_count, created_at, next_attempt_at, last_attempt_at, last_status, last_error
    from private.webhook_deliveries where endpoint_id = ${endpointId}::uuid order by created_at, id`;
  return rows.map((row) => ({
    ...(row as unknown as DeliveryRow),
    created_at: new Date(row.created_at),
    next_attempt_at: row.next_attempt_at && new Date(row.next_attempt_at),
    last_attempt_at: row.last_attempt_at && new Date(row.last_attempt_at),
  }));
}

const revoked = (n = 1) => ({ mandate_id: `mdt_${n}`, granted_to: `agent_${n}`, revoked_at: T0.toISOString(), reason: "test" });

describe("delivery", () => {
  it("posts a signed envelope per event; the helper and an independent HMAC both verify it; nothing is sent twice", async () => {
    const { merchantId, receiver: r, endpoint } = await subscribed();
    const consumed = {
      mandate_id: "mdt_1",
      consumption_id: "cns_1",
      scope: "purchase",
      amount: 1250,
      currency: "EUR",
      action_ref: "order-1",
      remaining: { amount: 8750, currency: "EUR", count: null },
      period_resets_at: null,
      at_limit: false,
    };
    const ids = [
      await emit(merchantId, "mandate.granted", { mandate_id: "mdt_1", granted_to: "agent_1", scopes: ["purchase"] }, at(-3000)),
      await emit(merchantId, "mandate.consumed", consumed, at(-2000)),
      await emit(merchantId, "mandate.revoked", revoked(), at(-1000)),
    ];

    const summary = await pass(T0);
    expect(summary).toMatchObject({
      fanned_out_events: 3,
      deliveries_created: 3,
      claimed: 3,
      succeeded: 3,
      retried: 0,
      failed: 0,
      stale: 0,
    });
    expect(r.received).toHaveLength(3);
    for (const request of r.received) {
      await expectSignedBy(request, [endpoint.secret], T0);
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["service-event-id"]).toBe(request.envelope.id);
      expect(Object.keys(request.envelope)).toEqual(["id", "type", "created_at", "api_version", "attempt", "data"]);
    }
    const byId = r.processed();
    expect([...byId.keys()].sort()).toEqual([...ids].sort());
    expect(byId.get(ids[1])!.envelope).toEqual({
      id: ids[1],
      type: "mandate.consumed",
      created_at: at(-2000).toISOString(),
      api_version: "2026-09-14",
      attempt: 1,
      data: consumed,
    });
    expect(byId.get(ids[2])!.envelope.data).toMatchObject({ granted_to: "agent_1" });

    expect((await deliveriesOf(endpoint.endpoint_id)).map((d) => [d.state, d.attempt_count, d.last_status])).toEqual([
      ["succeeded", 1, 200],
      ["succeeded", 1, 200],
      ["succeeded", 1, 200],
    ]);
    expect(await pass(at(HOUR))).toMatchObject({ fanned_out_events: 0, claimed: 0 });
    expect(r.received).toHaveLength(3);
  });

  it("sends only the subscribed event types", async () => {
    const { merchantId, receiver: r } = await subscribed(undefined, { eventTypes: ["mandate.revoked"] });
    await emit(merchantId, "mandate.consumed", { mandate_id: "mdt_1" }, T0);
    const revokedId = await emit(merchantId, "mandate.revoked", revoked(), T0);
    expect(await pass(T0)).toMatchObject({ fanned_out_events: 2, deliveries_created: 1, succeeded: 1 });
    expect(r.received.map((x) => x.envelope.id)).toEqual([revokedId]);
  });

  it("keeps sandbox and live apart: each event reaches only its environment's endpoint, and the other secret does not verify it", async () => {
    const merchant = await merchantFactory();
    const sandbox = await receiver();
    const live = await receiver();
    const sandboxEndpoint = await endpointFor(merchant.merchant_id, sandbox.url, { environment: "test" });
    const liveEndpoint = await endpointFor(merchant.merchant_id, live.url, { environment: "live" });
    const other = await subscribed();

    const liveId = await emit(merchant.merchant_id, "mandate.revoked", revoked(1), T0, "live");
    const testId = await emit(merchant.merchant_id, "mandate.revoked", revoked(2), T0, "test");
    expect(await pass(T0)).toMatchObject({ fanned_out_events: 2, deliveries_created: 2, succeeded: 2 });
    expect(await pass(T0)).toMatchObject({ claimed: 0 });

    expect(live.received.map((x) => x.envelope.id)).toEqual([liveId]);
    expect(sandbox.received.map((x) => x.envelope.id)).toEqual([testId]);
    expect(other.receiver.received).toHaveLength(0);
    await expectSignedBy(live.received[0], [liveEndpoint.secret], T0);
    await expectSignedBy(sandbox.received[0], [sandboxEndpoint.secret], T0);
    const { rawBody, headers } = live.received[0];
    expect(await verifyWebhook(rawBody, headers["service-signature"] as string, [sandboxEndpoint.secret], { now: T0 })).toEqual({
      ok: false,
      reason: "no_matching_signature",
    });
  });

  it("sends at most six at once per pass and at most three to one endpoint", async () => {
    const merchant = await merchantFactory();
    const r = await receiver(() => ({ delayMs: 120 }));
    for (const path of ["a", "b", "c"]) await endpointFor(merchant.merchant_id, `${r.url}?endpoint=${path}`);
    for (let i = 0; i < 8; i++) await emit(merchant.merchant_id, "mandate.revoked", revoked(i), T0);

    expect(await pass(T0)).toMatchObject({ claimed: 24, succeeded: 24 });
    expect(r.received).toHaveLength(24);
    expect(maxOverlap(r.received)).toBeLessThanOrEqual(DELIVERY_CONCURRENCY);
    for (const path of ["a", "b", "c"]) {
      expect(maxOverlap(r.received.filter((x) => x.path.endsWith(`=${path}`)))).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
    }
    expect(maxOverlap(r.received)).toBeGreaterThan(ENDPOINT_CONCURRENCY); // endpoints really ran side by side
  });

  it("leaves no event, and sends nothing, when the writing transaction rolls back", async () => {
    const { merchantId, receiver: r } = await subscribed();
    const sql = testDb();
    await expect(
      sql.begin(async (tx) => {
        await tx`select private.outbox_emit(${merchantId}::uuid, 'test', 'mandate.consumed', '{}'::jsonb, ${T0.toISOString()}::timestamptz)`;
        throw new Error("the consumption failed after its event was written");
      }),
    ).rejects.toThrow("the consumption failed");
    expect((await sql`select count(*)::int as n from private.outbox_events where merchant_id = ${merchantId}::uuid`)[0].n).toBe(0);
    expect(await pass(T0)).toMatchObject({ fanned_out_events: 0, claimed: 0 });
    expect(r.received).toHaveLength(0);
  });
});

describe("failures and retries", () => {
  it("retries on the documented backoff with jitter, gives up at 72 hours, and the failed event stays replayable with its id", async () => {
    let failing = true;
    const { merchantId, receiver: r, endpoint } = await subscribed(() => (failing ? { status: 500 } : undefined));
    const eventId = await emit(merchantId, "mandate.revoked", revoked(), T0);
    const passTimes: Date[] = [T0];
    expect(await pass(T0)).toMatchObject({ claimed: 1, retried: 1 });
    const windowEnd = (await deliveriesOf(endpoint.endpoint_id))[0].created_at.getTime() + RETRY_WINDOW_MS;

    for (let attempt = 1; attempt < 40; attempt++) {
      const [delivery] = await deliveriesOf(endpoint.endpoint_id);
      expect(delivery.attempt_count).toBe(attempt);
      expect(delivery).toMatchObject({ last_status: 500, last_error: "status 500" });
      if (delivery.state === "failed") break;
      expect(delivery.state).toBe("pending");
      const next = delivery.next_attempt_at!.getTime();
      const delay = next - delivery.last_attempt_at!.getTime();
      if (next === windowEnd) {
        expect(delay).toBeLessThanOrEqual(1.2 * nominalRetryDelayMs(attempt) + 1000); // the last attempt: the window's end
      } else {
        expect(delay).toBeGreaterThanOrEqual(0.8 * nominalRetryDelayMs(attempt));
        expect(delay).toBeLessThanOrEqual(1.2 * nominalRetryDelayMs(attempt) + 1000);
      }
      if (attempt <= 3) expect(await pass(new Date(next - 1000))).toMatchObject({ claimed: 0 }); // not a second early
      passTimes.push(new Date(next));
      expect(await pass(new Date(next))).toMatchObject({ claimed: 1 });
    }

    const [given] = await deliveriesOf(endpoint.endpoint_id);
    expect(given.state).toBe("failed");
    expect(given.last_attempt_at!.getTime()).toBeGreaterThanOrEqual(windowEnd);
    expect(given.last_attempt_at!.getTime() - windowEnd).toBeLessThan(60_000);
    expect(given.attempt_count).toBeGreaterThanOrEqual(17); // 18 nominally, 17 to 21 with jitter (docs/webhooks.md#retries)
    expect(given.attempt_count).toBeLessThanOrEqual(21);
    expect(r.received.map((x) => x.envelope.attempt)).toEqual(Array.from({ length: given.attempt_count }, (_, i) => i + 1));
    expect(new Set(r.received.map((x) => x.envelope.id))).toEqual(new Set([eventId]));
    for (const [i, request] of r.received.entries()) await expectSignedBy(request, [endpoint.secret], passTimes[i]);

    expect(await pass(at(100 * HOUR))).toMatchObject({ claimed: 0 });
    failing = false;
    expect(await replayEvents(testDb(), { eventId }, at(100 * HOUR))).toEqual({ events: 1, deliveries: 1 });
    expect(await pass(at(100 * HOUR))).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(r.received.at(-1)!.envelope).toMatchObject({ id: eventId, attempt: 1 });
    expect((await deliveriesOf(endpoint.endpoint_id)).map((d) => [d.origin, d.state])).toEqual([
      ["fanout", "failed"],
      ["replay", "succeeded"],
    ]);
  });

  it("honours Retry-After in seconds and as an HTTP date when it is later than the backoff", async () => {
    const answers: Responder = (request, index) => {
      const t = Number((request.headers["service-signature"] as string).split(",")[0].slice(2));
      if (index === 0) return { status: 503, headers: { "retry-after": "3600" } };
      if (index === 1) return { status: 429, headers: { "retry-after": new Date((t + 5 * 3600) * 1000).toUTCString() } };
      if (index === 2) return { status: 503, headers: { "retry-after": "1" } }; // sooner than the backoff: the backoff wins
      return undefined;
    };
    const { merchantId, receiver: r, endpoint } = await subscribed(answers);
    await emit(merchantId, "mandate.revoked", revoked(), T0);

    await pass(T0);
    let [delivery] = await deliveriesOf(endpoint.endpoint_id);
    let sent = delivery.last_attempt_at!.getTime();
    expect(delivery.next_attempt_at!.getTime() - sent).toBeGreaterThanOrEqual(3600_000);
    expect(delivery.next_attempt_at!.getTime() - sent).toBeLessThan(3600_000 + 2000);

    await pass(delivery.next_attempt_at!);
    [delivery] = await deliveriesOf(endpoint.endpoint_id);
    const t = Number((r.received[1].headers["service-signature"] as string).split(",")[0].slice(2));
    expect(delivery.next_attempt_at!.getTime()).toBe((t + 5 * 3600) * 1000);
    expect(delivery.last_status).toBe(429);

    await pass(delivery.next_attempt_at!);
    [delivery] = await deliveriesOf(endpoint.endpoint_id);
    sent = delivery.last_attempt_at!.getTime();
    expect(delivery.next_attempt_at!.getTime() - sent).toBeGreaterThanOrEqual(0.8 * nominalRetryDelayMs(3));

    expect(await pass(delivery.next_attempt_at!)).toMatchObject({ succeeded: 1 });
    expect(r.received.map((x) => x.envelope.attempt)).toEqual([1, 2, 3, 4]);
  });

  it("disables the endpoint on 410 Gone and fails its pending deliveries; nothing more is sent to it", async () => {
    const {
      merchantId,
      receiver: r,
      endpoint,
    } = await subscribed((request) => (request.envelope.data.mandate_id === "mdt_1" ? { status: 410 } : { status: 500 }));
    await emit(merchantId, "mandate.revoked", revoked(1), T0);
    await emit(merchantId, "mandate.revoked", revoked(2), T0);

    expect(await pass(T0)).toMatchObject({ claimed: 2, endpoints_disabled: 1 });
    const rows = await testDb()`select status, disabled_reason from private.webhook_endpoints where id = ${endpoint.endpoint_id}::uuid`;
    expect(rows[0]).toEqual({ status: "disabled", disabled_reason: "gone" });
    const deliveries = await deliveriesOf(endpoint.endpoint_id);
    expect(deliveries.map((d) => d.state)).toEqual(["failed", "failed"]);
    expect(deliveries.find((d) => d.last_status === 410)!.last_error).toMatch(/410 Gone/);

    await emit(merchantId, "mandate.revoked", revoked(3), T0);
    expect(await pass(at(HOUR))).toMatchObject({ fanned_out_events: 1, deliveries_created: 0, claimed: 0 });
    expect(r.received).toHaveLength(2);
  });

  it("does not follow a redirect: a 3xx is a failure and the target never hears of it", async () => {
    const target = await receiver();
    const { merchantId, endpoint } = await subscribed(() => ({ status: 307, headers: { location: target.url } }));
    await emit(merchantId, "mandate.revoked", revoked(), T0);
    expect(await pass(T0)).toMatchObject({ retried: 1, succeeded: 0 });
    expect(target.received).toHaveLength(0);
    expect((await deliveriesOf(endpoint.endpoint_id))[0]).toMatchObject({
      state: "pending",
      last_status: 307,
      last_error: "redirect 307 not followed",
    });
  });

  it("counts a timeout (WEBHOOK_TIMEOUT_MS) and a refused connection as failures", async () => {
    const { merchantId, receiver: r, endpoint } = await subscribed(() => ({ hang: true }));
    const closed = await receiver();
    await closed.close();
    const refused = await endpointFor(merchantId, closed.url);
    await emit(merchantId, "mandate.revoked", revoked(), T0);

    const started = Date.now();
    expect(await pass(T0)).toMatchObject({ claimed: 2, retried: 2 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.received).toHaveLength(1);
    expect((await deliveriesOf(endpoint.endpoint_id))[0]).toMatchObject({
      state: "pending",
      last_status: null,
      last_error: expect.stringMatching(/^timeout/),
    });
    expect((await deliveriesOf(refused.endpoint_id))[0]).toMatchObject({
      state: "pending",
      last_status: null,
      last_error: expect.stringMatching(/^connection failed/),
    });
  });
});

describe("claims and crashes", () => {
  it("a claim abandoned between claim and delivery is delivered after its lease, with the same id", async () => {
    const { merchantId, receiver: r } = await subscribed();
    const eventId = await emit(merchantId, "mandate.revoked", revoked(), T0);
    const sql = testDb();
    await rpc(sql, "webhook_fanout", { now: T0.toISOString() });
    const claimed = await rpc(sql, "webhook_deliveries_claim", {
      now: T0.toISOString(),
      lease_seconds: 60,
    });
    expect(claimed.deliveries).toHaveLength(1); // ...and the claimer dies here

    expect(await pass(at(30_000))).toMatchObject({ claimed: 0 });
    expect(await pass(at(61_000))).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(r.received.map((x) => [x.envelope.id, x.envelope.attempt])).toEqual([[eventId, 2]]);
  });

  it("refuses the result of a claim whose lease was taken over", async () => {
    const { merchantId, endpoint } = await subscribed();
    await emit(merchantId, "mandate.revoked", revoked(), T0);
    const sql = testDb();
    await rpc(sql, "webhook_fanout", { now: T0.toISOString() });
    const first = await rpc(sql, "webhook_deliveries_claim", { now: T0.toISOString(), lease_seconds: 60 });
    const second = await rpc(sql, "webhook_deliveries_claim", {
      now: at(61_000).toISOString(),
      lease_seconds: 60,
    });
    expect(second.deliveries[0]).toMatchObject({ delivery_id: first.deliveries[0].delivery_id, attempt: 2 });

    const late = await rpc(sql, "webhook_deliveries_record", {
      now: at(62_000).toISOString(),
      results: [{ ...first.deliveries[0], outcome: "succeeded", status: 200, attempted_at: T0.toISOString() }],
    });
    expect(late).toMatchObject({ recorded: 0, stale: 1 });
    expect((await deliveriesOf(endpoint.endpoint_id))[0]).toMatchObject({ state: "delivering", attempt_count: 2 });
  });

  it("overlapping claims never take the same delivery", async () => {
    const { merchantId, endpoint } = await subscribed();
    for (let i = 0; i < 100; i++) await emit(merchantId, "mandate.revoked", revoked(i), T0);
    await rpc(testDb(), "webhook_fanout", { now: T0.toISOString() });
    const claims = await Promise.all(
      Array.from({ length: 8 }, () =>
        rpc(testDb(), "webhook_deliveries_claim", {
          now: T0.toISOString(),
          limit: 15,
          lease_seconds: 60,
        }),
      ),
    );
    const ids = claims.flatMap((c) => c.deliveries.map((d) => d.delivery_id));
    expect(ids).toHaveLength(100);
    expect(new Set(ids).size).toBe(100);
    expect((await deliveriesOf(endpoint.endpoint_id)).every((d) => d.state === "delivering" && d.attempt_count === 1)).toBe(true);
  });

  it("two overlapping worker passes send each event exactly once", async () => {
    const { merchantId, receiver: r, endpoint } = await subscribed(() => ({ delayMs: 5 }));
    for (let i = 0; i < 90; i++) await emit(merchantId, "mandate.revoked", revoked(i), T0);
    const summaries = await Promise.all(Array.from({ length: 4 }, () => pass(T0)));
    expect(summaries.reduce((n, s) => n + s.claimed, 0)).toBe(90);
    expect(summaries.reduce((n, s) => n + s.fanned_out_events, 0)).toBe(90);
    expect(r.received).toHaveLength(90);
    expect(r.processed().size).toBe(90);
    expect(r.received.every((x) => x.envelope.attempt === 1)).toBe(true);
    expect((await deliveriesOf(endpoint.endpoint_id)).every((d) => d.state === "succeeded" && d.attempt_count === 1)).toBe(true);
  });
});

describe("the cron worker", () => {
  it("serves no HTTP: every request answers as a function that does not exist, even where the test clock is on", async () => {
    expect(service.own.server.bindings.TEST_CLOCK).toBe("1");
    expect(errorOf(await call("session-expiry-and-webhooks"))).toEqual({ status: 404, code: "FUNCTION_NOT_FOUND" });
    expect(errorOf(await call("session-expiry-and-webhooks", { method: "POST", body: {} }))).toEqual({
      status: 404,
      code: "FUNCTION_NOT_FOUND",
    });
    expect(errorOf(await call("session-expiry-and-webhooks/run", { method: "POST", body: {}, now: T0 }))).toEqual({
      status: 404,
      code: "FUNCTION_NOT_FOUND",
    });
  });

  it("delivers on a cron tick at the tick's scheduled time", async () => {
    const { merchantId, receiver: r, endpoint } = await subscribed();
    const now = new Date();
    const eventId = await emit(merchantId, "mandate.revoked", revoked(), now);
    expect(await pass(now)).toMatchObject({ fanned_out_events: 1, claimed: 1, succeeded: 1 });
    expect(r.received.map((x) => x.envelope.id)).toEqual([eventId]);
    await expectSignedBy(r.received[0], [endpoint.secret], now);
  });
});

describe("a worker killed mid-delivery", () => {
  let variant: RunningServer;
  beforeAll(async () => {
    // a second outbox worker on this file's database, to be killed: as deployed (no test clock),
    // with the real 15-second timeout so its hanging send is still in flight when it dies
    variant = await startVariantServer(["session-expiry-and-webhooks"], { TEST_CLOCK: "0", CRON_TIMER: "0", WEBHOOK_TIMEOUT_MS: "15000" });
  }, 60_000);
  afterAll(async () => {
    await variant?.stop().catch(() => undefined);
  });

  it("the event is delivered again with the same id, and the receiver processes it once", async () => {
    let first = true;
    const { merchantId, receiver: r } = await subscribed(() => {
      if (!first) return undefined;
      first = false;
      return { hang: true };
    });
    const now = new Date();
    const eventId = await emit(merchantId, "mandate.revoked", revoked(), now);
    const tick = variant.triggerCron("session-expiry-and-webhooks", now).catch(() => undefined);
    await r.waitFor(1);
    await variant.stop(); // killed between sending and recording
    await tick;

    expect(await pass(new Date(now.getTime() + 30_000))).toMatchObject({ claimed: 0 }); // the dead pass's lease still holds
    expect(await pass(new Date(now.getTime() + 120_000))).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(r.received.map((x) => [x.envelope.id, x.envelope.attempt])).toEqual([
      [eventId, 1],
      [eventId, 2],
    ]);
    expect([...r.processed().keys()]).toEqual([eventId]);
  });
});

describe("rotation and replay", () => {
  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    const { merchantId, receiver: r, endpoint } = await subscribed();
    const rotated = await rotateEndpointSecret(testDb(), service.own.server.bindings.WEBHOOK_SECRET_KEY, endpoint.endpoint_id, { now: T0 });
    expect(rotated.secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(new Date(rotated.previous_valid_until).getTime()).toBe(T0.getTime() + 24 * HOUR);

    for (const offset of [HOUR, 24 * HOUR - 60_000]) {
      await emit(merchantId, "mandate.revoked", revoked(), at(offset));
      await pass(at(offset));
      await expectSignedBy(r.received.at(-1)!, [rotated.secret, endpoint.secret], at(offset));
    }
    await emit(merchantId, "mandate.revoked", revoked(), at(24 * HOUR + 1000));
    await pass(at(24 * HOUR + 1000));
    const last = r.received.at(-1)!;
    await expectSignedBy(last, [rotated.secret], at(24 * HOUR + 1000));
    expect(
      await verifyWebhook(last.rawBody, last.headers["service-signature"] as string, [endpoint.secret], { now: at(24 * HOUR + 1000) }),
    ).toEqual({
      ok: false,
      reason: "no_matching_signature",
    });
  });

  it("replays one event or a time range with the same ids, as new deliveries", async () => {
    const { merchantId, receiver: r, endpoint } = await subscribed();
    const ids = [];
    for (let i = 1; i <= 3; i++) ids.push(await emit(merchantId, "mandate.revoked", revoked(i), at(-i * HOUR)));
    await emit(merchantId, "mandate.revoked", revoked(9), at(-2 * HOUR), "live"); // other environment: never replayed here
    await pass(T0);
    expect(r.received).toHaveLength(3);

    expect(await replayEvents(testDb(), { eventId: ids[0] }, at(HOUR))).toEqual({ events: 1, deliveries: 1 });
    const range = { merchantId, environment: "test" as const, from: at(-2.5 * HOUR), to: at(-0.5 * HOUR) };
    expect(await replayEvents(testDb(), range, at(HOUR))).toEqual({ events: 2, deliveries: 2 });
    expect(await pass(at(HOUR))).toMatchObject({ claimed: 3, succeeded: 3 });

    const replayed = r.received.slice(3);
    expect(replayed.map((x) => x.envelope.id).sort()).toEqual([ids[0], ids[0], ids[1]].sort());
    expect(replayed.every((x) => x.envelope.attempt === 1)).toBe(true);
    for (const request of replayed) await expectSignedBy(request, [endpoint.secret], at(HOUR));
    expect(r.processed().size).toBe(3);
    expect((await deliveriesOf(endpoint.endpoint_id)).filter((d) => d.origin === "replay")).toHaveLength(3);
  });
});
