import { describe, expect, it } from "vitest";
import { rpc } from "../../shared/kernel/db/rpc";
import { sha256Hex } from "../../shared/lib/crypto";
import { disclose, discloseBody } from "../harness/consent";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { enrollStranger, transact } from "../harness/identity";
import { check, consume, issue, mandateBody, mandateFixture, presenceCapture, proofCapture, standInRequest } from "../harness/mandates";
import { v1 } from "../harness/resource-api";
import { serviceUnderTest } from "../harness/service";

describe("mandate-issue", () => {
  it("issues a mandate against a fresh capture: 201, localised scope labels, assurance from the capture", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const terms = { agent_display_name: "Shopping helper", scopes: ["purchase", "payment"] };
    const captureId = await proofCapture(merchant, person, { document: true, terms });
    const body = mandateBody(person, captureId);
    const res = await issue(merchant.keys.sk_test, body, { headers: { "accept-language": "pt-BR" } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: "active",
      granted_by: person.subject_ref,
      granted_to: body.granted_to,
      granted_to_kind: "agent",
      agent_display_name: "Shopping helper",
      scopes: ["purchase", "payment"],
      assurance_level: "face_voice_doc",
      ceiling: { kind: "amount", amount: 700, currency: "USD", count: null, period: "lifetime" },
      scope_labels: [
        { scope: "purchase", label: "Fazer compras" },
        { scope: "payment", label: "Fazer pagamentos" },
      ],
    });
    expect(res.body.mandate_id).toMatch(/^mdt_[0-9a-f]{32}$/);
    expect(res.body).not.toHaveProperty("agent_descriptor");
  });

  it("copies face_voice from a capture without a document, and refuses money scopes without one", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, {
      terms: { scopes: ["login"], ceiling: { kind: "count", count: 3, period: "daily" } },
    });
    const login = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(login.status, login.text).toBe(201);
    expect(login.body.assurance_level).toBe("face_voice");
    const money = await issue(merchant.keys.sk_test, mandateBody(person, await proofCapture(merchant, person)));
    expect(errorOf(money)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
  });

  it("refuses a proof older than five minutes, someone else's, or unknown", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const other = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const late = new Date(Date.now() + 301_000);
    expect(errorOf(await issue(merchant.keys.sk_test, mandateBody(person, captureId), { now: late }))).toEqual({
      status: 403,
      code: "PROOF_INVALID",
    });
    expect(errorOf(await issue(merchant.keys.sk_test, mandateBody(other, captureId)))).toEqual({ status: 403, code: "PROOF_INVALID" });
    expect(errorOf(await issue(merchant.keys.sk_test, mandateBody(person, crypto.randomUUID())))).toEqual({
      status: 403,
      code: "PROOF_INVALID",
    });
    const stranger = await merchantFactory();
    expect(errorOf(await issue(stranger.keys.sk_test, mandateBody(person, captureId)))).toEqual({ status: 403, code: "PROOF_INVALID" });
  });

  it("takes a grant capture for one mandate only: the same capture again within its five minutes is 403 PROOF_INVALID (proof_used)", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const first = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(first.status, first.text).toBe(201);
    const second = await issue(merchant.keys.sk_test, mandateBody(person, captureId), { now: new Date(Date.now() + 60_000) });
    expect(errorOf(second)).toEqual({ status: 403, code: "PROOF_INVALID" });
    expect(second.body.reason).toBe("proof_used");
    const [row] = await testDb()`select purpose, granted_mandate_id from private.captures where id = ${captureId}`;
    expect(row).toEqual({
      purpose: "grant",
      granted_mandate_id: first.body.mandate_id.slice(4).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-"),
    });
    // A grant capture proves its grant alone: it attests nothing for a disclosure either.
    const disclosed = await disclose(
      merchant.keys.sk_test,
      discloseBody(merchant, captureId, [{ key: "subject_ref", disclosure_type: "value" }]),
    );
    expect([errorOf(disclosed), disclosed.body.reason]).toEqual([{ status: 403, code: "ATTESTATION_INVALID" }, "not_for_disclosure"]);
  });

  it("proves only the terms the person was shown: a plain login is not_a_grant, other terms are terms_mismatch (403 PROOF_INVALID)", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const login = await presenceCapture(merchant, person, { document: true });
    const plain = await issue(merchant.keys.sk_test, mandateBody(person, login));
    expect([errorOf(plain), plain.body.reason]).toEqual([{ status: 403, code: "PROOF_INVALID" }, "not_a_grant"]);

    const captureId = await proofCapture(merchant, person, { terms: { granted_to: "agent_shown" } });
    const larger = mandateBody(person, captureId, {
      ceiling: { kind: "amount", amount: 100_000_000, currency: "USD", period: "lifetime" },
    });
    const raised = await issue(merchant.keys.sk_test, larger);
    expect([errorOf(raised), raised.body.reason]).toEqual([{ status: 403, code: "PROOF_INVALID" }, "terms_mismatch"]);
    const otherAgent = await issue(merchant.keys.sk_test, mandateBody(person, captureId, { granted_to: "agent_other" }));
    expect([errorOf(otherAgent), otherAgent.body.reason]).toEqual([{ status: 403, code: "PROOF_INVALID" }, "terms_mismatch"]);
    // A refused issue uses nothing: the capture still proves what it showed.
    const shown = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(shown.status, shown.text).toBe(201);
    expect(shown.body.granted_to).toBe("agent_shown");
  });

  it("the sink takes a grant's terms on a live login only, judged by mandate-issue's rules before the capture is used", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const { granted_by: _, ...terms } = mandateBody(person, crypto.randomUUID());
    const { proof: __, ...grant } = terms;
    const shot = person.capture();
    const act = (extra: Record<string, unknown>) =>
      transact(merchant.keys.sk_test, {
        action: "ACTION_LOGIN",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: person.subject_ref,
        capture_nonce: shot.nonce,
        face_template: shot.descriptor,
        grant,
        ...extra,
      });
    expect(errorOf(await act({ action: "ACTION_SIGNUP" }))).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(errorOf(await act({ grant: { ...grant, scopes: ["teleport"] } }))).toEqual({ status: 400, code: "UNKNOWN_SCOPE" });
    expect(errorOf(await act({ grant: { ...grant, expires_at: new Date(Date.now() - 1000).toISOString() } }))).toEqual({
      status: 400,
      code: "EXPIRES_AT_NOT_IN_FUTURE",
    });
    // None of those used the capture.
    const approved = await act({});
    expect(approved.status, approved.text).toBe(200);
    const [row] = await testDb()`select purpose, grant_terms_digest from private.captures where id = ${approved.body.transaction_id}`;
    expect(row.purpose).toBe("grant");
    expect(row.grant_terms_digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("validates scopes, constraints, ceilings, agent fields and expiry with the spec's codes", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, person, { document: true });
    const attempt = (extra: Record<string, unknown>) => issue(merchant.keys.sk_test, mandateBody(person, captureId, extra)).then(errorOf);
    expect(await attempt({ scopes: ["purchase", "teleport"] })).toEqual({ status: 400, code: "UNKNOWN_SCOPE" });
    expect(await attempt({ scopes: ["*"] })).toEqual({ status: 400, code: "WILDCARD_SCOPE_FORBIDDEN" });
    expect(await attempt({ scopes: ["purchase:*"] })).toEqual({ status: 400, code: "WILDCARD_SCOPE_FORBIDDEN" });
    expect(await attempt({ scopes: ["task"], ceiling: { kind: "count", count: 1 } })).toEqual({
      status: 400,
      code: "CONSTRAINTS_REQUIRED_FOR_SCOPE",
    });
    expect(await attempt({ scopes: ["task"], constraints: { merchant_allowlist: [] }, ceiling: { kind: "none" } })).toEqual({
      status: 400,
      code: "CONSTRAINTS_REQUIRED_FOR_SCOPE",
    });
    expect(await attempt({ scopes: ["login"] })).toEqual({ status: 400, code: "AMOUNT_CEILING_NOT_APPLICABLE" });
    expect(await attempt({ scopes: ["purchase", "login"] })).toEqual({ status: 400, code: "AMOUNT_CEILING_NOT_APPLICABLE" });
    expect(await attempt({ agent_display_name: "   " })).toEqual({ status: 400, code: "AGENT_DISPLAY_NAME_EMPTY" });
    expect(await attempt({ agent_display_name: "x".repeat(65) })).toEqual({ status: 400, code: "AGENT_DISPLAY_NAME_TOO_LONG" });
    expect(await attempt({ agent_descriptor: "" })).toEqual({ status: 400, code: "AGENT_DESCRIPTOR_EMPTY" });
    expect(await attempt({ agent_descriptor: "x".repeat(141) })).toEqual({ status: 400, code: "AGENT_DESCRIPTOR_TOO_LONG" });
    expect(await attempt({ ceiling: { kind: "amount", amount: 10.5, currency: "USD" } })).toEqual({ status: 400, code: "AMOUNT_INVALID" });
    expect(await attempt({ ceiling: { kind: "amount", amount: 100 } })).toEqual({ status: 400, code: "INVALID_CEILING" });
    expect(await attempt({ ceiling: { kind: "count", amount: 100, currency: "USD" } })).toEqual({ status: 400, code: "INVALID_CEILING" });
    expect(await attempt({ ceiling: { kind: "both", amount: 100, currency: "USD" } })).toEqual({ status: 400, code: "INVALID_CEILING" });
    expect(await attempt({ ceiling: { kind: "amount", amount: 100, currency: "ZZZ" } })).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(await attempt({ ceiling: { kind: "count", count: 1.5 } })).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(await attempt({ expires_at: new Date(Date.now() - 1000).toISOString() })).toEqual({
      status: 400,
      code: "EXPIRES_AT_NOT_IN_FUTURE",
    });
    expect(await attempt({ expires_at: undefined })).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(await attempt({ assurance_level: "face_voice_doc" })).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(await attempt({ step_up_of: "mdt_nope" })).toEqual({ status: 400, code: "STEP_UP_OF_INVALID" });
  });

  it("accepts the ceiling's period anchor without using it, and is immutable in the database", async () => {
    const { mandate } = await mandateFixture({
      ceiling: { kind: "amount", amount: 700, currency: "USD", period: "monthly", anchor: "2020-01-15" },
    });
    expect(mandate.ceiling.period).toBe("monthly");
    const id = mandate.mandate_id.slice(4);
    await expect(testDb()`update private.mandates set ceiling_amount = 1 where id = ${id}::uuid`).rejects.toMatchObject({ code: "HA423" });
    await expect(
      testDb()`update private.mandates set expires_at = now() + interval '10 years' where id = ${id}::uuid`,
    ).rejects.toMatchObject({ code: "HA423" });
  });

  it("refuses publishable keys", async () => {
    const merchant = await merchantFactory();
    expect(errorOf(await issue(merchant.keys.pk_test, {}))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
  });
});

