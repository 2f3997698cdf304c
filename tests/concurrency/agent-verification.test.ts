/**
 * A verification card under real parallel requests: its url opens the screen once. Of racing boots
 * of one card exactly one wins (the row lock of its hosted session); the card follows the winner.
 */
import { describe, expect, it } from "vitest";
import { ownedMerchant } from "../harness/agents";
import { testDb } from "../harness/factories";
import { cardResult, requestCard, screenClient, tokenOfCard } from "../harness/verifications";

/** This file's person at the screen (the screen limits its endpoints per client address). */
const { boot } = screenClient();

/** Fewer than the screen's ten boots a minute per session token, so every loser is refused by the row lock, not the limiter. */
const CONTENDERS = 8;

describe("agent verification cards under concurrency", () => {
  it(`of ${CONTENDERS} racing opens of one card exactly one wins; the others are 409 SESSION_ALREADY_CONSUMED`, async () => {
    const { merchant, owner } = await ownedMerchant();
    for (let round = 0; round < 3; round++) {
      const card = (await requestCard(owner.session_token, { merchant_id: merchant.merchant_id })).body;
      const token = tokenOfCard(card.url);
      const results = await Promise.all(Array.from({ length: CONTENDERS }, () => boot(token)));
      const winners = results.filter((r) => r.status === 200);
      const losers = results.filter((r) => r.status === 409);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(CONTENDERS - 1);
      for (const loser of losers) expect(loser.body.code).toBe("SESSION_ALREADY_CONSUMED");
      const [row] =
        await testDb()`select s.capture_nonce from private.agent_verifications v join private.hosted_sessions s on s.id = v.session_id
        where v.id = ${card.verification_id.slice(3)}::uuid`;
      expect(row.capture_nonce).toBe(winners[0].body.capture_nonce);
      expect((await cardResult(owner.session_token, card.verification_id)).body.state).toBe("opened");
    }
  });
});
