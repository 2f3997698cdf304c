import { describe, expect, it } from "vitest";
import { randomHex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";
import { call } from "../harness/http";

const CONTENDERS = 20;

/** One reserve per merchant (so the per-key reserve limit of 10 never interferes), all at once. */
async function race(keys: string[], alias: string, now: Date) {
  return Promise.all(keys.map((key) => call("alias-availability", { key, now, body: { action: "reserve", alias, ttl_seconds: 60 } })));
}

describe("alias reserve under concurrency", () => {
  it(`of ${CONTENDERS} concurrent reserve calls for one alias exactly one wins, again once it has expired`, async () => {
    const merchants = await Promise.all(Array.from({ length: CONTENDERS }, () => merchantFactory()));
    const keys = merchants.map((m) => m.keys.pk_test);
    const alias = `race_${randomHex(6)}`;
    const t0 = new Date();

    for (const now of [t0, new Date(t0.getTime() + 61_000)]) {
      const results = await race(keys, alias, now);
      const winners = results.filter((r) => r.status === 200);
      const losers = results.filter((r) => r.status === 409);
      expect(winners).toHaveLength(1);
      expect(winners[0].body).toMatchObject({ alias, reserved: true, claim_token: expect.stringMatching(/^ct_/) });
      expect(losers).toHaveLength(CONTENDERS - 1);
      for (const loser of losers) expect(loser.body).toEqual({ error: expect.any(String), code: "ALIAS_TAKEN" });

      const winner = merchants[results.indexOf(winners[0])];
      const rows = await testDb()`select merchant_id from private.aliases where environment = 'test' and alias = ${alias}`;
      expect(rows.map((r) => r.merchant_id)).toEqual([winner.merchant_id]);
    }
  });
});