describe("mandate-consume and mandate-check", () => {
  it("consumes within the ceiling, reports remaining {amount, currency}, flags at_limit on the last unit", async () => {
    const { merchant, mandate } = await mandateFixture();
    const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: 300, currency: "USD" };
    const first = await consume(merchant.keys.sk_test, action);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      allowed: true,
      idempotent_replay: false,
      at_limit: false,
      remaining: { amount: 400, currency: "USD" },
    });
    expect(first.body.consumption_id).toMatch(/^cns_[0-9a-f]{32}$/);
    const refused = await consume(merchant.keys.sk_test, { ...action, amount: 500 }, { locale: "es" });
    expect(refused.body).toMatchObject({
      allowed: false,
      reason: "ceiling_exceeded",
      step_up_available: true,
      user_message: "Esta acción supera lo que autorizaste.",
    });
    const last = await consume(merchant.keys.sk_test, { ...action, amount: 400 });
    expect(last.body).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0, currency: "USD" } });
    const after = await consume(merchant.keys.sk_test, { ...action, amount: 1 });
    expect(after.body).toMatchObject({ allowed: false, reason: "mandate_exhausted", remaining: { amount: 0, currency: "USD" } });
  });

  it("a lifetime ceiling at zero reads exhausted (resource API 3.1), on both surfaces and in the status lists", async () => {
    const { merchant, mandate } = await mandateFixture();
    const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: 700, currency: "USD" };
    expect((await consume(merchant.keys.sk_test, action)).body).toMatchObject({ allowed: true, at_limit: true });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body).toMatchObject({ status: "exhausted", stored_status: "active" });
    const listed = async (status: string) =>
      (await call("mandate-get", { key: merchant.keys.sk_test, query: { status } })).body.mandates.map(
        (m: { mandate_id: string }) => m.mandate_id,
      );
    expect(await listed("exhausted")).toEqual([mandate.mandate_id]);
    expect(await listed("consumed")).toEqual([]);
    const read = await v1(`/mandates/${mandate.mandate_id}`, { key: merchant.keys.sk_test });
    expect(read.body).toMatchObject({ status: "exhausted", remaining: 0 });
    const refused = await consume(merchant.keys.sk_test, { ...action, amount: 1 });
    expect(refused.body).toMatchObject({ allowed: false, reason: "mandate_exhausted", step_up_available: true });
  });

  it("refuses without an Idempotency-Key at HTTP 200, and replays a key once", async () => {
    const { merchant, mandate } = await mandateFixture();
    const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: 100, currency: "USD" };
    const missing = await consume(merchant.keys.sk_test, action, { idempotencyKey: null });
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ allowed: false, reason: "idempotency_key_required" });
    expect(missing.body).not.toHaveProperty("user_message");
    // a key that is present but malformed is refused at HTTP 200 too, under its own reason: it is not missing
    for (const idempotencyKey of ["short", "a key with spaces", `k${"x".repeat(200)}`]) {
      const malformed = await consume(merchant.keys.sk_test, action, { idempotencyKey });
      expect(malformed.status).toBe(200);
      expect(malformed.body).toMatchObject({ allowed: false, reason: "idempotency_key_invalid", step_up_available: false });
      expect(malformed.body.developer_message).toMatch(/without spaces/);
      expect(malformed.body).not.toHaveProperty("user_message");
    }
    const key = `idem-${crypto.randomUUID()}`;
    const first = await consume(merchant.keys.sk_test, action, { idempotencyKey: key });
    const replay = await consume(merchant.keys.sk_test, action, { idempotencyKey: key });
    expect(replay.body).toEqual({ ...first.body, idempotent_replay: true, mandate_status: "active" });
    expect(errorOf(await consume(merchant.keys.sk_test, { ...action, amount: 200 }, { idempotencyKey: key }))).toEqual({
      status: 422,
      code: "IDEMPOTENCY_KEY_REUSED",
    });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body.consumptions).toHaveLength(1);
  });

  it("authenticates in the decision's one call: a revoked key fails the next request, and a bad key is answered before a bad body", async () => {
    const { merchant, mandate } = await mandateFixture();
    const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: 100, currency: "USD" };
    expect((await consume(merchant.keys.sk_test, action)).body).toMatchObject({ allowed: true });
    const unknownKey = `sk_test_${"Q".repeat(40)}`;
    for (const decide of [consume, check]) {
      expect(errorOf(await decide(unknownKey, action))).toEqual({ status: 401, code: "INVALID_API_KEY" });
      expect(errorOf(await decide(unknownKey, { ...action, amount: 1.5 }))).toEqual({ status: 401, code: "INVALID_API_KEY" });
      expect(errorOf(await decide(unknownKey, { ...action, scope: "no_such_scope" }))).toEqual({ status: 401, code: "INVALID_API_KEY" });
      expect(errorOf(await decide(merchant.keys.sk_test, { ...action, amount: 1.5 }))).toEqual({ status: 400, code: "AMOUNT_INVALID" });
    }
    // A request refused for its body still spends its nonce, as it did before the decision joined the call.
    const headers = { "x-service-timestamp": String(Math.floor(Date.now() / 1000)), "x-service-nonce": `n-${crypto.randomUUID()}` };
    const send = (body: unknown) =>
      call("mandate-check", { key: merchant.keys.sk_test, body, headers: { ...headers, "accept-language": "en" } });
    expect(errorOf(await send({ ...action, amount: -1 }))).toEqual({ status: 400, code: "AMOUNT_INVALID" });
    expect(errorOf(await send(action))).toEqual({ status: 409, code: "NONCE_REUSED" });

    await rpc(testDb(), "api_key_revoke", { key_hash: await sha256Hex(merchant.keys.sk_test) });
    expect(errorOf(await consume(merchant.keys.sk_test, action))).toEqual({ status: 401, code: "INVALID_API_KEY" });
    expect(errorOf(await check(merchant.keys.sk_test, action))).toEqual({ status: 401, code: "INVALID_API_KEY" });
  });

  it("checks advisorily: no debit, same answer shape", async () => {
    const { merchant, mandate } = await mandateFixture();
    const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: 700, currency: "USD" };
    for (let i = 0; i < 3; i++)
      expect((await check(merchant.keys.sk_test, action)).body).toMatchObject({ allowed: true, remaining: { amount: 700 } });
    expect((await check(merchant.keys.sk_test, { ...action, amount: 701 })).body).toMatchObject({
      allowed: false,
      reason: "ceiling_exceeded",
    });
    expect((await check(merchant.keys.sk_test, { ...action, scope: "payment" })).body).toMatchObject({
      allowed: false,
      reason: "scope_not_granted",
    });
    expect((await check(merchant.keys.sk_test, { ...action, scope: "teleport" })).body).toMatchObject({
      allowed: false,
      reason: "unknown_scope",
    });
    expect((await check(merchant.keys.sk_test, { ...action, currency: "EUR" })).body).toMatchObject({
      allowed: false,
      reason: "currency_mismatch",
    });
    expect((await check(merchant.keys.sk_test, { ...action, mandate_id: "mdt_00000000000000000000000000000000" })).body).toMatchObject({
      allowed: false,
      reason: "mandate_not_found",
    });
    expect(errorOf(await check(merchant.keys.sk_test, { ...action, amount: 1.5 }))).toEqual({ status: 400, code: "AMOUNT_INVALID" });
  });

  it("enforces constraints against context for task mandates", async () => {
    const { merchant, mandate } = await mandateFixture({
      scopes: ["task"],
      constraints: { merchant_allowlist: ["acme"], country_allowlist: ["BR"] },
      ceiling: { kind: "count", count: 5, period: "daily" },
    });
    const base = { mandate_id: mandate.mandate_id, scope: "task" };
    expect((await consume(merchant.keys.sk_test, { ...base, context: { merchant: "acme", country: "BR" } })).body.allowed).toBe(true);
    expect((await consume(merchant.keys.sk_test, { ...base, context: { merchant: "evil", country: "BR" } })).body.reason).toBe(
      "merchant_not_allowed",
    );
    expect((await consume(merchant.keys.sk_test, { ...base, context: { merchant: "acme", country: "US" } })).body.reason).toBe(
      "country_not_allowed",
    );
    expect((await consume(merchant.keys.sk_test, { ...base, context: { merchant: "acme" } })).body.reason).toBe("context_required");
  });

  it("enforces category_allowlist: an allowed category passes, another is category_not_allowed, none is context_required", async () => {
    const { merchant, mandate } = await mandateFixture({
      scopes: ["task"],
      constraints: { category_allowlist: ["groceries", "pharmacy"] },
      ceiling: { kind: "count", count: 5, period: "lifetime" },
    });
    const base = { mandate_id: mandate.mandate_id, scope: "task" };
    for (const decide of [check, consume]) {
      expect((await decide(merchant.keys.sk_test, { ...base, context: { category: "pharmacy" } })).body).toMatchObject({ allowed: true });
    }
    const refused = await consume(merchant.keys.sk_test, { ...base, context: { category: "electronics" } });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({
      allowed: false,
      reason: "category_not_allowed",
      step_up_available: true,
      user_message: "You did not authorise actions in this category.",
    });
    // Exact match, as for scopes: no case folding, no prefix.
    for (const category of ["Pharmacy", "pharmacy/otc"]) {
      expect((await check(merchant.keys.sk_test, { ...base, context: { category } })).body.reason).toBe("category_not_allowed");
    }
    expect((await check(merchant.keys.sk_test, { ...base, context: { merchant: "acme" } })).body).toMatchObject({
      allowed: false,
      reason: "context_required",
    });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body.constraints).toEqual({ category_allowlist: ["groceries", "pharmacy"] });
    expect(got.body.consumptions).toHaveLength(1);
  });

  it("counts per daily period in UTC and resets at the boundary", async () => {
    const { merchant, mandate } = await mandateFixture({ scopes: ["login"], ceiling: { kind: "count", count: 2, period: "daily" } });
    const base = { mandate_id: mandate.mandate_id, scope: "login" };
    const day = new Date();
    day.setUTCHours(23, 59, 0, 0);
    if (day.getTime() < Date.now()) day.setUTCDate(day.getUTCDate() + 1);
    expect((await consume(merchant.keys.sk_test, base, { now: day })).body).toMatchObject({ allowed: true, remaining: { count: 1 } });
    const second = await consume(merchant.keys.sk_test, base, { now: day });
    expect(second.body).toMatchObject({ allowed: true, at_limit: true, remaining: { count: 0 } });
    const resets = new Date(day);
    resets.setUTCHours(24, 0, 0, 0);
    expect(second.body.period_resets_at).toBe(resets.toISOString().replace(".000Z", "+00:00"));
    expect((await consume(merchant.keys.sk_test, base, { now: day })).body).toMatchObject({
      allowed: false,
      reason: "mandate_exhausted",
      step_up_available: true,
    });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id }, now: day });
    expect(got.body).toMatchObject({ status: "exhausted", stored_status: "active" });
    const next = new Date(resets.getTime() + 1000);
    expect((await consume(merchant.keys.sk_test, base, { now: next })).body).toMatchObject({ allowed: true, remaining: { count: 1 } });
  });

  it("reports expired at read time, before any cleanup, and refuses consumption", async () => {
    const { merchant, mandate } = await mandateFixture({ expires_at: new Date(Date.now() + 60_000).toISOString() });
    const later = new Date(Date.now() + 120_000);
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id }, now: later });
    expect(got.body).toMatchObject({ status: "expired", stored_status: "active" });
    const listed = await call("mandate-get", { key: merchant.keys.sk_test, query: { status: "expired" }, now: later });
    expect(listed.body.mandates.map((m: { mandate_id: string }) => m.mandate_id)).toContain(mandate.mandate_id);
    const res = await consume(
      merchant.keys.sk_test,
      { mandate_id: mandate.mandate_id, scope: "purchase", amount: 1, currency: "USD" },
      { now: later },
    );
    expect(res.body).toMatchObject({ allowed: false, reason: "mandate_expired" });
  });
});

