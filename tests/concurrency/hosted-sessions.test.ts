/**
 * Hosted sessions under real parallel requests: single use is the database's (of racing exchanges
 * of one token exactly one wins), and one opened session ends once (of racing completions exactly
 * one acts, and a cancel racing a completion never lands after it).
 */
import { describe, expect, it } from "vitest";
import { merchantFactory, testDb } from "../harness/factories";
import { newStranger } from "../harness/identity";
import { boot, consumeSession, openSession, screenCall } from "../harness/sessions";

const CONTENDERS = 16;

describe("hosted sessions under concurrency", () => {
  it(`of ${CONTENDERS} concurrent exchanges of one token (service role, merchant key, screen boot) exactly one wins`, async () => {
    const m = await merchantFactory();
    for (let round = 0; round < 3; round++) {
      const session = await openSession(m.keys.sk_test);
      const results = await Promise.all(
        Array.from({ length: CONTENDERS }, (_, i) =>
          i % 3 === 0
            ? consumeSession(session.session_token)
            : i % 3 === 1
              ? consumeSession(session.session_token, { key: m.keys.sk_test })
              : boot(session.session_token),
        ),
      );
      const winners = results.filter((r) => r.status === 200);
      const losers = results.filter((r) => r.status === 409);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(CONTENDERS - 1);
      for (const loser of losers) expect(loser.body.code).toBe("SESSION_ALREADY_CONSUMED");
      const [row] = await testDb()`select screen_token_hash, capture_nonce from private.hosted_sessions
        where id = ${session.session_id.slice(3)}::uuid`;
      expect(row.capture_nonce).toBe(winners[0].body.capture_nonce);
    }
  });

  it("of concurrent completions of one session exactly one acts and records one outcome and one event", async () => {
    const m = await merchantFactory();
    const person = newStranger();
    const session = await openSession(m.keys.sk_test, { action: "enroll" });
    const screen = (await boot(session.session_token)).body;
    const { descriptor } = person.capture({ nonce: screen.capture_nonce, light: true });
    const body = {
      capture_nonce: screen.capture_nonce,
      face_template: descriptor,
      consent: { version: "hosted-capture-1", retention_days: 365, accepted: true },
    };
    const results = await Promise.all(Array.from({ length: 8 }, () => screenCall("complete", screen.screen_token, body)));
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(winners[0].body.state).toBe("completed");
    for (const loser of results.filter((r) => r.status !== 200)) {
      expect(loser.status).toBe(409);
      expect(["COMPLETION_IN_PROGRESS", "SESSION_ENDED"]).toContain(loser.body.code);
    }
    const events = await testDb()`select type from private.outbox_events
      where merchant_id = ${m.merchant_id}::uuid and data ->> 'id' = ${session.session_id}`;
    expect(events.map((e) => e.type)).toEqual(["session.completed"]);
    const [nonce] =
      await testDb()`select acted_at is not null as acted from private.capture_nonces where capture_nonce = ${screen.capture_nonce}`;
    expect(nonce.acted).toBe(true);
  });

  it("a cancel racing a completion: the session ends exactly once, as one of them says", async () => {
    const m = await merchantFactory();
    for (let round = 0; round < 4; round++) {
      const session = await openSession(m.keys.sk_test);
      const screen = (await boot(session.session_token)).body;
      const { descriptor } = newStranger().capture({ nonce: screen.capture_nonce, light: true });
      const [completed, cancelled] = await Promise.all([
        screenCall("complete", screen.screen_token, { capture_nonce: screen.capture_nonce, face_template: descriptor }),
        screenCall("cancel", screen.screen_token, {}),
      ]);
      const ended = [completed, cancelled].filter((r) => r.status === 200);
      expect(ended).toHaveLength(1);
      const [row] = await testDb()`select state from private.hosted_sessions where id = ${session.session_id.slice(3)}::uuid`;
      expect(row.state).toBe(ended[0].body.state);
      const events = await testDb()`select count(*)::int as n from private.outbox_events where data ->> 'id' = ${session.session_id}`;
      expect(events[0].n).toBe(1);
    }
  });
});
