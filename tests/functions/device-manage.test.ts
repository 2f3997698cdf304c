/**
 * device-manage over HTTP (issue 27; docs/devices.md, "Managing devices"): a person lists, names and
 * revokes their own devices with their first-party session; another person's device reads as
 * unknown; bad input, a merchant key, a bad or ended session are coded errors; and the merchants
 * that hold the person receive `device.registered` and `device.revoked` (each with its own
 * pseudonym) through a real cron tick of the outbox worker, while a merchant that does not hold
 * them receives nothing. That a revoked device signs nothing from the next request on is in
 * device-add.test.ts, where an approval is the next request.
 *
 * Own service (a tick is a global pass over its database's outbox).
 */
import { describe, expect, it } from "vitest";
import { identityOf, seedDevice } from "../harness/devices";
import { merchantFactory } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { useOwnService } from "../harness/own-service";
import { expectSignedBy } from "../harness/webhook-receiver";

const FUNCTIONS = ["process-biovital-enrollment", "device-manage", "revoke-consent", "session-expiry-and-webhooks"];
const service = useOwnService("device_manage", FUNCTIONS);

/** A minute from now, to the second: the people's sessions are minted at the wall clock and live 30 days. */
const T0 = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

/** A request to device-manage with the person's session (or `key` instead, to see it refused). */
function manage(path: "" | "/revoke" | "/rename", token: string | null, body?: unknown, options: { now?: Date; key?: string } = {}) {
  return call(`device-manage${path}`, {
    method: body === undefined ? "GET" : "POST",
    key: options.key ?? null,
    body,
    now: options.now ?? T0,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

/** A person enrolled with `merchant` and two devices of theirs (the second registered a minute later). */
async function personWithDevices(merchant: { merchant_id: string; keys: { pk_test: string } }) {
  const person = await enrollStranger(merchant.keys.pk_test);
  const identityId = identityOf(person.session_token);
  const first = await seedDevice(merchant.merchant_id, "test", identityId, { now: T0 });
  const second = await seedDevice(merchant.merchant_id, "test", identityId, { now: at(60), synced: true });
  return { person, identityId, first, second };
}

describe("device-manage", () => {
  it("lists the person's own devices, newest first, and nobody else's", async () => {
    const merchant = await merchantFactory();
    const { person, first, second } = await personWithDevices(merchant);
    const other = await personWithDevices(merchant);

    const res = await manage("", person.session_token, undefined, { now: at(120) });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body.devices.map((d: { device_id: string }) => d.device_id)).toEqual([second.device.device_id, first.device.device_id]);
    expect(res.body.devices[0]).toEqual({
      device_id: second.device.device_id,
      name: null,
      registered_via: "enroll",
      device_binding: "synced",
      attestation: { format: "none", verdict: "none" },
      aaguid: "00000000-0000-0000-0000-000000000000",
      backup_eligible: true,
      backup_state: true,
      transports: ["internal"],
      created_at: at(60).toISOString(),
      last_used_at: null,
      revoked_at: null,
    });
    expect(JSON.stringify(res.body)).not.toContain(first.credential.id);
    const theirs = await manage("", other.person.session_token, undefined, { now: at(120) });
    expect(theirs.body.devices.map((d: { device_id: string }) => d.device_id)).toEqual([
      other.second.device.device_id,
      other.first.device.device_id,
    ]);
  });

  it("revokes a device from the request's instant; a repeat keeps that instant; another person's device is not found", async () => {
    const merchant = await merchantFactory();
    const { person, first, second } = await personWithDevices(merchant);
    const other = await personWithDevices(merchant);

    const revoked = await manage("/revoke", person.session_token, { device_id: first.device.device_id }, { now: at(300) });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({
      already_revoked: false,
      device: { device_id: first.device.device_id, revoked_at: at(300).toISOString() },
    });
    const again = await manage("/revoke", person.session_token, { device_id: first.device.device_id }, { now: at(400) });
    expect(again.body).toMatchObject({ already_revoked: true, device: { revoked_at: at(300).toISOString() } });

    for (const device_id of [other.first.device.device_id, "dev_00000000000000000000000000000000", "dev_nothex", "mdt_1"]) {
      expect(errorOf(await manage("/revoke", person.session_token, { device_id }, { now: at(300) })), device_id).toEqual({
        status: 404,
        code: "not_found",
      });
    }
    const theirs = await manage("", other.person.session_token, undefined, { now: at(500) });
    expect(theirs.body.devices.every((d: { revoked_at: string | null }) => d.revoked_at === null)).toBe(true);
    const mine = await manage("", person.session_token, undefined, { now: at(500) });
    expect(mine.body.devices.map((d: { revoked_at: string | null }) => d.revoked_at)).toEqual([null, at(300).toISOString()]);
    expect(mine.body.devices[0].device_id).toBe(second.device.device_id);
  });

  it("names a device; a blank, over-long or controlled name and unknown fields are 400 INVALID_INPUT", async () => {
    const merchant = await merchantFactory();
    const { person, first } = await personWithDevices(merchant);
    const renamed = await manage("/rename", person.session_token, { device_id: first.device.device_id, name: "  Work phone " });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.device).toMatchObject({ device_id: first.device.device_id, name: "Work phone" });
    expect((await manage("", person.session_token)).body.devices[1].name).toBe("Work phone");

    for (const body of [
      { device_id: first.device.device_id, name: "   " },
      { device_id: first.device.device_id, name: "x".repeat(65) },
      { device_id: first.device.device_id, name: "tab\there" },
      { device_id: first.device.device_id },
      { device_id: first.device.device_id, name: "ok", extra: 1 },
    ]) {
      expect(errorOf(await manage("/rename", person.session_token, body)), JSON.stringify(body)).toEqual({
        status: 400,
        code: "INVALID_INPUT",
      });
    }
    for (const body of [{}, { device_id: 7 }, { device_id: "" }, [1]]) {
      expect(errorOf(await manage("/revoke", person.session_token, body)), JSON.stringify(body)).toEqual({
        status: 400,
        code: "INVALID_INPUT",
      });
    }
  });

  it("takes only a live first-party session: a merchant key, no token, a forged one and an ended session are refused", async () => {
    const merchant = await merchantFactory();
    const { person, first } = await personWithDevices(merchant);
    expect(errorOf(await manage("", null, undefined, { key: merchant.keys.sk_test }))).toEqual({
      status: 401,
      code: "USER_TOKEN_REQUIRED",
    });
    expect(errorOf(await manage("", null))).toEqual({ status: 401, code: "USER_TOKEN_REQUIRED" });
    expect(errorOf(await manage("", `${person.session_token.slice(0, -4)}AAAA`))).toEqual({ status: 401, code: "INVALID_USER_TOKEN" });

    // Withdrawing consent with the merchant ends the person's sessions with it (revoke-consent).
    const withdrawn = await call("revoke-consent", { key: merchant.keys.sk_test, body: { subject_ref: person.subject_ref }, now: T0 });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    expect(errorOf(await manage("", person.session_token, undefined, { now: at(1) }))).toEqual({ status: 403, code: "ACCESS_REVOKED" });
    expect(errorOf(await manage("/revoke", person.session_token, { device_id: first.device.device_id }, { now: at(1) }))).toEqual({
      status: 403,
      code: "ACCESS_REVOKED",
    });
  });

  it("sends device.registered and device.revoked, signed, to every merchant holding the person, each with its own pseudonym", async () => {
    const a = await service.subscribed();
    const b = await service.subscribed();
    const stranger = await service.subscribed();
    const person = await enrollStranger(a.merchant.keys.pk_test);
    const atB = await enrollStranger(b.merchant.keys.pk_test, person.face);
    const identityId = identityOf(person.session_token);
    expect(identityOf(atB.session_token)).toBe(identityId);

    const { device } = await seedDevice(a.merchant.merchant_id, "test", identityId, { now: T0 });
    const revoked = await manage("/revoke", person.session_token, { device_id: device.device_id }, { now: at(30) });
    expect(revoked.status, revoked.text).toBe(200);
    // A repeat writes no second event.
    expect((await manage("/revoke", person.session_token, { device_id: device.device_id }, { now: at(40) })).body.already_revoked).toBe(
      true,
    );

    const now = new Date(Date.now() + 1000);
    expect(await service.own.tick("session-expiry-and-webhooks", now)).toMatchObject({ fanned_out_events: 4, succeeded: 4 });
    for (const [{ receiver, endpoint }, subjectRef] of [
      [a, person.subject_ref],
      [b, atB.subject_ref],
    ] as const) {
      await receiver.waitFor(2);
      for (const request of receiver.received) await expectSignedBy(request, [endpoint.secret], now);
      const events = [...receiver.processed().values()].map((r) => r.envelope).sort((x, y) => x.created_at.localeCompare(y.created_at));
      expect(events.map((e) => [e.type, e.created_at])).toEqual([
        ["device.registered", T0.toISOString()],
        ["device.revoked", at(30).toISOString()],
      ]);
      expect(events[0].data).toEqual({
        device_id: device.device_id,
        subject_ref: subjectRef,
        device_binding: "synced",
        registered_via: "enroll",
        created_at: T0.toISOString(),
      });
      expect(events[1].data).toEqual({ device_id: device.device_id, subject_ref: subjectRef, revoked_at: at(30).toISOString() });
    }
    expect(stranger.receiver.received).toEqual([]);
  });
});