describe("mandate-get", () => {
  it("answers unknown and another merchant's mandate with the same 404 body", async () => {
    const { mandate } = await mandateFixture();
    const other = await merchantFactory();
    const foreign = await call("mandate-get", { key: other.keys.sk_test, query: { id: mandate.mandate_id } });
    const unknown = await call("mandate-get", { key: other.keys.sk_test, query: { id: "mdt_00000000000000000000000000000000" } });
    const garbage = await call("mandate-get", { key: other.keys.sk_test, query: { id: "nonsense" } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
    expect(foreign.text).toBe(unknown.text);
    expect(garbage.text).toBe(unknown.text);
  });

  it("lists the last 100 consumptions newest first", async () => {
    const { merchant, mandate } = await mandateFixture({ scopes: ["login"], ceiling: { kind: "count", count: 150, period: "lifetime" } });
    const refs: string[] = [];
    for (let i = 0; i < 103; i++) {
      const res = await consume(
        merchant.keys.sk_test,
        { mandate_id: mandate.mandate_id, scope: "login", action_ref: `a${i}` },
        { now: new Date(Date.now() + i * 1000) },
      );
      refs.push(res.body.consumption_id);
    }
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body.consumptions).toHaveLength(100);
    expect(got.body.consumptions[0].consumption_id).toBe(refs[102]);
    expect(got.body.consumptions[99].consumption_id).toBe(refs[3]);
  });

  it("requires exactly one of id or status", async () => {
    const merchant = await merchantFactory();
    expect(errorOf(await call("mandate-get", { key: merchant.keys.sk_test }))).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(errorOf(await call("mandate-get", { key: merchant.keys.sk_test, query: { status: "sleeping" } }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
  });
});

describe("mandate-revoke", () => {
  it("revokes at once for the issuing merchant; repeats say already_revoked; the next consume fails", async () => {
    const { merchant, mandate } = await mandateFixture();
    const res = await call("mandate-revoke", {
      key: merchant.keys.sk_test,
      body: { mandate_id: mandate.mandate_id, reason: "user asked" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ revoked: true, already_revoked: false, mandate_id: mandate.mandate_id, status: "revoked" });
    const again = await call("mandate-revoke", { key: merchant.keys.sk_test, body: { mandate_id: mandate.mandate_id } });
    expect(again.body).toMatchObject({ revoked: true, already_revoked: true, revoked_at: res.body.revoked_at });
    const consumed = await consume(merchant.keys.sk_test, {
      mandate_id: mandate.mandate_id,
      scope: "purchase",
      amount: 1,
      currency: "USD",
    });
    expect(consumed.body).toMatchObject({ allowed: false, reason: "mandate_revoked", step_up_available: false });
  });

  it("revokes a consumed mandate too, and announces it", async () => {
    const { merchant, mandate } = await mandateFixture({ scopes: ["login"], ceiling: { kind: "count", count: 1, period: "lifetime" } });
    expect((await consume(merchant.keys.sk_test, { mandate_id: mandate.mandate_id, scope: "login" })).body.at_limit).toBe(true);
    const res = await call("mandate-revoke", { key: merchant.keys.sk_test, body: { mandate_id: mandate.mandate_id } });
    expect(res.body).toMatchObject({ revoked: true, already_revoked: false, status: "revoked" });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body).toMatchObject({ status: "revoked", stored_status: "revoked" });
  });

  it("lets the granting human revoke with their session, never another merchant or person", async () => {
    const { merchant, person, mandate } = await mandateFixture();
    const other = await merchantFactory();
    const otherPerson = await enrollStranger(other.keys.pk_test);
    expect(errorOf(await call("mandate-revoke", { key: other.keys.sk_test, body: { mandate_id: mandate.mandate_id } }))).toEqual({
      status: 404,
      code: "not_found",
    });
    expect(
      errorOf(
        await call("mandate-revoke", {
          headers: { authorization: `Bearer ${otherPerson.session_token}` },
          body: { mandate_id: mandate.mandate_id },
        }),
      ),
    ).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await call("mandate-revoke", { key: merchant.keys.pk_test, body: { mandate_id: mandate.mandate_id } }))).toEqual({
      status: 401,
      code: "AUTH_REQUIRED",
    });
    const res = await call("mandate-revoke", {
      headers: { authorization: `Bearer ${person.session_token}` },
      body: { mandate_id: mandate.mandate_id },
    });
    expect(res.body).toMatchObject({ revoked: true, already_revoked: false });
  });
});

describe("mandate-revoke by the service role", () => {
  const serviceRole = () => ({ authorization: `Bearer ${serviceUnderTest().bindings.SERVICE_ROLE_KEY}` });

  it("revokes any merchant's mandate with Authorization: Bearer <SERVICE_ROLE_KEY>, at once, and records who revoked", async () => {
    const { merchant, mandate } = await mandateFixture();
    const res = await call("mandate-revoke", { headers: serviceRole(), body: { mandate_id: mandate.mandate_id, reason: "fraud report" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ revoked: true, already_revoked: false, mandate_id: mandate.mandate_id, status: "revoked" });
    const again = await call("mandate-revoke", { headers: serviceRole(), body: { mandate_id: mandate.mandate_id } });
    expect(again.body).toMatchObject({ revoked: true, already_revoked: true, revoked_at: res.body.revoked_at });
    const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: 1, currency: "USD" };
    expect((await consume(merchant.keys.sk_test, action)).body).toMatchObject({ allowed: false, reason: "mandate_revoked" });
    const [row] = await testDb()`select revoked_by, revoked_reason from private.mandates where id = ${mandate.mandate_id.slice(4)}::uuid`;
    expect(row).toEqual({ revoked_by: "service_role", revoked_reason: "fraud report" });
  });

  it("answers an unknown mandate 404 not_found, and a bearer that is not the service role's key is no service role", async () => {
    const { merchant, mandate } = await mandateFixture();
    expect(
      errorOf(await call("mandate-revoke", { headers: serviceRole(), body: { mandate_id: "mdt_00000000000000000000000000000000" } })),
    ).toEqual({ status: 404, code: "not_found" });
    const forged = `svc_${"0".repeat(64)}`;
    const res = await call("mandate-revoke", { headers: { authorization: `Bearer ${forged}` }, body: { mandate_id: mandate.mandate_id } });
    // Not the service role, so it is judged as the only other bearer this function takes: a session token.
    expect(errorOf(res)).toEqual({ status: 401, code: "INVALID_USER_TOKEN" });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body.status).toBe("active");
  });
});

describe("step-up (spec 3.1)", () => {
  it("never alters the standing mandate's balance, and consuming the step-up never touches its parent", async () => {
    const { merchant, person, mandate } = await mandateFixture();
    const action = { mandate_id: mandate.mandate_id, scope: "purchase", amount: 600, currency: "USD" };
    expect((await consume(merchant.keys.sk_test, action)).body.remaining.amount).toBe(100);
    const captureId = await proofCapture(merchant, person, {
      terms: { step_up_of: mandate.mandate_id, ceiling: { kind: "amount", amount: 5000, currency: "USD", period: "lifetime" } },
    });
    const stepUp = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
    expect(stepUp.status, stepUp.text).toBe(201);
    expect(stepUp.body.step_up_of).toBe(mandate.mandate_id);
    const parent = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(parent.body.consumptions).toHaveLength(1);
    expect((await check(merchant.keys.sk_test, { ...action, amount: 100 })).body).toMatchObject({
      allowed: true,
      remaining: { amount: 100 },
    });
    expect((await consume(merchant.keys.sk_test, { ...action, mandate_id: stepUp.body.mandate_id, amount: 2000 })).body).toMatchObject({
      allowed: true,
      remaining: { amount: 3000 },
    });
    expect((await check(merchant.keys.sk_test, { ...action, amount: 100 })).body).toMatchObject({
      allowed: true,
      remaining: { amount: 100 },
    });
  });

  it("takes a face-only capture (level face) as the proof of a step-up, and of nothing else (spec 4.7 rule 8, D-428)", async () => {
    const { merchant, person, mandate } = await mandateFixture();
    const {
      granted_by: _,
      proof: __,
      ...terms
    } = mandateBody(person, crypto.randomUUID(), {
      step_up_of: mandate.mandate_id,
      ceiling: { kind: "amount", amount: 5000, currency: "USD", period: "lifetime" },
    });
    const act = (shot: { nonce: string; descriptor: unknown }, extra: Record<string, unknown>) =>
      transact(merchant.keys.sk_test, {
        action: "ACTION_LOGIN",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: person.subject_ref,
        capture_nonce: shot.nonce,
        face_template: shot.descriptor,
        ...extra,
      });
    // The person looks at the screen and says nothing: judged face and voice, that is no presence.
    const silent = person.capture({ faceOnly: true });
    const asFaceVoice = await act(silent, { grant: terms });
    expect(errorOf(asFaceVoice)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
    expect(asFaceVoice.body.reason).toBe("no_speech");
    // Face only: only a step-up's grant, and only under the light challenge.
    const noStepUp = await act(person.capture({ faceOnly: true }), { grant: { ...terms, step_up_of: undefined }, presence: "face" });
    expect(errorOf(noStepUp)).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(noStepUp.body.fields).toEqual(["presence"]);
    const withoutLight = await act(person.capture(), { grant: terms, presence: "face" });
    expect(errorOf(withoutLight)).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(withoutLight.body.fields).toEqual(["face_template.version"]);

    const granted = await act(person.capture({ faceOnly: true }), { grant: terms, presence: "face" });
    expect(granted.status, granted.text).toBe(200);
    expect(granted.body.assurance_level).toBe("face");
    // The receipt says what was proven: the face.
    const verified = await call("receipt-verify", { query: { code: granted.body.receipt_code } });
    expect(verified.body).toMatchObject({ valid: true, assurance_level: "face" });
    // Not the proof of a grant that steps up from nothing.
    const proven: Record<string, unknown> = {
      ...terms,
      granted_by: person.subject_ref,
      proof: { capture_id: granted.body.transaction_id },
    };
    const { step_up_of: ___, ...standalone } = proven;
    const refused = await issue(merchant.keys.sk_test, standalone);
    expect(errorOf(refused)).toEqual({ status: 403, code: "PROOF_INVALID" });
    expect(refused.body.reason).toBe("face_only_not_a_step_up");
    const stepUp = await issue(merchant.keys.sk_test, proven);
    expect(stepUp.status, stepUp.text).toBe(201);
    expect(stepUp.body).toMatchObject({ step_up_of: mandate.mandate_id, assurance_level: "face" });
  });

  it("refuses a step-up from another person's or a revoked mandate", async () => {
    const { merchant, mandate } = await mandateFixture();
    const other = await enrollStranger(merchant.keys.pk_test);
    const captureId = await proofCapture(merchant, other, { document: true, terms: { step_up_of: mandate.mandate_id } });
    expect(errorOf(await issue(merchant.keys.sk_test, mandateBody(other, captureId)))).toEqual({
      status: 400,
      code: "STEP_UP_OF_INVALID",
    });
  });
});

describe("process-biovital-transaction with mandate_id (spec 4.4 rule 5)", () => {
  async function viaMandate(
    merchant: { keys: { sk_test: string } },
    person: { subject_ref: string },
    mandateId: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = { "idempotency-key": `idem-${crypto.randomUUID()}` },
  ) {
    return transact(
      merchant.keys.sk_test,
      {
        action: "ACTION_LOGIN",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: person.subject_ref,
        mandate_id: mandateId,
        ...extra,
      },
      { headers },
    );
  }

  it("stands in for the live capture through the same consume, and the response gains the mandate block", async () => {
    const { merchant, person, mandate } = await mandateFixture({
      scopes: ["login"],
      ceiling: { kind: "count", count: 2, period: "lifetime" },
      agent_display_name: "Login bot",
    });
    const key = `idem-${crypto.randomUUID()}`;
    const res = await viaMandate(merchant, person, mandate.mandate_id, {}, { "idempotency-key": key });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ success: true, status: "approved", assurance_level: "mandate" });
    expect(res.body.mandate).toMatchObject({
      mandate_id: mandate.mandate_id,
      scope_used: "login",
      granted_to: mandate.granted_to,
      agent_display_name: "Login bot",
      assurance_level: "face_voice_doc",
      idempotent_replay: false,
      at_limit: false,
      remaining: { count: 1 },
    });
    expect(res.body.mandate.consumption_id).toMatch(/^cns_/);
    const verified = await call("receipt-verify", { query: { code: res.body.receipt_code } });
    expect(verified.body.valid).toBe(true);
    // The ledger answers a replayed key with the act it recorded (here past the response store, as
    // once the store has forgotten the key after 24 hours).
    await testDb()`delete from private.idempotency_keys where idempotency_key = ${key}`;
    const replay = await viaMandate(
      merchant,
      person,
      mandate.mandate_id,
      { service_hash: res.body.service_hash },
      { "idempotency-key": key },
    );
    expect(replay.body.transaction_id).toBe(res.body.transaction_id);
    expect(replay.body.mandate.idempotent_replay).toBe(true);
    const last = await viaMandate(merchant, person, mandate.mandate_id);
    expect(last.body.mandate).toMatchObject({ at_limit: true, remaining: { count: 0 } });
    // A refusal is the spec's refusal shape (7.2), HTTP 200, localised; nothing is recorded.
    const refused = await viaMandate(
      merchant,
      person,
      mandate.mandate_id,
      {},
      { ...replayHeaders(), "idempotency-key": `idem-${crypto.randomUUID()}`, "accept-language": "pt-BR" },
    );
    expect(refused.status, refused.text).toBe(200);
    expect(refused.body).toMatchObject({
      success: false,
      status: "refused",
      allowed: false,
      reason: "mandate_exhausted",
      step_up_available: true,
    });
    expect(refused.body.developer_message).toMatch(/ceiling is used up/);
    expect(refused.body.user_message).toEqual(expect.any(String));
    expect(refused.headers.get("content-language")).toBe("pt-BR");
    expect(refused.body).not.toHaveProperty("transaction_id");
  });

  it("a stand-in act is never proof for a new mandate", async () => {
    const { merchant, person, mandate } = await mandateFixture({
      scopes: ["login"],
      ceiling: { kind: "count", count: 5, period: "lifetime" },
    });
    const res = await viaMandate(merchant, person, mandate.mandate_id);
    const escalation = await issue(
      merchant.keys.sk_test,
      mandateBody(person, res.body.transaction_id, { ceiling: { kind: "amount", amount: 100000, currency: "USD" } }),
    );
    expect(errorOf(escalation)).toEqual({ status: 403, code: "PROOF_INVALID" });
  });

  it("refuses another person's mandate and keeps rule 3 for payments", async () => {
    const { merchant, mandate } = await mandateFixture({ scopes: ["payment"], ceiling: { kind: "amount", amount: 1000, currency: "BRL" } });
    const other = await enrollStranger(merchant.keys.pk_test);
    const res = await viaMandate(merchant, other, mandate.mandate_id, { action: "ACTION_PAYMENT", amount: 10, currency: "BRL" });
    expect(errorOf(res)).toEqual({ status: 403, code: "DOCUMENT_REQUIRED" });
    await proofCapture(merchant, other, { document: true });
    const again = await viaMandate(merchant, other, mandate.mandate_id, { action: "ACTION_PAYMENT", amount: 10, currency: "BRL" });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ success: false, allowed: false, reason: "mandate_not_found", step_up_available: false });
    expect(again.body).not.toHaveProperty("user_message");
  });
});

