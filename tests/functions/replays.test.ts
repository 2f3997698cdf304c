import { describe, expect, it } from "vitest";
import { authorisedAgent, connect, ownedMerchant, body as toolBody } from "../harness/agents";
import { merchantFactory } from "../harness/factories";
import { call, replayHeaders } from "../harness/http";
import { enrollStranger, transact } from "../harness/identity";
import { consume, issue, mandateBody, proofCapture, standInRequest } from "../harness/mandates";
import { v1 } from "../harness/resource-api";

/**
 * A replay of a consumption is answered by the mandate's ledger on every surface (issue 25;
 * mandate_consume): the consumption with idempotent_replay true and the mandate's status now, and
 * once the mandate is revoked the refusal mandate_revoked, still naming the consumption. Where there
 * is a header, `Idempotency-Status: replayed` says what the body says.
 */
describe("a replay after revocation is one answer on every surface (issue 25)", () => {
  it("mandate-consume, /v1 check, the sink's stand-in and the MCP tool each replay the refusal mandate_revoked, marked replayed", async () => {
    const { merchant, owner } = await ownedMerchant();
    const { provider } = await authorisedAgent(owner.session_token);
    const agentId = provider.client.client_id as string;
    const client = await connect(provider);
    const person = await enrollStranger(merchant.keys.pk_test);
    const terms = { granted_to: agentId, scopes: ["login"], ceiling: { kind: "count", count: 10, period: "lifetime" } };
    const captureId = await proofCapture(merchant, person, { document: true, terms });
    const issued = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(issued.status, issued.text).toBe(201);
    const mandateId = issued.body.mandate_id as string;
    const key = merchant.keys.sk_test;

    const keys = { consume: `idem-${crypto.randomUUID()}`, check: `idem-${crypto.randomUUID()}`, sink: `idem-${crypto.randomUUID()}` };
    const mcpArgs = { mandate_id: mandateId, scope: "login", idempotency_key: `idem-${crypto.randomUUID()}` };
    const sinkRequest = standInRequest(person, mandateId);
    const surfaces = {
      consume: () => consume(key, { mandate_id: mandateId, scope: "login" }, { idempotencyKey: keys.consume }),
      check: () => v1(`/mandates/${mandateId}/check`, { key, body: { operation: "login" }, idempotencyKey: keys.check }),
      sink: () => transact(key, sinkRequest, { headers: { ...replayHeaders(), "idempotency-key": keys.sink } }),
      mcp: async () => toolBody(await client.callTool({ name: "mandate-consume", arguments: mcpArgs })),
    };

    // First answers: allowed, no replay, no header.
    const first = { consume: await surfaces.consume(), check: await surfaces.check(), sink: await surfaces.sink() };
    const mcpFirst = await surfaces.mcp();
    for (const answer of [first.consume.body, first.check.body, first.sink.body.mandate, mcpFirst]) {
      expect(answer).toMatchObject({ idempotent_replay: false });
    }
    for (const answer of Object.values(first)) expect(answer.headers.get("idempotency-status"), answer.text).toBeNull();

    // Replayed while the mandate stands: the consumption again, a replay, the mandate active.
    const before = { consume: await surfaces.consume(), check: await surfaces.check(), sink: await surfaces.sink() };
    expect(before.consume.body).toEqual({ ...first.consume.body, idempotent_replay: true, mandate_status: "active" });
    expect(before.check.body).toEqual({ ...first.check.body, idempotent_replay: true, mandate_status: "active" });
    expect(before.sink.body).toEqual({
      ...first.sink.body,
      mandate: { ...first.sink.body.mandate, idempotent_replay: true, mandate_status: "active" },
    });
    for (const answer of Object.values(before)) expect(answer.headers.get("idempotency-status"), answer.text).toBe("replayed");
    expect(await surfaces.mcp()).toEqual({ ...mcpFirst, idempotent_replay: true, mandate_status: "active" });

    const revoked = await call("mandate-revoke", { key, body: { mandate_id: mandateId } });
    expect(revoked.status, revoked.text).toBe(200);

    // Replayed after the revocation: the same refusal everywhere, naming the consumption that happened.
    const refusalOf = (consumptionId: unknown) => ({
      allowed: false,
      reason: "mandate_revoked",
      step_up_available: false,
      idempotent_replay: true,
      mandate_status: "revoked",
      consumption_id: consumptionId,
    });
    const after = { consume: await surfaces.consume(), check: await surfaces.check(), sink: await surfaces.sink() };
    expect(after.consume.status).toBe(200);
    expect(after.consume.body).toMatchObject(refusalOf(first.consume.body.consumption_id));
    expect(after.check.status).toBe(200);
    expect(after.check.body).toMatchObject(refusalOf(first.check.body.consumption_id));
    expect(after.sink.status).toBe(200);
    expect(after.sink.body).toMatchObject({ success: false, status: "refused", ...refusalOf(first.sink.body.mandate.consumption_id) });
    for (const answer of Object.values(after)) expect(answer.headers.get("idempotency-status"), answer.text).toBe("replayed");
    expect(await surfaces.mcp()).toMatchObject(refusalOf(mcpFirst.consumption_id));

    // Nothing was consumed twice.
    const read = await call("mandate-get", { key, query: { id: mandateId } });
    expect(read.body.consumptions).toHaveLength(4);
  });

  it("a refusal replayed from the store is the original, byte for byte, with the header", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const terms = { scopes: ["login"], ceiling: { kind: "count", count: 1, period: "lifetime" } };
    const issued = await issue(merchant.keys.sk_test, mandateBody(person, await proofCapture(merchant, person, { document: true, terms })));
    expect(issued.status, issued.text).toBe(201);
    const key = merchant.keys.sk_test;
    const refused = { operation: "payment", context: { merchant: "books.example", country: "PT" } };
    const idempotencyKey = `idem-${crypto.randomUUID()}`;
    const first = await v1(`/mandates/${issued.body.mandate_id}/check`, { key, body: refused, idempotencyKey });
    expect(first.body).toMatchObject({ allowed: false, reason: expect.any(String) });
    const replay = await v1(`/mandates/${issued.body.mandate_id}/check`, { key, body: refused, idempotencyKey });
    expect(replay.headers.get("idempotency-status")).toBe("replayed");
    expect(replay.text).toBe(first.text);
  });
});
