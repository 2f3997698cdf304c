import { describe, expect, it } from "vitest";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger, transact } from "../harness/identity";
import { presenceCapture, withGrantProof } from "../harness/mandates";
import { v1 } from "../harness/resource-api";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;
type Person = Awaited<ReturnType<typeof enrollStranger>>;

/** A merchant and a person with a document on record (put there by a capture that carried it). */
async function granter() {
  const merchant = await merchantFactory();
  const person = await enrollStranger(merchant.keys.pk_test);
  await presenceCapture(merchant, person, { document: true });
  return { merchant, person };
}

/** A create body with a fresh proof: the person's grant capture of these terms (taken at `at`, default now). */
function createBody(merchant: Merchant, person: Person, extra: Record<string, unknown> = {}, at?: Date) {
  const body = {
    granted_by: person.subject_ref,
    granted_to: `agent_${crypto.randomUUID()}`,
    scope: ["purchase"],
    ceiling: { amount: 700, currency: "USD", period: "month" },
    until: new Date(Date.now() + 86_400_000).toISOString(),
    ...extra,
  };
  return withGrantProof(merchant, person, body, { at });
}

async function created(merchant: Merchant, body: unknown) {
  const res = await v1("/mandates", { key: merchant.keys.sk_test, body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

describe("the /v1 surface", () => {
  it("is its own Worker: /v1 routes answer in lowercase codes, a path beside it is no function", async () => {
    const unknownRoute = await v1("/nothing-here");
    expect(errorOf(unknownRoute)).toEqual({ status: 404, code: "route_not_found" });
    const beside = await fetch(`${(await import("../harness/service")).serviceUnderTest().baseUrl}/v1x`);
    expect(((await beside.json()) as { code: string }).code).toBe("FUNCTION_NOT_FOUND");
  });

  it("takes a secret key as a bearer only: none, malformed, publishable and the function API's header are 401", async () => {
    const merchant = await merchantFactory();
    expect(errorOf(await v1("/mandates"))).toEqual({ status: 401, code: "api_key_required" });
    expect(errorOf(await v1("/mandates", { key: "sk_test_short" }))).toEqual({ status: 401, code: "invalid_api_key" });
    expect(errorOf(await v1("/mandates", { key: merchant.keys.pk_test }))).toEqual({ status: 401, code: "auth_required" });
    const headerKey = await v1("/mandates", { headers: { "x-service-api-key": merchant.keys.sk_test } });
    expect(errorOf(headerKey)).toEqual({ status: 401, code: "api_key_required" });
    const revokedLooking = `sk_test_${"A".repeat(40)}`;
    expect(errorOf(await v1("/mandates", { key: revokedLooking }))).toEqual({ status: 401, code: "invalid_api_key" });
  });

  it("answers the version asked for, the merchant's pinned one without the header, and refuses an unknown one with the list", async () => {
    const merchant = await merchantFactory();
    const pinned = await v1("/mandates", { key: merchant.keys.sk_test });
    expect(pinned.status).toBe(200);
    expect(pinned.headers.get("service-version")).toBe("2026-09-14");
    const asked = await v1("/mandates", { key: merchant.keys.sk_test, headers: { "service-version": "2026-09-14" } });
    expect(asked.headers.get("service-version")).toBe("2026-09-14");
    const unknown = await v1("/mandates", { key: merchant.keys.sk_test, headers: { "service-version": "2025-01-01" } });
    expect(errorOf(unknown)).toEqual({ status: 400, code: "unsupported_version" });
    expect(unknown.body.supported_versions).toEqual(["2026-09-14"]);
    expect(unknown.headers.get("service-version")).toBe("2026-09-14");
    // The pin lives on the merchant; a pin this deployment no longer answers falls back to the current version.
    await testDb().unsafe("update private.merchants set api_version = '2020-01-01' where id = $1", [merchant.merchant_id]);
    const stale = await v1("/mandates", { key: merchant.keys.sk_test });
    expect(stale.status).toBe(200);
    expect(stale.headers.get("service-version")).toBe("2026-09-14");
  });
});

describe("/v1/mandates", () => {
  it("creates, reads, checks (consuming) and revokes a mandate in the resource API's shape", async () => {
    const { merchant, person } = await granter();
    const body = await createBody(merchant, person);
    const mandate = await created(merchant, body);
    expect(mandate).toMatchObject({
      object: "mandate",
      status: "active",
      granted_by: person.subject_ref,
      granted_to: body.granted_to,
      scope: ["purchase"],
      ceiling: { amount: 700, currency: "USD", period: "month" },
      remaining: 700,
      assurance_level: "face_voice_doc",
    });
    expect(mandate.id).toMatch(/^mdt_[0-9a-f]{32}$/);
    expect(Date.parse(mandate.until)).toBe(Date.parse(body.until));

    const read = await v1(`/mandates/${mandate.id}`, { key: merchant.keys.sk_test });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(mandate);

    const checked = await v1(`/mandates/${mandate.id}/check`, {
      key: merchant.keys.sk_test,
      body: { operation: "purchase", amount: 250, currency: "USD" },
    });
    expect(checked.status, checked.text).toBe(200);
    expect(checked.body).toMatchObject({ allowed: true, remaining: { amount: 450, currency: "USD" } });
    expect((await v1(`/mandates/${mandate.id}`, { key: merchant.keys.sk_test })).body.remaining).toBe(450);

    const over = await v1(`/mandates/${mandate.id}/check`, {
      key: merchant.keys.sk_test,
      body: { operation: "purchase", amount: 451, currency: "USD" },
    });
    expect(over.body).toMatchObject({ allowed: false, reason: "ceiling_exceeded" });

    const revoked = await v1(`/mandates/${mandate.id}/revoke`, { key: merchant.keys.sk_test, body: { reason: "done" } });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ id: mandate.id, status: "revoked" });
    const after = await v1(`/mandates/${mandate.id}/check`, {
      key: merchant.keys.sk_test,
      body: { operation: "purchase", amount: 1, currency: "USD" },
    });
    expect(after.body).toMatchObject({ allowed: false, reason: "mandate_revoked" });
  });

  it("shows step_up_of on a mandate (D-681): the parent's mdt_ id on a step-up, null on a standalone, as created and as read", async () => {
    const { merchant, person } = await granter();
    const parent = await created(merchant, await createBody(merchant, person));
    expect(parent.step_up_of).toBeNull();
    const stepUp = await created(
      merchant,
      await createBody(merchant, person, { step_up_of: parent.id, ceiling: { amount: 5000, currency: "USD", period: "lifetime" } }),
    );
    expect(stepUp.step_up_of).toBe(parent.id);
    const read = await v1(`/mandates/${stepUp.id}`, { key: merchant.keys.sk_test });
    expect(read.status).toBe(200);
    expect(read.body.step_up_of).toBe(parent.id);
    expect((await v1(`/mandates/${parent.id}`, { key: merchant.keys.sk_test })).body.step_up_of).toBeNull();
    const listed = await v1(`/mandates?granted_to=${encodeURIComponent(stepUp.granted_to)}`, { key: merchant.keys.sk_test });
    expect(listed.body.data.map((m: { step_up_of: string | null }) => m.step_up_of)).toEqual([parent.id]);
  });

  it("refuses bad input with lowercase codes and never a 5xx", async () => {
    const { merchant, person } = await granter();
    const key = merchant.keys.sk_test;
    expect(errorOf(await v1("/mandates", { key, body: await createBody(merchant, person, { scope: ["purchase*"] }) }))).toEqual({
      status: 400,
      code: "wildcard_scope_forbidden",
    });
    expect(
      errorOf(
        await v1("/mandates", { key, body: await createBody(merchant, person, { until: new Date(Date.now() - 1000).toISOString() }) }),
      ),
    ).toEqual({ status: 400, code: "expires_at_not_in_future" });
    expect(errorOf(await v1("/mandates", { key, body: { ...(await createBody(merchant, person)), extra: 1 } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    const mandate = await created(merchant, await createBody(merchant, person));
    const float = await fetch(`${(await import("../harness/service")).serviceUnderTest().baseUrl}/v1/mandates/${mandate.id}/check`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: '{"operation":"purchase","amount":1e2,"currency":"USD"}',
    });
    expect(float.status).toBe(400);
    expect(((await float.json()) as { code: string }).code).toBe("amount_invalid");
    expect(errorOf(await v1("/mandates", { key, query: { limit: "0" } }))).toEqual({ status: 400, code: "invalid_input" });
    expect(errorOf(await v1("/mandates", { key, query: { limit: "101" } }))).toEqual({ status: 400, code: "invalid_input" });
    expect(errorOf(await v1("/mandates", { key, query: { cursor: "not-a-cursor" } }))).toEqual({ status: 400, code: "invalid_input" });
    expect(errorOf(await v1("/mandates", { key, query: { status: "paused" } }))).toEqual({ status: 400, code: "invalid_input" });
  });

  it("takes a count ceiling up to 2,147,483,647 and refuses a larger one as invalid_input, where it was a 500", async () => {
    const { merchant, person } = await granter();
    const withCount = (count: number) => createBody(merchant, person, { scope: ["login"], ceiling: { count, period: "day" } });
    await created(merchant, await withCount(2_147_483_647));
    for (const count of [2_147_483_648, Number.MAX_SAFE_INTEGER]) {
      const res = await v1("/mandates", { key: merchant.keys.sk_test, body: await withCount(count) });
      expect({ count, ...errorOf(res), fields: res.body.fields }).toEqual({
        count,
        status: 400,
        code: "invalid_input",
        fields: ["ceiling.count"],
      });
    }
  });

  it("never shows or touches another merchant's mandate, nor the same merchant's other environment: the same 404", async () => {
    const { merchant, person } = await granter();
    const mandate = await created(merchant, await createBody(merchant, person));
    const other = await merchantFactory();
    const unknown = await v1("/mandates/mdt_00000000000000000000000000000000", { key: other.keys.sk_test });
    expect(errorOf(unknown)).toEqual({ status: 404, code: "not_found" });
    for (const key of [other.keys.sk_test, merchant.keys.sk_live]) {
      const read = await v1(`/mandates/${mandate.id}`, { key });
      expect(read.text).toBe(unknown.text);
      const check = await v1(`/mandates/${mandate.id}/check`, { key, body: { operation: "purchase", amount: 1, currency: "USD" } });
      expect(check.body).toMatchObject({ allowed: false, reason: "mandate_not_found" });
      expect(errorOf(await v1(`/mandates/${mandate.id}/revoke`, { key, body: {} }))).toEqual({ status: 404, code: "not_found" });
      expect((await v1("/mandates", { key })).body.data).toEqual([]);
    }
    expect((await v1(`/mandates/${mandate.id}`, { key: merchant.keys.sk_test })).body).toMatchObject({ status: "active", remaining: 700 });
  });

  it("lists newest first, filters by granter, holder and status, and pages with a cursor that stays stable while mandates are added", async () => {
    const { merchant, person } = await granter();
    const key = merchant.keys.sk_test;
    const base = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body = await createBody(merchant, person, { granted_to: i === 0 ? "agent_first" : `agent_${i}` }, new Date(base + i * 1000));
      const res = await v1("/mandates", { key, body, now: new Date(base + i * 1000) });
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id);
    }
    const newestFirst = [...ids].reverse();

    const first = await v1("/mandates", { key, query: { limit: "2" }, now: new Date(base + 10_000) });
    expect(first.body.data.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.next_cursor).toEqual(expect.any(String));

    // A mandate added between pages is newer than every page read, so it shifts nothing.
    const added = await v1("/mandates", {
      key,
      body: await createBody(merchant, person, {}, new Date(base + 20_000)),
      now: new Date(base + 20_000),
    });
    expect(added.status).toBe(201);

    const second = await v1("/mandates", { key, query: { limit: "2", cursor: first.body.next_cursor }, now: new Date(base + 30_000) });
    expect(second.body.data.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(2, 4));
    const third = await v1("/mandates", { key, query: { limit: "2", cursor: second.body.next_cursor }, now: new Date(base + 30_000) });
    expect(third.body.data.map((m: { id: string }) => m.id)).toEqual(newestFirst.slice(4));
    expect(third.body.next_cursor).toBeNull();

    const all = await v1("/mandates", { key, now: new Date(base + 30_000) });
    expect(all.body.data.map((m: { id: string }) => m.id)).toEqual([added.body.id, ...newestFirst]);
    expect(all.body.next_cursor).toBeNull();

    const byHolder = await v1("/mandates", { key, query: { granted_to: "agent_first" }, now: new Date(base + 30_000) });
    expect(byHolder.body.data.map((m: { id: string }) => m.id)).toEqual([ids[0]]);
    const byGranter = await v1("/mandates", { key, query: { granted_by: person.subject_ref, limit: "100" }, now: new Date(base + 30_000) });
    expect(byGranter.body.data).toHaveLength(6);
    expect((await v1("/mandates", { key, query: { granted_by: "sub_nobody" } })).body.data).toEqual([]);

    await v1(`/mandates/${ids[1]}/revoke`, { key, body: {} });
    const revoked = await v1("/mandates", { key, query: { status: "revoked" }, now: new Date(base + 30_000) });
    expect(revoked.body.data.map((m: { id: string }) => m.id)).toEqual([ids[1]]);
    const expired = await v1("/mandates", { key, query: { status: "expired" }, now: new Date(base + 2 * 86_400_000) });
    expect(expired.body.data).toHaveLength(5);
    const active = await v1("/mandates", { key, query: { status: "active" }, now: new Date(base + 30_000) });
    expect(active.body.data).toHaveLength(5);
  });
});

describe("/v1/receipts/{id}/verify", () => {
  it("verifies a receipt by id or code with no key, as receipt-verify does; unknown is 404 not_found", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const shot = person.capture();
    const act = await transact(merchant.keys.sk_test, {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: person.subject_ref,
      capture_nonce: shot.nonce,
      face_template: shot.descriptor,
    });
    expect(act.status, act.text).toBe(200);
    const byId = await v1(`/receipts/${act.body.receipt_id}/verify`);
    expect(byId.status, byId.text).toBe(200);
    expect(byId.body).toMatchObject({ valid: true, receipt_id: act.body.receipt_id, action: "ACTION_LOGIN" });
    expect(byId.headers.get("service-version")).toBe("2026-09-14");
    expect(byId.headers.get("service-ratelimit-remaining")).toEqual(expect.any(String));
    const byCode = await v1(`/receipts/${act.body.receipt_code}/verify`);
    expect(byCode.body).toEqual(byId.body);
    expect(errorOf(await v1(`/receipts/${crypto.randomUUID()}/verify`))).toEqual({ status: 404, code: "not_found" });
  });
});
