/**
 * The read views for support on /v1 (docs/management.md, "Read views") over HTTP: receipts, consents
 * and disclosures, each newest first in cursor pages with its filters; bad input, a publishable key,
 * a key without a reading scope, another merchant's and the other environment's rows (never seen),
 * and the reads bucket's 429.
 */
import { describe, expect, it } from "vitest";
import { disclose, discloseBody, disclosureFixture, revokeConsent } from "../harness/consent";
import { merchantFactory } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { presenceCapture } from "../harness/mandates";
import { v1 } from "../harness/resource-api";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;

async function keyWith(merchant: Merchant, scopes: string[]): Promise<string> {
  const made = await v1("/api_keys", { key: merchant.keys.sk_test, body: { scopes, name: scopes.join("+") } });
  expect(made.status, made.text).toBe(201);
  return made.body.secret as string;
}

/** Every id of a view, page by page of `limit`, following next_cursor to the end. */
async function everyId(path: string, key: string, query: Record<string, string> = {}, limit = 2): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; text: string; headers: Headers; body: any } = await v1(path, {
      key,
      query: { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.data.map((row: { id: string }) => row.id));
    cursor = res.body.next_cursor;
  } while (cursor);
  return ids;
}

const VIEWS = ["/receipts", "/consents", "/disclosures"] as const;

describe("GET /v1/receipts", () => {
  it("pages the environment's receipts newest first, filtered by facetoken, action and code; nothing personal beyond the facetoken", async () => {
    const merchant = await merchantFactory();
    const first = await enrollStranger(merchant.keys.pk_test);
    const second = await enrollStranger(merchant.keys.pk_test);
    const t0 = Date.now() - 60_000;
    const transactions = [
      await presenceCapture(merchant, first, { at: new Date(t0) }),
      await presenceCapture(merchant, second, { at: new Date(t0 + 1000) }),
      await presenceCapture(merchant, first, { at: new Date(t0 + 2000) }),
    ];
    const dashboard = await keyWith(merchant, ["management.read"]);
    const all = await v1("/receipts", { key: dashboard });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data.map((r: { transaction_id: string }) => r.transaction_id)).toEqual([...transactions].reverse());
    const newest = all.body.data[0];
    expect(newest).toMatchObject({
      object: "receipt",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      code: expect.stringMatching(/^RCPT-/),
      facetoken: first.subject_ref,
      action: "ACTION_LOGIN",
      amount: null,
      anchored: false,
      seal: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(Object.keys(newest).sort()).toEqual(
      [
        "id",
        "object",
        "code",
        "transaction_id",
        "facetoken",
        "action",
        "amount",
        "currency",
        "assurance_level",
        "device_binding",
        "seal",
        "anchored",
        "issued_at",
      ].sort(),
    );
    expect(await everyId("/receipts", dashboard)).toEqual(all.body.data.map((r: { id: string }) => r.id));
    const firsts = await v1("/receipts", { key: dashboard, query: { facetoken: first.subject_ref } });
    expect(firsts.body.data.map((r: { transaction_id: string }) => r.transaction_id)).toEqual([transactions[2], transactions[0]]);
    const byCode = await v1("/receipts", { key: dashboard, query: { code: newest.code } });
    expect(byCode.body.data.map((r: { id: string }) => r.id)).toEqual([newest.id]);
    expect((await v1("/receipts", { key: dashboard, query: { action: "ACTION_PAYMENT" } })).body.data).toEqual([]);
    // the receipt verifies by the id the view gave
    expect((await v1(`/receipts/${newest.id}/verify`)).status).toBe(200);
    // the other environment and another merchant see none of them
    expect((await v1("/receipts", { key: merchant.keys.sk_live })).body.data).toEqual([]);
    expect((await v1("/receipts", { key: (await merchantFactory()).keys.sk_test, query: { code: newest.code } })).body.data).toEqual([]);
  });
});

describe("GET /v1/consents", () => {
  it("pages the consents the environment's persons gave, active, withdrawn or expired, filtered by facetoken and status", async () => {
    const merchant = await merchantFactory();
    const stays = await enrollStranger(merchant.keys.pk_test);
    const leaves = await enrollStranger(merchant.keys.pk_test);
    const withdrawn = await revokeConsent(merchant.keys.sk_test, { subject_ref: leaves.subject_ref });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    const key = await keyWith(merchant, ["management.read"]);
    const all = await v1("/consents", { key });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toEqual([
      expect.objectContaining({ object: "consent", facetoken: leaves.subject_ref, status: "withdrawn", ended_at: expect.any(String) }),
      expect.objectContaining({ object: "consent", facetoken: stays.subject_ref, status: "active", ended_at: null, retention_days: 365 }),
    ]);
    expect(all.body.data[0].id).toMatch(/^cnt_[0-9a-f]{32}$/);
    expect(await everyId("/consents", key, {}, 1)).toEqual(all.body.data.map((c: { id: string }) => c.id));
    expect((await v1("/consents", { key, query: { status: "active" } })).body.data.map((c: { facetoken: string }) => c.facetoken)).toEqual([
      stays.subject_ref,
    ]);
    expect((await v1("/consents", { key, query: { facetoken: leaves.subject_ref } })).body.data).toHaveLength(1);
    expect((await v1("/consents", { key, query: { status: "expired" } })).body.data).toEqual([]);
    expect((await v1("/consents", { key: merchant.keys.sk_live })).body.data).toEqual([]);
    expect((await v1("/consents", { key: (await merchantFactory()).keys.sk_test })).body.data).toEqual([]);
  });
});

describe("GET /v1/disclosures", () => {
  it("pages what the merchant received: claims by key without a value, active, revoked, or expired at the request clock", async () => {
    const { merchant, person, captureId } = await disclosureFixture({ birthDate: "1990-06-15" });
    const fields = [
      { key: "age_over_18", disclosure_type: "zk_proof", circuit_id: "age_over", public_input: { threshold: 18 } },
      { key: "issuing_country", disclosure_type: "value", requires_kyc: true },
    ];
    const kept = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, fields));
    expect(kept.status, kept.text).toBe(200);
    const revoked = await disclose(merchant.keys.sk_test, discloseBody(merchant, captureId, fields.slice(0, 1)));
    expect(revoked.status, revoked.text).toBe(200);
    expect((await revokeConsent(merchant.keys.sk_test, { consent_token: revoked.body.consent_token })).status).toBe(200);
    const key = await keyWith(merchant, ["api"]);
    const all = await v1("/disclosures", { key });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data.map((d: { id: string }) => d.id)).toEqual([revoked.body.disclosure_id, kept.body.disclosure_id]);
    expect(all.body.data[1]).toMatchObject({
      object: "disclosure",
      facetoken: person.subject_ref,
      purpose: "account_opening",
      status: "active",
      revoked_at: null,
      claims: [
        { key: "age_over_18", disclosure_type: "zk_proof", status: "disclosed" },
        { key: "issuing_country", disclosure_type: "value", status: "disclosed" },
      ],
    });
    expect(all.body.data[0]).toMatchObject({ status: "revoked", revoked_at: expect.any(String) });
    // no value: the country disclosed is not in the view
    expect(all.text).not.toContain("UTO");
    expect((await v1("/disclosures", { key, query: { status: "revoked" } })).body.data).toHaveLength(1);
    expect(await everyId("/disclosures", key, { facetoken: person.subject_ref }, 1)).toEqual(
      all.body.data.map((d: { id: string }) => d.id),
    );
    const after = new Date(Date.parse(all.body.data[1].expires_at) + 1000);
    const later = await v1("/disclosures", { key, query: { status: "expired" }, now: after });
    expect(later.body.data.map((d: { id: string }) => d.id)).toEqual([kept.body.disclosure_id]);
    expect((await v1("/disclosures", { key: merchant.keys.sk_live })).body.data).toEqual([]);
    expect((await v1("/disclosures", { key: (await merchantFactory()).keys.sk_test })).body.data).toEqual([]);
  });
});

