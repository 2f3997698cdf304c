/**
 * request_authenticate answers a circuit breaker's state when asked (D-506): the state
 * circuit_breaker_state answers, for the merchant and environment just authenticated, so the sink's
 * breaker costs no round trip of its own. Rolled-back transactions with explicit `now` values.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { rolledBack } from "../harness/factories";

type Answer = Record<string, any>;
const T0 = new Date("2027-05-03T10:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();

describe.skipIf(!process.env.DATABASE_URL)("request_authenticate with a breaker", () => {
  it("answers the breaker's state for the caller's tenant, as circuit_breaker_state does, and nothing without one", async () => {
    await rolledBack(async (tx) => {
      const merchantId = randomUUID();
      await tx.unsafe(`insert into private.merchants (id, name) values ($1, 'breaker test')`, [merchantId]);
      const breaker = { deployment: `d-${randomUUID()}`, function_name: "process-biovital-transaction" };
      const tenant = { merchant_id: merchantId, environment: "test" };
      const authenticate = (seconds: number, withBreaker = true) =>
        rawRpc<Answer>(tx, "request_authenticate", {
          tenant,
          now: at(seconds),
          nonce: randomUUID(),
          window_seconds: 300,
          ...(withBreaker && { breaker }),
        });

      expect((await authenticate(0)).breaker).toEqual({ open: false, retry_after_seconds: 1 });
      expect(await authenticate(0, false)).not.toHaveProperty("breaker");
      for (let i = 0; i < 10; i++)
        await rawRpc(tx, "circuit_breaker_record", {
          ...breaker,
          ...tenant,
          now: at(1),
          window_seconds: 60,
          threshold: 10,
          open_seconds: 30,
        });
      const state = await rawRpc<Answer>(tx, "circuit_breaker_state", { ...breaker, ...tenant, now: at(11) });
      expect(state).toEqual({ open: true, retry_after_seconds: 20 });
      expect((await authenticate(11)).breaker).toEqual(state);
      // another merchant's breaker is not this one's
      const other = randomUUID();
      await tx.unsafe(`insert into private.merchants (id, name) values ($1, 'other')`, [other]);
      const elsewhere = await rawRpc<Answer>(tx, "request_authenticate", {
        tenant: { merchant_id: other, environment: "test" },
        now: at(11),
        breaker,
      });
      expect(elsewhere.breaker.open).toBe(false);
    });
  });
});
