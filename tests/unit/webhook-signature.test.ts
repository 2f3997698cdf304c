import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseSignatureHeader, signWebhook, verifyWebhook } from "../../shared/webhooks/signature";

const secret = "whsec_0123456789abcdefghijABCDEFGHIJ0123456789x";
const other = "whsec_ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlk0";
const body =
  '{"id":"5f0c","type":"mandate.revoked","created_at":"2031-01-01T00:00:00.000Z","api_version":"2026-09-14","attempt":1,"data":{"granted_to":"agent_1"}}';
const t = 1_924_992_000; // 2031-01-01T00:00:00Z
const now = new Date(t * 1000);

function hmac(key: string, message: string): string {
  return createHmac("sha256", key).update(message, "utf8").digest("hex");
}

describe("signWebhook", () => {
  it("is t=<seconds>,v1=<hex HMAC-SHA256 of `<t>.<raw body>`>, as node:crypto computes it", async () => {
    expect(await signWebhook(body, [secret], t)).toBe(`t=${t},v1=${hmac(secret, `${t}.${body}`)}`);
  });

  it("carries one v1 per secret, in the order given", async () => {
    expect(await signWebhook(body, [secret, other], t)).toBe(`t=${t},v1=${hmac(secret, `${t}.${body}`)},v1=${hmac(other, `${t}.${body}`)}`);
  });

  it("signs the body byte for byte (non-ASCII included)", async () => {
    const unicode = '{"data":{"label":"Café ☕ 東京"}}';
    expect(await signWebhook(unicode, [secret], t)).toBe(`t=${t},v1=${hmac(secret, `${t}.${unicode}`)}`);
  });

  it("refuses a missing secret or a bad timestamp", async () => {
    await expect(signWebhook(body, [], t)).rejects.toThrow();
    await expect(signWebhook(body, [secret], 1.5)).rejects.toThrow();
    await expect(signWebhook(body, [secret], -1)).rejects.toThrow();
  });
});

describe("verifyWebhook", () => {
  it("accepts a valid signature", async () => {
    const header = await signWebhook(body, [secret], t);
    expect(await verifyWebhook(body, header, [secret], { now })).toEqual({ ok: true, timestamp: t });
    expect(await verifyWebhook(body, header, secret, { now })).toEqual({ ok: true, timestamp: t });
  });

  it("accepts any matching v1, whichever secret the receiver holds during a rotation", async () => {
    const header = await signWebhook(body, [secret, other], t);
    expect((await verifyWebhook(body, header, [other], { now })).ok).toBe(true);
    expect((await verifyWebhook(body, header, [secret], { now })).ok).toBe(true);
    expect((await verifyWebhook(body, header, ["whsec_unrelated", other], { now })).ok).toBe(true);
  });

  it("rejects a wrong secret, a changed body and a changed timestamp", async () => {
    const header = await signWebhook(body, [secret], t);
    expect(await verifyWebhook(body, header, [other], { now })).toEqual({ ok: false, reason: "no_matching_signature" });
    expect(await verifyWebhook(body.replace("agent_1", "agent_2"), header, [secret], { now })).toEqual({
      ok: false,
      reason: "no_matching_signature",
    });
    expect(await verifyWebhook(`${body} `, header, [secret], { now })).toEqual({ ok: false, reason: "no_matching_signature" });
    const shifted = header.replace(`t=${t}`, `t=${t + 1}`);
    expect(await verifyWebhook(body, shifted, [secret], { now })).toEqual({ ok: false, reason: "no_matching_signature" });
    expect(await verifyWebhook(body, header, [], { now })).toEqual({ ok: false, reason: "no_matching_signature" });
  });

  it("rejects a timestamp more than five minutes away, either way; the tolerance is adjustable", async () => {
    const header = await signWebhook(body, [secret], t);
    const later = (seconds: number) => new Date((t + seconds) * 1000);
    expect((await verifyWebhook(body, header, [secret], { now: later(300) })).ok).toBe(true);
    expect(await verifyWebhook(body, header, [secret], { now: later(301) })).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" });
    expect((await verifyWebhook(body, header, [secret], { now: later(-300) })).ok).toBe(true);
    expect(await verifyWebhook(body, header, [secret], { now: later(-301) })).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" });
    expect((await verifyWebhook(body, header, [secret], { now: later(900), toleranceSeconds: 900 })).ok).toBe(true);
  });

  it("uses the current time by default", async () => {
    const fresh = Math.floor(Date.now() / 1000);
    expect((await verifyWebhook(body, await signWebhook(body, [secret], fresh), [secret])).ok).toBe(true);
    expect((await verifyWebhook(body, await signWebhook(body, [secret], fresh - 3600), [secret])).ok).toBe(false);
  });

  it("reports a missing or malformed header", async () => {
    const mac = hmac(secret, `${t}.${body}`);
    expect(await verifyWebhook(body, null, [secret], { now })).toEqual({ ok: false, reason: "missing_header" });
    expect(await verifyWebhook(body, "", [secret], { now })).toEqual({ ok: false, reason: "missing_header" });
    for (const header of [
      `v1=${mac}`,
      `t=${t}`,
      `t=${t},t=${t},v1=${mac}`,
      `t=abc,v1=${mac}`,
      `t=${t},v1=${mac.toUpperCase()}`,
      `t=${t},v1=${mac.slice(2)}`,
      "garbage",
    ]) {
      expect(await verifyWebhook(body, header, [secret], { now }), header).toEqual({ ok: false, reason: "malformed_header" });
    }
  });

  it("skips schemes it does not know and tolerates spaces", async () => {
    const mac = hmac(secret, `${t}.${body}`);
    expect((await verifyWebhook(body, `t=${t}, v0=deadbeef, v1=${mac}`, [secret], { now })).ok).toBe(true);
    expect(parseSignatureHeader(`t=${t},v2=${"a".repeat(64)},v1=${mac}`)).toEqual({ timestamp: t, signatures: [mac] });
  });
});