describe("every read view", () => {
  it("refuses bad input, a publishable key and a key without api or management.read", async () => {
    const merchant = await merchantFactory();
    const writeOnly = await keyWith(merchant, ["management.write"]);
    for (const path of VIEWS) {
      const bad: Record<string, string>[] = [
        { limit: "0" },
        { limit: "101" },
        { cursor: "not-a-cursor" },
        { status: "lost" },
        { unknown: "1" },
      ];
      for (const query of bad) {
        if (path === "/receipts" && "status" in query) continue;
        expect(errorOf(await v1(path, { key: merchant.keys.sk_test, query })), `${path} ${JSON.stringify(query)}`).toEqual({
          status: 400,
          code: "invalid_input",
        });
      }
      expect(errorOf(await v1(path, { key: merchant.keys.pk_test })), path).toEqual({ status: 401, code: "auth_required" });
      expect(errorOf(await v1(path)), path).toEqual({ status: 401, code: "api_key_required" });
      expect(errorOf(await v1(path, { key: writeOnly })), path).toEqual({ status: 403, code: "insufficient_scope" });
    }
    expect(errorOf(await v1("/receipts", { key: merchant.keys.sk_test, query: { action: "ACTION_DANCE" } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    expect(errorOf(await v1("/receipts", { key: merchant.keys.sk_test, query: { code: "RCPT-1" } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
  });

  it("counts against the key's reads bucket (the sandbox's burst 60, 30 a second): then 429 with Retry-After", {
    timeout: 120_000,
  }, async () => {
    for (const path of VIEWS) {
      const merchant = await merchantFactory();
      const key = merchant.keys.sk_test;
      const started = Date.now();
      const burst = await Promise.all(Array.from({ length: 120 }, () => v1(path, { key })));
      const seconds = (Date.now() - started) / 1000;
      const passed = burst.filter((r) => r.status === 200).length;
      const limited = burst.filter((r) => r.status === 429);
      expect(passed + limited.length, path).toBe(120);
      // the burst, and what the bucket refilled while the requests were answered (a loaded machine answers slowly)
      expect(passed, path).toBeGreaterThanOrEqual(59);
      expect(passed, path).toBeLessThanOrEqual(60 + Math.ceil(30 * seconds) + 1);
      for (const r of limited) {
        expect(r.body.code).toBe("rate_limited");
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
    }
  });
});
