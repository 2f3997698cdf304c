/**
 * End to end: real grants, consumes and revocations reach a registered endpoint as signed,
 * verifiable webhooks through a real cron tick of the outbox worker (Miniflare's scheduled-event
 * API, tests/harness/own-service.ts).
 *
 * Isolation: a tick is a global pass over everything due in its database. So this file runs its
 * own instance of the service (the functions it calls and the outbox worker) on its own fresh
 * database, and every test starts with an empty outbox there; the harness (`call`, `testDb`,
 * `merchantFactory`) points at that instance for the whole file.
 */
import { describe, expect, it } from "vitest";
import { merchantFactory, testDb } from "../harness/factories";
import { call } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { consume, issue, mandateBody, proofCapture } from "../harness/mandates";
import { useOwnService } from "../harness/own-service";
import { expectSignedBy } from "../harness/webhook-receiver";

/** What the file calls (through the harness's enrol, capture and mandate helpers), and the worker. */
const FUNCTIONS = [
  "process-biovital-enrollment",
  "process-biovital-transaction",
  "mandate-issue",
  "mandate-consume",
  "mandate-revoke",
  "session-expiry-and-webhooks",
];

const service = useOwnService("mandate_events", FUNCTIONS);

describe("mandate events through the outbox worker", () => {
  it("delivers mandate.granted, mandate.consumed (authoritative remaining), mandate.at_limit and mandate.revoked, signed", async () => {
    const { merchant, receiver, endpoint } = await service.subscribed();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const granted = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(granted.status, granted.text).toBe(201);
    const mandateId = granted.body.mandate_id;
    const action = { mandate_id: mandateId, scope: "purchase", currency: "USD" };
    expect((await consume(merchant.keys.sk_test, { ...action, amount: 300 })).body.allowed).toBe(true);
    expect((await consume(merchant.keys.sk_test, { ...action, amount: 400 })).body.at_limit).toBe(true);
    expect((await consume(merchant.keys.sk_test, { ...action, amount: 1 })).body.allowed).toBe(false);
    expect((await call("mandate-revoke", { key: merchant.keys.sk_test, body: { mandate_id: mandateId, reason: "done" } })).status).toBe(
      200,
    );

    const now = new Date(Date.now() + 1000);
    expect(await service.own.tick("session-expiry-and-webhooks", now)).toMatchObject({ fanned_out_events: 5, claimed: 5, succeeded: 5 });
    await receiver.waitFor(5);

    const events = [...receiver.processed().values()].map((r) => r.envelope).sort((a, b) => a.created_at.localeCompare(b.created_at));
    expect(events.map((e) => e.type).sort()).toEqual([
      "mandate.at_limit",
      "mandate.consumed",
      "mandate.consumed",
      "mandate.granted",
      "mandate.revoked",
    ]);
    for (const request of receiver.received) await expectSignedBy(request, [endpoint.secret], now);

    const byType = (type: string) => events.filter((e) => e.type === type);
    expect(byType("mandate.granted")[0].data).toMatchObject({
      mandate_id: mandateId,
      granted_to: granted.body.granted_to,
      scopes: ["purchase"],
    });
    expect(byType("mandate.consumed").map((e) => e.data.remaining)).toEqual(
      expect.arrayContaining([
        { amount: 400, currency: "USD", count: null },
        { amount: 0, currency: "USD", count: null },
      ]),
    );
    expect(byType("mandate.at_limit")[0].data).toMatchObject({ mandate_id: mandateId, remaining: { amount: 0, currency: "USD" } });
    expect(byType("mandate.revoked")[0].data).toMatchObject({ mandate_id: mandateId, granted_to: granted.body.granted_to, reason: "done" });
    for (const event of events) expect(event).toMatchObject({ api_version: expect.any(String), attempt: 1 });
  });

  it("with the default threshold, mandate.at_limit is written before a consumption that would overshoot is refused", async () => {
    // A merchant that never set a threshold: the default must warn before the agent's first refusal
    // (resource API 6: "crossed the configured threshold, before the agent is refused").
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const granted = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    const action = { mandate_id: granted.body.mandate_id, scope: "purchase", currency: "USD" };
    // 600 of 700: 100 left, below 20% of the ceiling but not zero (at_limit stays false on the answer).
    const crossing = await consume(merchant.keys.sk_test, { ...action, amount: 600 });
    expect(crossing.body).toMatchObject({ allowed: true, at_limit: false, remaining: { amount: 100 } });
    const events = async () =>
      await testDb()`select type, data from private.outbox_events where merchant_id = ${merchant.merchant_id}::uuid order by created_at, type`;
    const warned = (await events()).filter((e) => e.type === "mandate.at_limit");
    expect(warned).toHaveLength(1);
    expect(warned[0].data).toMatchObject({
      mandate_id: granted.body.mandate_id,
      consumption_id: crossing.body.consumption_id,
      remaining: { amount: 100, currency: "USD" },
      threshold_percent: 20,
    });
    // The next act would overshoot: refused, and the warning was already on its way.
    expect((await consume(merchant.keys.sk_test, { ...action, amount: 200 })).body.reason).toBe("ceiling_exceeded");
    expect((await events()).filter((e) => e.type === "mandate.at_limit")).toHaveLength(1);
  });

  it("a refused consume writes no event", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const granted = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    const refused = await consume(merchant.keys.sk_test, {
      mandate_id: granted.body.mandate_id,
      scope: "purchase",
      amount: 701,
      currency: "USD",
    });
    expect(refused.body.reason).toBe("ceiling_exceeded");
    const rows =
      await testDb()`select type from private.outbox_events where merchant_id = ${merchant.merchant_id}::uuid order by created_at`;
    expect(rows.map((r) => r.type)).toEqual(["mandate.granted"]);
  });
});