describe("a mandate standing in is visible on the receipt (issue 11)", () => {
  it("signs ACTION_MANDATE at assurance mandate, naming the mandate, the act and the grant's level; receipt-verify says the same", async () => {
    const { merchant, person, mandate } = await mandateFixture({
      scopes: ["payment"],
      ceiling: { kind: "amount", amount: 5000, currency: "BRL", period: "lifetime" },
    });
    const res = await transact(
      merchant.keys.sk_test,
      {
        action: "ACTION_PAYMENT",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: person.subject_ref,
        mandate_id: mandate.mandate_id,
        amount: 1299,
        currency: "BRL",
      },
      { headers: { "idempotency-key": `idem-${crypto.randomUUID()}` } },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.assurance_level).toBe("mandate");
    expect(res.body.mandate.assurance_level).toBe("face_voice_doc");

    const verified = await call("receipt-verify", { query: { code: res.body.receipt_code } });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toMatchObject({
      valid: true,
      transaction_id: res.body.transaction_id,
      action: "ACTION_MANDATE",
      assurance_level: "mandate",
      amount: { minor: 1299, currency: "BRL" },
      mandate: { mandate_id: mandate.mandate_id, action: "ACTION_PAYMENT", assurance_level: "face_voice_doc" },
    });
    const payload = JSON.parse(Buffer.from(verified.body.jws.split(".")[1], "base64url").toString());
    expect(payload).toMatchObject({
      act: "ACTION_MANDATE",
      assurance_level: "mandate",
      mandate_id: mandate.mandate_id,
      mandate_act: "ACTION_PAYMENT",
      mandate_assurance_level: "face_voice_doc",
    });

    // A live act's receipt names no mandate.
    const live = await proofCapture(merchant, person);
    const receipt = await testDb()`select code from private.receipts where capture_id = ${live}::uuid`;
    const liveVerified = await call("receipt-verify", { query: { code: receipt[0].code } });
    expect(liveVerified.body).toMatchObject({ valid: true, action: "ACTION_LOGIN", assurance_level: "face_voice_doc", mandate: null });
  });
});

