/**
 * Webhooks delivered at once (docs/webhooks.md#delivery, D-660): a request whose change wrote events
 * a merchant waits for (a revocation, a hosted session's end, a test event) starts a quick pass for
 * that merchant after its answer, so the events arrive at a real loopback receiver with no cron
 * tick at all; the hot decision path (a consume) starts none, so its event waits for the tick; and
 * a quick pass racing a tick sends each event exactly once (the lease and skip-locked claim).
 *
 * Its own service and database, with WEBHOOK_QUICK_PASS=1 (the test run turns quick passes off so
 * the cron's tests count exactly): a tick is a global pass over its database.
 */
import { describe, expect, it } from "vitest";
import { merchantFactory, testDb } from "../harness/factories";
import { call } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { consume, issue, mandateBody, proofCapture } from "../harness/mandates";
import { Browser, signIn } from "../harness/me";
import { useOwnService } from "../harness/own-service";
import { v1 } from "../harness/resource-api";
import { boot, openSession, screenCall } from "../harness/sessions";
import { expectSignedBy, type Receiver } from "../harness/webhook-receiver";

const FUNCTIONS = [
  "process-biovital-enrollment",
  "process-biovital-transaction",
  "mandate-issue",
  "mandate-consume",
  "mandate-revoke",
  "hosted-session-create",
  "hosted-capture",
  "resource-api",
  "me",
  "session-expiry-and-webhooks",
];

const service = useOwnService("webhooks_soon", FUNCTIONS, { overrides: { WEBHOOK_QUICK_PASS: "1" } });

/** How long a test waits for a delivery no tick sent: "about a second" on an idle machine, generous on a loaded one. */
const ARRIVAL_MS = 8_000;

