/**
 * The delivery log of /v1/webhook_deliveries against the real outbox worker and a real receiver on
 * loopback: an endpoint registered through the API, a test event sent by a cron tick, every attempt
 * kept with its status, latency, the first bytes of the answer and the next retry; a rotation signs
 * the retry with both secrets; a replay sends the same event again. Its own service and database,
 * since a tick is a global pass (tests/harness/own-service.ts).
 */
import { describe, expect, it } from "vitest";
import { merchantFactory } from "../harness/factories";
import { useOwnService } from "../harness/own-service";
import { v1 } from "../harness/resource-api";
import { expectSignedBy } from "../harness/webhook-receiver";

const service = useOwnService("mgmt_deliveries", ["resource-api", "session-expiry-and-webhooks"]);

async function tick(at: Date) {
  return service.own.tick("session-expiry-and-webhooks", at);
}

describe("the delivery log", () => {
  it("sends a test event signed with the endpoint's secret and logs the attempt: status, latency, the answer's first bytes", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const receiver = await service.receiver();
    const endpoint = await v1("/webhook_endpoints", { key, body: { url: receiver.url } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const test = await v1(`/webhook_endpoints/${endpoint.body.id}/test`, { key, body: {} });
    const now = new Date();
    await tick(now);
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request.envelope).toMatchObject({
      id: test.body.event_id,
      type: "webhook.test",
      attempt: 1,
      data: { endpoint_id: endpoint.body.id },
    });
    await expectSignedBy(request, [endpoint.body.secret], now);

    const delivery = await v1(`/webhook_deliveries/${test.body.delivery_id}`, { key });
    expect(delivery.body).toMatchObject({ state: "succeeded", origin: "test", next_attempt_at: null, finished_at: expect.any(String) });
    expect(delivery.body.attempts).toEqual([
      {
        attempt: 1,
        attempted_at: expect.any(String),
        outcome: "succeeded",
        response_status: 200,
        latency_ms: expect.any(Number),
        response_excerpt: "ok",
        error: null,
        next_attempt_at: null,
      },
    ]);
    expect(delivery.body.attempts[0].latency_ms).toBeLessThan(5000);
  });

  it("logs a failed attempt with its next retry; after a rotation the retry carries both secrets; a replay sends the event again", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const receiver = await service.receiver((_request, index) => (index === 0 ? { status: 500 } : undefined));
    const endpoint = await v1("/webhook_endpoints", { key, body: { url: receiver.url } });
    const test = await v1(`/webhook_endpoints/${endpoint.body.id}/test`, { key, body: {} });
    const first = new Date();
    await tick(first);
    const failed = (await v1(`/webhook_deliveries/${test.body.delivery_id}`, { key })).body;
    expect(failed.state).toBe("pending");
    expect(failed.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: "retry", response_status: 500, response_excerpt: "no", error: "status 500" }),
    ]);
    const nextAt = new Date(failed.attempts[0].next_attempt_at);
    expect(failed.next_attempt_at).toBe(failed.attempts[0].next_attempt_at);
    // one minute, jittered by 20 %
    expect(nextAt.getTime() - first.getTime()).toBeGreaterThan(40_000);
    expect(nextAt.getTime() - first.getTime()).toBeLessThan(80_000);

    const rotated = await v1(`/webhook_endpoints/${endpoint.body.id}/rotate_secret`, { key, body: {} });
    const retryAt = new Date(nextAt.getTime() + 1000);
    await tick(retryAt);
    expect(receiver.received).toHaveLength(2);
    await expectSignedBy(receiver.received[1], [endpoint.body.secret, rotated.body.secret], retryAt);
    const succeeded = (await v1(`/webhook_deliveries/${test.body.delivery_id}`, { key })).body;
    expect(succeeded.state).toBe("succeeded");
    expect(succeeded.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(["retry", "succeeded"]);

    const replay = await v1(`/webhook_deliveries/${test.body.delivery_id}/replay`, { key, body: {} });
    expect(replay.body).toMatchObject({ events: 1, deliveries: 1 });
    await tick(new Date(retryAt.getTime() + 1000));
    expect(receiver.received).toHaveLength(3);
    expect(receiver.received[2].envelope).toMatchObject({ id: test.body.event_id, attempt: 1 });
    const log = await v1("/webhook_deliveries", { key, query: { endpoint_id: endpoint.body.id } });
    expect(log.body.data.map((d: { state: string }) => d.state)).toEqual(["succeeded", "succeeded"]);
  });
});