describe("the stand-in's Idempotency-Key is optional (spec 4.1, D-426)", () => {
  it("without a key the act runs once under its replay nonce: a retry is 409 NONCE_REUSED and debits nothing; a reused service_hash with a new nonce is a new act; revocation refuses the next one", async () => {
    const { merchant, person, mandate } = await mandateFixture({
      scopes: ["login"],
      ceiling: { kind: "count", count: 5, period: "lifetime" },
    });
    const body = {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: person.subject_ref,
      mandate_id: mandate.mandate_id,
    };
    const headers = replayHeaders();
    const first = await transact(merchant.keys.sk_test, body, { headers });
    expect(first.status, first.text).toBe(200);
    expect(first.body.mandate).toMatchObject({ idempotent_replay: false, remaining: { count: 4 } });
    // The same request again (its answer lost, say): the nonce is used, nothing runs.
    const retry = await transact(merchant.keys.sk_test, body, { headers });
    expect(errorOf(retry)).toEqual({ status: 409, code: "NONCE_REUSED" });
    // The ledger holds the act under the nonce: even a request that passed the guard could not debit it twice.
    const ledger =
      await testDb()`select idempotency_key from private.mandate_consumptions where mandate_id = ${mandate.mandate_id.slice(4)}::uuid`;
    expect(ledger.map((row) => row.idempotency_key)).toEqual([`x-service-nonce ${headers["x-service-nonce"]}`]);

    const second = await transact(merchant.keys.sk_test, body);
    expect(second.status, second.text).toBe(200);
    expect(second.body.transaction_id).not.toBe(first.body.transaction_id);
    expect(second.body.mandate).toMatchObject({ idempotent_replay: false, remaining: { count: 3 } });

    await call("mandate-revoke", { key: merchant.keys.sk_test, body: { mandate_id: mandate.mandate_id } });
    const after = await transact(merchant.keys.sk_test, body);
    expect(after.status, after.text).toBe(200);
    expect(after.body).toMatchObject({ success: false, allowed: false, reason: "mandate_revoked" });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body.consumptions).toHaveLength(2);
  });
});