/** Resolves with the first request of an event of `type`, polling the receiver; null when none arrived within `ms`. */
async function arrival(receiver: Receiver, type: string, ms = ARRIVAL_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = receiver.received.find((request) => request.envelope.type === type);
    if (found) return found;
    if (Date.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a quick pass after the answer", () => {
  it("delivers a revocation's mandate.revoked with no tick, while a consume's mandate.consumed waits for the tick", async () => {
    const { merchant, receiver, endpoint } = await service.subscribed();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const granted = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(granted.status, granted.text).toBe(201);
    const mandateId = granted.body.mandate_id;
    const consumed = await consume(merchant.keys.sk_test, { mandate_id: mandateId, scope: "purchase", currency: "USD", amount: 300 });
    expect(consumed.body.allowed, consumed.text).toBe(true);

    // the decision path starts no pass: nothing arrives until the cron's tick
    expect(await arrival(receiver, "mandate.consumed", 3_000)).toBeNull();
    expect(receiver.received).toHaveLength(0);
    const tickedAt = new Date();
    expect(await service.own.tick("session-expiry-and-webhooks", tickedAt)).toMatchObject({ fanned_out_events: 2, succeeded: 2 });
    expect(receiver.received.map((r) => r.envelope.type).sort()).toEqual(["mandate.consumed", "mandate.granted"]);

    const revoked = await call("mandate-revoke", { key: merchant.keys.sk_test, body: { mandate_id: mandateId, reason: "done" } });
    expect(revoked.status, revoked.text).toBe(200);
    const request = await arrival(receiver, "mandate.revoked");
    expect(request, "mandate.revoked arrived without a tick").not.toBeNull();
    expect(request!.envelope).toMatchObject({ attempt: 1, data: { mandate_id: mandateId, reason: "done" } });
    await expectSignedBy(request!, [endpoint.secret], new Date());
    const [delivery] = await testDb()`select state, attempt_count from private.webhook_deliveries d
      join private.outbox_events o on o.id = d.event_id where o.type = 'mandate.revoked' and o.merchant_id = ${merchant.merchant_id}::uuid`;
    expect(delivery).toMatchObject({ state: "succeeded", attempt_count: 1 });
  });

  it("delivers mandate.revoked with no tick when the merchant revokes through /v1", async () => {
    const { merchant, receiver } = await service.subscribed();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const granted = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(granted.status, granted.text).toBe(201);
    const revoked = await v1(`/mandates/${granted.body.mandate_id}/revoke`, { key: merchant.keys.sk_test, body: { reason: "v1" } });
    expect(revoked.status, revoked.text).toBe(200);

    const request = await arrival(receiver, "mandate.revoked");
    expect(request, "mandate.revoked arrived without a tick").not.toBeNull();
    expect(request!.envelope.data).toMatchObject({ mandate_id: granted.body.mandate_id, reason: "v1" });
    // the grant went out in the same pass: the merchant's own events, none of another's
    expect(await arrival(receiver, "mandate.granted", 0)).not.toBeNull();
  });

  it("delivers the person's own acts on their page with no tick, each to the merchant it concerns", async () => {
    const [shop, travel] = await Promise.all([merchantFactory("Corner shop"), merchantFactory("Travel desk")]);
    const [shopHooks, travelHooks] = await Promise.all([service.receiver(), service.receiver()]);
    await service.endpointFor(shop.merchant_id, shopHooks.url);
    await service.endpointFor(travel.merchant_id, travelHooks.url, { eventTypes: ["consent.withdrawn"] });
    const person = await enrollStranger(shop.keys.pk_test);
    await enrollStranger(travel.keys.pk_test, person.face);
    const captureId = await proofCapture(shop, person, { document: true });
    const granted = await issue(shop.keys.sk_test, mandateBody(person, captureId));
    expect(granted.status, granted.text).toBe(201);
    const browser = new Browser();
    await signIn(browser, shop.merchant_id, person);

    const revoked = await browser.post("/mandates/revoke", { mandate_id: granted.body.mandate_id });
    expect(revoked.status, revoked.text).toBe(200);
    const told = await arrival(shopHooks, "mandate.revoked");
    expect(told, "mandate.revoked arrived without a tick").not.toBeNull();
    expect(told!.envelope.data).toMatchObject({ mandate_id: granted.body.mandate_id, revoked_by: "granting_human" });

    const withdrawn = await browser.post("/consents/withdraw", { merchant_id: travel.merchant_id, confirm: true });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    expect(await arrival(travelHooks, "consent.withdrawn"), "consent.withdrawn arrived without a tick").not.toBeNull();
    expect(shopHooks.received.map((r) => r.envelope.type)).not.toContain("consent.withdrawn");
  }, 120_000);

  it("delivers a hosted session's session.completed with no tick: the return channel", async () => {
    const { merchant, receiver, endpoint } = await service.subscribed();
    const person = await enrollStranger(merchant.keys.pk_test);
    const opened = await openSession(merchant.keys.sk_test, { action: "login" });
    const screen = (await boot(opened.session_token)).body;
    const body = {
      capture_nonce: screen.capture_nonce,
      face_template: person.capture({ nonce: screen.capture_nonce, light: true }).descriptor,
    };
    expect((await screenCall("complete", screen.screen_token, body)).body.state).toBe("completed");

    const request = await arrival(receiver, "session.completed");
    expect(request, "session.completed arrived without a tick").not.toBeNull();
    expect(request!.envelope.data).toMatchObject({ id: opened.session_id, state: "completed" });
    await expectSignedBy(request!, [endpoint.secret], new Date());
  });

  it("delivers a management test event with no tick", async () => {
    const { merchant, receiver } = await service.subscribed();
    const key = merchant.keys.sk_test;
    const created = await v1("/webhook_endpoints", { key, body: { url: receiver.url, event_types: ["webhook.test"] } });
    expect(created.status, created.text).toBe(201);
    const test = await v1(`/webhook_endpoints/${created.body.id}/test`, { key, body: {} });
    expect(test.status, test.text).toBe(202);

    const request = await arrival(receiver, "webhook.test");
    expect(request, "webhook.test arrived without a tick").not.toBeNull();
    expect(request!.envelope).toMatchObject({ id: test.body.event_id, data: { endpoint_id: created.body.id } });
    await expectSignedBy(request!, [created.body.secret], new Date());
  });

  it("never does another merchant's work: a quick pass leaves other merchants' events to the cron", async () => {
    const other = await service.subscribed();
    const now = new Date();
    await testDb()`select private.outbox_emit(${other.merchant.merchant_id}::uuid, 'test', 'mandate.granted', '{"n": 1}'::jsonb, ${now.toISOString()}::timestamptz)`;
    const { merchant, receiver } = await service.subscribed();
    const key = merchant.keys.sk_test;
    const created = await v1("/webhook_endpoints", { key, body: { url: receiver.url, event_types: ["webhook.test"] } });
    await v1(`/webhook_endpoints/${created.body.id}/test`, { key, body: {} });
    expect(await arrival(receiver, "webhook.test")).not.toBeNull();

    expect(other.receiver.received).toHaveLength(0);
    const [event] = await testDb()`select fanned_out_at from private.outbox_events where merchant_id = ${other.merchant.merchant_id}::uuid`;
    expect(event.fanned_out_at).toBeNull();
  });

  it("and a cron tick at the same moment send each event exactly once", async () => {
    const { merchant, receiver } = await service.subscribed();
    const key = merchant.keys.sk_test;
    const created = await v1("/webhook_endpoints", { key, body: { url: receiver.url, event_types: ["webhook.test"] } });
    expect(created.status, created.text).toBe(201);
    const now = new Date();
    const written = 40;
    for (let n = 0; n < written; n += 1) {
      await testDb()`select private.outbox_emit(${merchant.merchant_id}::uuid, 'test', 'mandate.granted', ${testDb().json({ n })}, ${now.toISOString()}::timestamptz)`;
    }
    // three test events' quick passes and the tick all fan out and claim this merchant's events at once
    const tests = 3;
    const answers = await Promise.all([
      ...Array.from({ length: tests }, () => v1(`/webhook_endpoints/${created.body.id}/test`, { key, body: {} })),
      service.own.tick("session-expiry-and-webhooks", new Date(now.getTime() + 1000)),
    ]);
    for (const answer of answers.slice(0, tests)) expect((answer as Awaited<ReturnType<typeof v1>>).status).toBe(202);
    const sent = written + tests; // the 40 to the first endpoint (every type), the test events to the second
    await Promise.race([receiver.waitFor(sent), new Promise((resolve) => setTimeout(resolve, 15_000))]);
    // whatever the quick pass still had in flight has landed by now
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    expect(receiver.received).toHaveLength(sent);
    expect(receiver.processed().size).toBe(sent);
    const deliveries = await testDb()`select d.state, d.attempt_count,
        (select count(*)::int from private.webhook_delivery_attempts a where a.delivery_id = d.id) as attempts
      from private.webhook_deliveries d where d.merchant_id = ${merchant.merchant_id}::uuid`;
    expect(deliveries).toHaveLength(sent);
    for (const delivery of deliveries) expect(delivery).toEqual({ state: "succeeded", attempt_count: 1, attempts: 1 });
  });
});
