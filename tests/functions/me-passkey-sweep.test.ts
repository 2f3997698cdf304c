/**
 * The minute cron's sweep of the person's page's passkey sign-in (docs/decisions.md, D-610, D-702): a real
 * tick of session-expiry-and-webhooks at a chosen time deletes the challenges that expired more than
 * a day before it and the refusals recorded more than a day before it, used or not, and keeps every
 * other. The rows are made through the page's own routes on the request clock, two days back and
 * now, so nothing waits. The same tick deletes the person's sign-ins that stopped counting (used,
 * or their hosted session over) more than a day before it (D-702). Own service: a tick is a global
 * pass over its database.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { assertWith, Browser, newUserHandle, passkeyStart, personWithPasskey, signIn } from "../harness/me";
import { useOwnService } from "../harness/own-service";

const service = useOwnService("me_passkey_sweep", ["process-biovital-enrollment", "hosted-capture", "me", "session-expiry-and-webhooks"]);

const T0 = new Date(Math.ceil(Date.now() / 1000) * 1000);
const hoursBefore = (hours: number) => new Date(T0.getTime() - hours * 3_600_000);

describe("me: the minute cron sweeps the passkey sign-in", () => {
  it("deletes challenges expired and refusals recorded more than a day before the tick; keeps the rest", async () => {
    const shop = await merchantFactory();
    const { credential } = await personWithPasskey(shop);
    const wrongHandle = newUserHandle();

    /** A challenge issued at `now` and left unused; its hash as stored. */
    const unused = async (now: Date) => sha256Hex((await assertWith(new Browser(), credential, { now })).challenge);
    /** A sign-in refused at `now` (a user handle the credential was not registered with): it uses its challenge. */
    const refused = async (now: Date) => {
      const answer = await passkeyStart(new Browser(), credential, { userHandle: wrongHandle, now });
      expect({ ...errorOf(answer), reason: answer.body.reason }).toEqual({
        status: 403,
        code: "UNAUTHORIZED_DEVICE",
        reason: "user_handle_mismatch",
      });
    };

    // Two days back: gone at the tick. A challenge issued 23 hours back (expired 2 minutes later) and
    // everything of now: kept, one day being the line for both.
    const old = [await unused(hoursBefore(48)), await unused(hoursBefore(48))];
    await refused(hoursBefore(48));
    const kept = [await unused(hoursBefore(23)), await unused(T0)];
    await refused(hoursBefore(23));
    await refused(T0);

    const db = testDb();
    const challenges = async () => (await db`select challenge_hash from private.person_passkey_challenges`).map((r) => r.challenge_hash);
    const refusals = async () =>
      (await db`select refused_at from private.person_passkey_refusals order by refused_at`).map((r) => (r.refused_at as Date).getTime());
    expect(await challenges()).toHaveLength(7);
    expect(await refusals()).toHaveLength(3);

    const summary = await service.own.tick("session-expiry-and-webhooks", T0);
    expect(summary).toMatchObject({ passkey_challenges_swept: 3, passkey_refusals_swept: 1 });
    const left = await challenges();
    expect(left).toHaveLength(4);
    expect(left).toEqual(expect.arrayContaining(kept));
    for (const gone of old) expect(left).not.toContain(gone);
    expect(await refusals()).toEqual([hoursBefore(23).getTime(), T0.getTime()]);

    // A second tick finds nothing more to delete.
    expect((await service.own.tick("session-expiry-and-webhooks", new Date(T0.getTime() + 60_000)))?.passkey_challenges_swept ?? 0).toBe(0);
  }, 120_000);

  it("deletes the sign-ins that stopped counting more than a day before the tick: used or over; keeps the rest", async () => {
    const shop = await merchantFactory();
    const { person } = await personWithPasskey(shop);
    /** A sign-in started at `now` and left there (its hosted session expires unused): its session's id. */
    const started = async (now: Date) => {
      const answer = await new Browser().call("/sign-in", { body: { merchant_id: shop.merchant_id, environment: "test" }, now });
      expect(answer.status, answer.text).toBe(201);
      const [row] = await testDb()`select session_id from private.person_sign_ins where created_at = ${now}`;
      return row.session_id as string;
    };
    /** A sign-in that signed the person in at `now`. */
    const used = async (now: Date) => {
      const browser = new Browser();
      await signIn(browser, shop.merchant_id, person, now);
      const [row] = await testDb()`select session_id from private.person_sign_ins where used_at = ${now}`;
      return row.session_id as string;
    };
    // Two days back, used or not: gone at the tick. Started 23 hours back (over 15 minutes later) or now: kept.
    const old = [await started(hoursBefore(48)), await used(hoursBefore(47))];
    const kept = [await started(hoursBefore(23)), await used(hoursBefore(23)), await started(T0)];

    const db = testDb();
    const ours = [...old, ...kept];
    const signIns = async () =>
      (await db`select session_id::text as id from private.person_sign_ins`).map((r) => r.id as string).filter((id) => ours.includes(id));
    expect(await signIns()).toHaveLength(5);

    const summary = await service.own.tick("session-expiry-and-webhooks", T0);
    expect(summary).toMatchObject({ person_sign_ins_swept: 2 });
    const left = await signIns();
    expect(left.sort()).toEqual([...kept].sort());
  }, 240_000);
});