describe("no mandate is open-ended (issue 11)", () => {
  it("accepts expires_at up to 365 days after issue and refuses anything later with EXPIRES_AT_TOO_FAR", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const now = new Date(Date.now() + 1000);
    now.setUTCMilliseconds(0);
    // The capture is made to grant the mandate that expires at the edge; the refused expiries are judged before the proof.
    const edgeAt = new Date(now.getTime() + 365 * 86_400_000).toISOString();
    const captureId = await proofCapture(merchant, person, { document: true, at: now, terms: { expires_at: edgeAt } });
    const attempt = (expires: string) => issue(merchant.keys.sk_test, mandateBody(person, captureId, { expires_at: expires }), { now });
    const far = await attempt("9999-12-31T23:59:59Z");
    expect(errorOf(far)).toEqual({ status: 400, code: "EXPIRES_AT_TOO_FAR" });
    expect(far.body.max_days).toBe(365);
    expect(errorOf(await attempt(new Date(now.getTime() + 365 * 86_400_000 + 1000).toISOString()))).toEqual({
      status: 400,
      code: "EXPIRES_AT_TOO_FAR",
    });
    const edge = await attempt(new Date(now.getTime() + 365 * 86_400_000).toISOString());
    expect(edge.status, edge.text).toBe(201);
  });
});

describe("a replayed consume after revocation is no permission (issue 11)", () => {
  it("keeps the consumption but answers allowed: false, mandate_revoked, with the mandate's status now; the stand-in refuses too", async () => {
    const { merchant, person, mandate } = await mandateFixture({
      scopes: ["login"],
      ceiling: { kind: "count", count: 5, period: "lifetime" },
    });
    const action = { mandate_id: mandate.mandate_id, scope: "login" };
    const key = `idem-${crypto.randomUUID()}`;
    const first = await consume(merchant.keys.sk_test, action, { idempotencyKey: key });
    expect(first.body).toMatchObject({ allowed: true, idempotent_replay: false });
    const before = await consume(merchant.keys.sk_test, action, { idempotencyKey: key });
    expect(before.body).toEqual({ ...first.body, idempotent_replay: true, mandate_status: "active" });

    // The stand-in's act, recorded in the ledger under its key.
    const sinkKey = `idem-${crypto.randomUUID()}`;
    const sinkBody = {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: person.subject_ref,
      mandate_id: mandate.mandate_id,
    };
    const act = await transact(merchant.keys.sk_test, sinkBody, { headers: { "idempotency-key": sinkKey } });
    expect(act.status, act.text).toBe(200);

    await call("mandate-revoke", { key: merchant.keys.sk_test, body: { mandate_id: mandate.mandate_id } });
    const replay = await consume(merchant.keys.sk_test, action, { idempotencyKey: key, locale: "pt-BR" });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({
      allowed: false,
      reason: "mandate_revoked",
      step_up_available: false,
      idempotent_replay: true,
      mandate_status: "revoked",
      consumption_id: first.body.consumption_id,
    });
    expect(typeof replay.body.user_message).toBe("string");
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body.consumptions.map((c: { consumption_id: string }) => c.consumption_id)).toContain(first.body.consumption_id);
    expect(got.body.consumptions).toHaveLength(2);

    // The same act replayed through the ledger after revocation is refused.
    await testDb()`delete from private.idempotency_keys where idempotency_key = ${sinkKey}`;
    const again = await transact(merchant.keys.sk_test, sinkBody, { headers: { "idempotency-key": sinkKey } });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ allowed: false, reason: "mandate_revoked", idempotent_replay: true, mandate_status: "revoked" });
  });
});

describe("the sink's replay of a stand-in is the ledger's: the mandate's status now, refused once revoked (issues 11, 25)", () => {
  it("an exact retry replays the act with mandate_status active; after revocation it is the refusal mandate_revoked, marked replayed", async () => {
    const { merchant, person, mandate } = await mandateFixture({
      scopes: ["login"],
      ceiling: { kind: "count", count: 5, period: "lifetime" },
    });
    const request = standInRequest(person, mandate.mandate_id);
    const headers = { ...replayHeaders(), "idempotency-key": `idem-${crypto.randomUUID()}` };
    const act = await transact(merchant.keys.sk_test, request, { headers });
    expect(act.status, act.text).toBe(200);
    expect(act.body.mandate.idempotent_replay).toBe(false);
    expect(act.body.mandate).not.toHaveProperty("mandate_status");
    /** The first answer as a replay says it: a replay, and the mandate's status at the replay. */
    const replayOf = (status: string) => ({
      ...act.body,
      mandate: { ...act.body.mandate, idempotent_replay: true, mandate_status: status },
    });

    const before = await transact(merchant.keys.sk_test, request, { headers });
    expect([before.status, before.headers.get("idempotency-status")]).toEqual([200, "replayed"]);
    expect(before.body).toEqual(replayOf("active"));

    await call("mandate-revoke", { key: merchant.keys.sk_test, body: { mandate_id: mandate.mandate_id } });
    // The same answer as mandate-consume's replay and the ledger's after 24 hours: the act happened (its
    // consumption is named), but an agent that lost the answer must not act now.
    const after = await transact(merchant.keys.sk_test, request, { headers });
    expect(after.status, after.text).toBe(200);
    expect(after.headers.get("idempotency-status")).toBe("replayed");
    expect(after.body).toMatchObject({
      allowed: false,
      reason: "mandate_revoked",
      idempotent_replay: true,
      mandate_status: "revoked",
      consumption_id: act.body.mandate.consumption_id,
    });

    const next = await transact(merchant.keys.sk_test, standInRequest(person, mandate.mandate_id), {
      headers: { "idempotency-key": `idem-${crypto.randomUUID()}` },
    });
    expect(next.status, next.text).toBe(200);
    expect(next.body).toMatchObject({ success: false, allowed: false, reason: "mandate_revoked" });
    const got = await call("mandate-get", { key: merchant.keys.sk_test, query: { id: mandate.mandate_id } });
    expect(got.body.consumptions).toHaveLength(1);
  });
});

describe("mandate-get by status (issue 11)", () => {
  it("carries stored_status on every item and answers every mandate past 200", async () => {
    const { merchant, mandate } = await mandateFixture({ expires_at: new Date(Date.now() + 60_000).toISOString() });
    const later = new Date(Date.now() + 120_000);
    const expired = await call("mandate-get", { key: merchant.keys.sk_test, query: { status: "expired" }, now: later });
    expect(expired.body.mandates).toEqual([
      expect.objectContaining({ mandate_id: mandate.mandate_id, status: "expired", stored_status: "active" }),
    ]);

    // 250 more mandates of the same merchant, copied in SQL (the listing is what is under test).
    const id = mandate.mandate_id.slice(4);
    await testDb()`
      insert into private.mandates (id, merchant_id, environment, granted_by, granted_by_ref, granted_to, granted_to_kind, scopes,
        constraints, ceiling_kind, ceiling_amount, ceiling_currency, ceiling_count, ceiling_period, assurance_level, capture_id,
        expires_at, created_at, updated_at)
      select gen_random_uuid(), merchant_id, environment, granted_by, granted_by_ref, granted_to || '_' || n, granted_to_kind, scopes,
        constraints, ceiling_kind, ceiling_amount, ceiling_currency, ceiling_count, ceiling_period, assurance_level, capture_id,
        expires_at, created_at + n * interval '1 millisecond', updated_at
      from private.mandates, generate_series(1, 250) n where id = ${id}::uuid`;
    const all = await call("mandate-get", { key: merchant.keys.sk_test, query: { status: "expired" }, now: later });
    expect(all.status, all.text).toBe(200);
    expect(all.body.mandates).toHaveLength(251);
    expect(all.body.mandates[250].mandate_id).toBe(mandate.mandate_id);
  });

  it("reads a status list past 1,000 a thousand at a time, with issued_before a mandate it holds (no refusal, no cursor)", async () => {
    const { merchant, mandate } = await mandateFixture();
    const id = mandate.mandate_id.slice(4);
    // 1,200 more in one statement, all issued at the same instant as the fixture's: ties are ordered by id.
    await testDb()`
      insert into private.mandates (id, merchant_id, environment, granted_by, granted_by_ref, granted_to, granted_to_kind, scopes,
        constraints, ceiling_kind, ceiling_amount, ceiling_currency, ceiling_count, ceiling_period, assurance_level, capture_id,
        expires_at, created_at, updated_at)
      select gen_random_uuid(), merchant_id, environment, granted_by, granted_by_ref, granted_to || '_' || n, granted_to_kind, scopes,
        constraints, ceiling_kind, ceiling_amount, ceiling_currency, ceiling_count, ceiling_period, assurance_level, capture_id,
        expires_at, created_at, updated_at
      from private.mandates, generate_series(1, 1200) n where id = ${id}::uuid`;
    const list = (query: Record<string, string>) =>
      call("mandate-get", { key: merchant.keys.sk_test, query: { status: "active", ...query } });
    const first = await list({});
    expect(first.status, first.text).toBe(200);
    expect(first.body.mandates).toHaveLength(1000);
    expect(first.body.has_more).toBe(true);
    const last = first.body.mandates[999].mandate_id;
    const rest = await list({ issued_before: last });
    expect(rest.status, rest.text).toBe(200);
    expect(rest.body).toMatchObject({ has_more: false });
    expect(rest.body.mandates).toHaveLength(201);
    const ids = [...first.body.mandates, ...rest.body.mandates].map((m: { mandate_id: string }) => m.mandate_id);
    expect(new Set(ids).size).toBe(1201);
    expect(ids).toContain(mandate.mandate_id);
    // the same question asked again answers the same set: it is a filter, not a position in a session
    expect((await list({ issued_before: last })).body.mandates.map((m: { mandate_id: string }) => m.mandate_id)).toEqual(ids.slice(1000));
    // a mandate that is not this merchant's, or no mandate id at all, is the same 404 as an id read
    const stranger = await mandateFixture();
    for (const issuedBefore of [stranger.mandate.mandate_id, "mdt_00000000000000000000000000000000", "nope"]) {
      expect(errorOf(await list({ issued_before: issuedBefore })), issuedBefore).toEqual({ status: 404, code: "not_found" });
    }
    expect(errorOf(await call("mandate-get", { key: merchant.keys.sk_test, query: { id: last, issued_before: last } }))).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
    });
  });
});

describe("a coerced proof is reported as coercion (issue 11)", () => {
  it("answers PROOF_INVALID with reason coercion_detected, not liveness_failed", async () => {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const shot = person.capture();
    const serviceHash = `svc:${crypto.randomUUID()}`;
    const refused = await transact(
      merchant.keys.sk_test,
      {
        action: "ACTION_LOGIN",
        service_hash: serviceHash,
        user_id: person.subject_ref,
        capture_nonce: shot.nonce,
        face_template: shot.descriptor,
      },
      { headers: { "x-service-scenario": "vrc_coerced" } },
    );
    expect(errorOf(refused)).toEqual({ status: 403, code: "COERCION_DETECTED" });
    const [capture] = await testDb()`select id from private.captures where service_hash = ${serviceHash} and coercion_signal`;
    expect(capture).toBeDefined();
    const res = await issue(merchant.keys.sk_test, mandateBody(person, capture.id, { scopes: ["login"], ceiling: { kind: "none" } }));
    expect(errorOf(res)).toEqual({ status: 403, code: "PROOF_INVALID" });
    expect(res.body.reason).toBe("coercion_detected");
  });
});
