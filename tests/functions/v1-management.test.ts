/**
 * The account's management on /v1 (docs/management.md) over HTTP: keys, webhook endpoints, their
 * deliveries and replays, the account's settings and the audit log. Each operation: its happy path,
 * bad input, a wrong kind of key, a key without the scope, another merchant's object, a retry under
 * the same Idempotency-Key, and the management bucket's 429.
 */
import { describe, expect, it } from "vitest";
import { addOwner } from "../../shared/merchants/accounts";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { v1 } from "../harness/resource-api";
import { bootedSession } from "../harness/resource-sessions";
import { screenCall } from "../harness/sessions";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;

/** A key of `merchant`'s test environment with `scopes`, made through the API with its full key. */
async function keyWith(merchant: Merchant, scopes: string[]): Promise<string> {
  const made = await v1("/api_keys", { key: merchant.keys.sk_test, body: { scopes, name: scopes.join("+") } });
  expect(made.status, made.text).toBe(201);
  return made.body.secret as string;
}

/** A merchant with one endpoint (https, never delivered to: the shared service runs no worker) and a queued test delivery. */
async function withEndpoint() {
  const merchant = await merchantFactory();
  const key = merchant.keys.sk_test;
  const endpoint = await v1("/webhook_endpoints", { key, body: { url: "https://example.com/hooks", event_types: ["mandate.revoked"] } });
  expect(endpoint.status, endpoint.text).toBe(201);
  const test = await v1(`/webhook_endpoints/${endpoint.body.id}/test`, { key, body: {} });
  expect(test.status, test.text).toBe(202);
  return {
    merchant,
    key,
    endpointId: endpoint.body.id as string,
    deliveryId: test.body.delivery_id as string,
    eventId: test.body.event_id,
  };
}

async function auditActions(merchantId: string): Promise<string[]> {
  const rows =
    await testDb()`select action from private.management_audit_events where merchant_id = ${merchantId} order by occurred_at, id`;
  return rows.map((row) => row.action as string);
}

describe("/v1/api_keys", () => {
  it("lists keys by hint, creates one shown once, rolls it with an overlap after which the old key stops, and revokes", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const listed = await v1("/api_keys", { key });
    expect(listed.status).toBe(200);
    // the test environment's two keys; never a key or its hash
    expect(listed.body.data.map((k: { kind: string }) => k.kind).sort()).toEqual(["publishable", "secret"]);
    expect(listed.text).not.toContain(key);
    expect(listed.body.data[0]).toMatchObject({
      environment: "test",
      status: "active",
      scopes: ["api", "management.read", "management.write"],
    });

    const created = await v1("/api_keys", { key, body: { scopes: ["api"], name: "Checkout server" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: "api_key", kind: "secret", scopes: ["api"], name: "Checkout server", status: "active" });
    expect(created.body.secret).toMatch(/^sk_test_/);
    // it works at once, and it is used (last_used_at is set)
    expect((await v1("/mandates", { key: created.body.secret })).status).toBe(200);
    const used = (await v1("/api_keys", { key })).body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(used.last_used_at).not.toBeNull();

    const now = Date.now();
    const rolled = await v1(`/api_keys/${created.body.id}/roll`, { key, body: { overlap_seconds: 3600 } });
    expect(rolled.status, rolled.text).toBe(200);
    expect(rolled.body.secret).toMatch(/^sk_test_/);
    expect(rolled.body.secret).not.toBe(created.body.secret);
    expect(rolled.body.scopes).toEqual(["api"]);
    expect(rolled.body.rolled).toMatchObject({ id: created.body.id, status: "expiring", rolled_to: rolled.body.id });
    expect(Date.parse(rolled.body.rolled.expires_at) - now).toBeGreaterThan(3590_000);
    expect(Date.parse(rolled.body.rolled.expires_at) - now).toBeLessThanOrEqual(3600_000 + 5000);
    // both work during the overlap; the old one stops after it
    expect((await v1("/mandates", { key: created.body.secret })).status).toBe(200);
    expect((await v1("/mandates", { key: rolled.body.secret })).status).toBe(200);
    const later = new Date(now + 3601_000);
    expect(errorOf(await v1("/mandates", { key: created.body.secret, now: later }))).toEqual({ status: 401, code: "invalid_api_key" });
    expect((await v1("/mandates", { key: rolled.body.secret, now: later })).status).toBe(200);
    // a rolled key cannot be rolled again
    expect(errorOf(await v1(`/api_keys/${created.body.id}/roll`, { key, body: {} }))).toEqual({ status: 409, code: "key_inactive" });

    const revoked = await v1(`/api_keys/${rolled.body.id}/revoke`, { key, body: {} });
    expect(revoked.body).toMatchObject({ status: "revoked", revoked_at: expect.any(String) });
    expect(errorOf(await v1("/mandates", { key: rolled.body.secret }))).toEqual({ status: 401, code: "invalid_api_key" });
    const again = await v1(`/api_keys/${rolled.body.id}/revoke`, { key, body: {} });
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);

    expect(await auditActions(merchant.merchant_id)).toEqual(["api_key.created", "api_key.rolled", "api_key.revoked"]);
  });

  it("rolls with the 24-hour overlap by default and refuses a longer one", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const made = await v1("/api_keys", { key, body: {} });
    expect(errorOf(await v1(`/api_keys/${made.body.id}/roll`, { key, body: { overlap_seconds: 86_401 } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    const rolled = await v1(`/api_keys/${made.body.id}/roll`, { key, body: {} });
    expect(Date.parse(rolled.body.rolled.expires_at) - Date.parse(rolled.body.created_at)).toBe(86_400_000);
    const zero = await v1(`/api_keys/${rolled.body.id}/roll`, { key, body: { overlap_seconds: 0 } });
    expect(zero.body.rolled.status).toBe("expired");
    expect(errorOf(await v1("/mandates", { key: rolled.body.secret }))).toEqual({ status: 401, code: "invalid_api_key" });
  });

  it("never mints a scope the caller lacks, and a key without api acts nowhere: a dashboard key cannot make a payment key", async () => {
    const merchant = await merchantFactory();
    const dashboard = await keyWith(merchant, ["management.read", "management.write"]);
    expect(errorOf(await v1("/api_keys", { key: dashboard, body: { scopes: ["api"] } }))).toEqual({
      status: 403,
      code: "insufficient_scope",
    });
    // without scopes it gets its creator's own
    const child = await v1("/api_keys", { key: dashboard, body: {} });
    expect(child.body.scopes).toEqual(["management.read", "management.write"]);
    // no act of the resource API nor of the function API
    expect(errorOf(await v1("/mandates", { key: dashboard, body: {} }))).toEqual({ status: 403, code: "insufficient_scope" });
    expect(errorOf(await v1("/mandates/mdt_00000000000000000000000000000000/check", { key: dashboard, body: {} }))).toEqual({
      status: 403,
      code: "insufficient_scope",
    });
    // it reads what support reads (D-454)
    expect((await v1("/mandates", { key: dashboard })).status).toBe(200);
    const { call } = await import("../harness/http");
    expect(errorOf(await call("disclose-claims", { key: dashboard, body: {} }))).toEqual({ status: 401, code: "INVALID_API_KEY" });
    expect(errorOf(await call("disclose-claims", { key: merchant.keys.sk_test, body: {} }))).toEqual({
      status: 400,
      code: "INVALID_INPUT",
    });
    // a publishable key carries api only
    expect(
      errorOf(await v1("/api_keys", { key: merchant.keys.sk_test, body: { kind: "publishable", scopes: ["management.read"] } })),
    ).toEqual({
      status: 400,
      code: "invalid_input",
    });
    const pk = await v1("/api_keys", { key: merchant.keys.sk_test, body: { kind: "publishable" } });
    expect(pk.body).toMatchObject({ kind: "publishable", scopes: ["api"] });
    expect(pk.body.secret).toMatch(/^pk_test_/);
  });

  it("keeps no key in the clear for a retry: the replay answers the same object with secret null", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const first = await v1("/api_keys", { key, body: { name: "Once" }, idempotencyKey: "create-key-0001" });
    const again = await v1("/api_keys", { key, body: { name: "Once" }, idempotencyKey: "create-key-0001" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-status")).toBe("replayed");
    expect(again.body).toEqual({ ...first.body, secret: null });
    expect((await v1("/api_keys", { key })).body.data.filter((k: { name: string }) => k.name === "Once")).toHaveLength(1);
    const [stored] = await testDb()`select response_body::text as body from private.idempotency_keys
      where merchant_id = ${merchant.merchant_id} and idempotency_key = 'create-key-0001'`;
    expect(stored.body).not.toContain(first.body.secret);
  });
});

describe("/v1/webhook_endpoints", () => {
  it("registers (https only, secret once), lists, updates, disables and enables, rotates with both secrets valid", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    expect(errorOf(await v1("/webhook_endpoints", { key, body: { url: "http://example.com/hooks" } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    expect(errorOf(await v1("/webhook_endpoints", { key, body: { url: "https://example.com/h", event_types: ["no.such"] } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    const created = await v1("/webhook_endpoints", { key, body: { url: "https://example.com/hooks" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: "webhook_endpoint", environment: "test", event_types: null, status: "active" });
    expect(created.body.secret).toMatch(/^whsec_/);
    const id = created.body.id as string;

    const listed = await v1("/webhook_endpoints", { key });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    expect(listed.text).not.toContain(created.body.secret);

    const updated = await v1(`/webhook_endpoints/${id}`, {
      key,
      body: { url: "https://example.com/v2/hooks", event_types: ["mandate.consumed", "mandate.at_limit"] },
    });
    expect(updated.body).toMatchObject({ url: "https://example.com/v2/hooks", event_types: ["mandate.consumed", "mandate.at_limit"] });
    expect((await v1(`/webhook_endpoints/${id}`, { key, body: { event_types: null } })).body.event_types).toBeNull();

    expect((await v1(`/webhook_endpoints/${id}/disable`, { key, body: {} })).body).toMatchObject({
      status: "disabled",
      disabled_reason: "manual",
    });
    expect(errorOf(await v1(`/webhook_endpoints/${id}/test`, { key, body: {} }))).toEqual({ status: 409, code: "endpoint_disabled" });
    expect((await v1(`/webhook_endpoints/${id}/enable`, { key, body: {} })).body).toMatchObject({
      status: "active",
      disabled_reason: null,
    });

    const rotated = await v1(`/webhook_endpoints/${id}/rotate_secret`, { key, body: {} });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(rotated.body.secrets).toHaveLength(2);
    expect(Date.parse(rotated.body.previous_valid_until) - Date.now()).toBeGreaterThan(86_390_000);
    expect(errorOf(await v1(`/webhook_endpoints/${id}/rotate_secret`, { key, body: { overlap_seconds: 90_000 } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });

    expect(await auditActions(merchant.merchant_id)).toEqual([
      "webhook_endpoint.created",
      "webhook_endpoint.updated",
      "webhook_endpoint.updated",
      "webhook_endpoint.disabled",
      "webhook_endpoint.enabled",
      "webhook_endpoint.secret_rotated",
    ]);
    const audit = await v1("/audit_events", { key, query: { action: "webhook_endpoint.updated", limit: "1" } });
    expect(audit.body.data[0]).toMatchObject({
      action: "webhook_endpoint.updated",
      object_id: id,
      actor: { kind: "api_key", id: expect.stringMatching(/^key_/) },
      before: { event_types: ["mandate.consumed", "mandate.at_limit"] },
      after: { event_types: null },
    });
    expect(JSON.stringify(audit.body)).not.toContain("whsec_");
  });

  it("queues a test event to one endpoint, pages deliveries with their payload, replays one delivery and a time range", async () => {
    const { key, endpointId, deliveryId, eventId } = await withEndpoint();
    const delivery = await v1(`/webhook_deliveries/${deliveryId}`, { key });
    expect(delivery.body).toMatchObject({
      id: deliveryId,
      endpoint_id: endpointId,
      origin: "test",
      state: "pending",
      event: { id: eventId, type: "webhook.test", data: { endpoint_id: endpointId } },
      attempts: [],
    });
    const replayed = await v1(`/webhook_deliveries/${deliveryId}/replay`, { key, body: {} });
    expect(replayed.body).toEqual({ object: "webhook_replay", events: 1, deliveries: 1 });
    const page = await v1("/webhook_deliveries", { key, query: { endpoint_id: endpointId, limit: "1" } });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const next = await v1("/webhook_deliveries", { key, query: { endpoint_id: endpointId, limit: "1", cursor: page.body.next_cursor } });
    expect(next.body.data).toHaveLength(1);
    expect(next.body.next_cursor).toBeNull();
    expect(new Set([page.body.data[0].id, next.body.data[0].id]).size).toBe(2);
    expect(errorOf(await v1("/webhook_deliveries", { key, query: { cursor: "not-a-cursor" } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });

    // the test event is not of the subscribed types, so a range replay to the subscribed endpoints sends nothing
    const from = new Date(Date.now() - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    expect((await v1("/webhook_events/replay", { key, body: { from, to } })).body).toMatchObject({ events: 1, deliveries: 0 });
    expect(errorOf(await v1("/webhook_events/replay", { key, body: { from: to, to: from } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
  });
});

describe("/v1/account and /v1/audit_events", () => {
  it("reads and sets the at_limit threshold, pages and exports the audit log", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    expect((await v1("/account", { key })).body).toMatchObject({
      id: merchant.merchant_id,
      environment: "test",
      at_limit_threshold_percent: 20,
    });
    expect((await v1("/account", { key, body: { at_limit_threshold_percent: 5 } })).body.at_limit_threshold_percent).toBe(5);
    expect(errorOf(await v1("/account", { key, body: { at_limit_threshold_percent: 100 } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    for (let i = 0; i < 3; i++) await v1("/api_keys", { key, body: { name: `k${i}` } });
    const first = await v1("/audit_events", { key, query: { limit: "2" } });
    expect(first.body.data.map((e: { action: string }) => e.action)).toEqual(["api_key.created", "api_key.created"]);
    const second = await v1("/audit_events", { key, query: { limit: "2", cursor: first.body.next_cursor } });
    expect(second.body.data.map((e: { action: string }) => e.action)).toEqual(["api_key.created", "account.updated"]);
    expect(second.body.next_cursor).toBeNull();
    const exported = await v1("/audit_events/export", { key });
    expect(exported.headers.get("content-disposition")).toContain("attachment");
    expect(exported.body).toMatchObject({ object: "audit_export", truncated: false });
    expect(exported.body.data).toHaveLength(4);
    expect(exported.body.data[3]).toMatchObject({
      action: "account.updated",
      before: { at_limit_threshold_percent: 20 },
      after: { at_limit_threshold_percent: 5 },
    });
    // the live environment's log is another
    expect((await v1("/audit_events", { key: merchant.keys.sk_live })).body.data).toEqual([]);
    // append-only
    await expect(
      testDb()`update private.management_audit_events set action = 'x.y' where merchant_id = ${merchant.merchant_id}`,
    ).rejects.toThrow();
    await expect(testDb()`delete from private.management_audit_events where merchant_id = ${merchant.merchant_id}`).rejects.toThrow();
  });
});

describe("/v1/owners and /v1/usage", () => {
  it("lists owners, invites a person who accepts by proving presence, never removes the last owner; reads usage", async () => {
    const merchant = await merchantFactory();
    const other = await merchantFactory();
    const key = merchant.keys.sk_test;
    const first = await enrollStranger(merchant.keys.pk_test);
    const invited = await enrollStranger(merchant.keys.pk_test);
    const stranger = await enrollStranger(other.keys.pk_test);
    await addOwner(testDb(), merchant.merchant_id, first.subject_ref, new Date());
    const listed = await v1("/owners", { key });
    expect(listed.body.data).toEqual([{ object: "owner", subject_ref: first.subject_ref, added_at: expect.any(String) }]);
    expect(errorOf(await v1(`/owners/${first.subject_ref}/remove`, { key, body: {} }))).toEqual({ status: 409, code: "last_owner" });

    const return_url = "https://example.com/console/owners";
    // bad input, a person the merchant does not hold, an owner already, a key without the scope, a publishable key
    expect(errorOf(await v1("/owners", { key, body: { subject_ref: "someone", return_url } }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    expect(errorOf(await v1("/owners", { key, body: { subject_ref: stranger.subject_ref, return_url } }))).toEqual({
      status: 404,
      code: "not_found",
    });
    expect(errorOf(await v1("/owners", { key, body: { subject_ref: first.subject_ref, return_url } }))).toEqual({
      status: 409,
      code: "already_owner",
    });
    const readOnly = await keyWith(merchant, ["management.read"]);
    expect(errorOf(await v1("/owners", { key: readOnly, body: { subject_ref: invited.subject_ref, return_url } }))).toEqual({
      status: 403,
      code: "insufficient_scope",
    });
    expect(errorOf(await v1("/owners", { key: merchant.keys.pk_test }))).toEqual({ status: 401, code: "auth_required" });

    const idempotencyKey = `invite-${crypto.randomUUID()}`;
    const invitation = await v1("/owners", { key, body: { subject_ref: invited.subject_ref, return_url }, idempotencyKey });
    expect(invitation.status, invitation.text).toBe(201);
    expect(invitation.body).toMatchObject({ object: "owner_invitation", subject_ref: invited.subject_ref, status: "pending" });
    const replay = await v1("/owners", { key, body: { subject_ref: invited.subject_ref, return_url }, idempotencyKey });
    expect(replay.body).toEqual({ ...invitation.body, url: null });
    expect((await v1("/owners", { key })).body.invitations).toHaveLength(1);

    // the invited person proves presence on the hosted screen: they own the account
    const screen = await bootedSession(invitation.body.url);
    const nonce = screen.capture_nonce;
    const done = await screenCall("complete", screen.screen_token, {
      capture_nonce: nonce,
      face_template: invited.capture({ nonce, light: true }).descriptor,
    });
    expect(done.body.outcome.approved, done.text).toBe(true);
    const after = await v1("/owners", { key });
    expect(after.body.data.map((o: { subject_ref: string }) => o.subject_ref).sort()).toEqual(
      [first.subject_ref, invited.subject_ref].sort(),
    );
    expect(after.body.invitations[0]).toMatchObject({ status: "accepted", accepted_at: expect.any(String) });

    // another merchant's key cannot remove them; then the first owner goes, the last stays
    expect(errorOf(await v1(`/owners/${first.subject_ref}/remove`, { key: other.keys.sk_test, body: {} }))).toEqual({
      status: 404,
      code: "not_found",
    });
    expect((await v1(`/owners/${first.subject_ref}/remove`, { key, body: {} })).body).toEqual({
      object: "owner",
      subject_ref: first.subject_ref,
      removed: true,
    });
    expect(errorOf(await v1(`/owners/${first.subject_ref}/remove`, { key, body: {} }))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await v1(`/owners/${invited.subject_ref}/remove`, { key, body: {} }))).toEqual({ status: 409, code: "last_owner" });
    const audit = await v1("/audit_events", { key, query: { action: "owner.accepted" } });
    expect(audit.body.data[0]).toMatchObject({ actor: { kind: "owner", id: invited.subject_ref }, object_id: invited.subject_ref });
    expect(await auditActions(merchant.merchant_id)).toEqual(expect.arrayContaining(["owner.invited", "owner.accepted", "owner.removed"]));

    const usage = await v1("/usage", { key: readOnly });
    expect(usage.body).toMatchObject({ object: "usage", environment: "test", claims_billed: 0, allowance: 100, allowance_remaining: 100 });
    expect(errorOf(await v1("/usage", { key, query: { month: "2026-13" } }))).toEqual({ status: 400, code: "invalid_input" });
    expect(errorOf(await v1("/usage", { key: await keyWith(merchant, ["api"]) }))).toEqual({ status: 403, code: "insufficient_scope" });
  });
});

describe("read views for support", () => {
  it("pages the environment's sessions with filters, and lets a dashboard key read sessions and mandates but not act", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const made = [];
    for (let i = 0; i < 3; i++) {
      const session = await v1("/sessions", {
        key,
        body: { mode: "claim", return_url: "https://example.com/back", metadata: { n: String(i) } },
      });
      expect(session.status, session.text).toBe(201);
      made.push(session.body.id as string);
    }
    const dashboard = await keyWith(merchant, ["management.read"]);
    const first = await v1("/sessions", { key: dashboard, query: { limit: "2" } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.map((s: { id: string }) => s.id)).toEqual([made[2], made[1]]);
    expect(first.text).not.toContain("hst_");
    const second = await v1("/sessions", { key: dashboard, query: { limit: "2", cursor: first.body.next_cursor } });
    expect(second.body.data.map((s: { id: string }) => s.id)).toEqual([made[0]]);
    expect(second.body.next_cursor).toBeNull();
    expect((await v1("/sessions", { key, query: { status: "open", mode: "claim" } })).body.data).toHaveLength(3);
    expect((await v1("/sessions", { key, query: { mode: "recognise" } })).body.data).toEqual([]);
    // after their 30 minutes they read expired
    const later = new Date(Date.now() + 31 * 60_000);
    expect((await v1("/sessions", { key, query: { status: "expired" }, now: later })).body.data).toHaveLength(3);
    expect(errorOf(await v1("/sessions", { key, query: { status: "lost" } }))).toEqual({ status: 400, code: "invalid_input" });
    expect((await v1(`/sessions/${made[0]}`, { key: dashboard })).status).toBe(200);
    expect((await v1("/mandates", { key: dashboard, query: { status: "active" } })).status).toBe(200);
    // another merchant's pages hold none of them; a write-only key reads nothing; the dashboard key acts nowhere
    const other = await merchantFactory();
    expect((await v1("/sessions", { key: other.keys.sk_test })).body.data).toEqual([]);
    expect(errorOf(await v1(`/sessions/${made[0]}`, { key: other.keys.sk_test }))).toEqual({ status: 404, code: "not_found" });
    const writeOnly = await keyWith(merchant, ["management.write"]);
    expect(errorOf(await v1("/sessions", { key: writeOnly }))).toEqual({ status: 403, code: "insufficient_scope" });
    expect(errorOf(await v1("/sessions", { key: dashboard, body: { mode: "claim", return_url: "https://example.com/back" } }))).toEqual({
      status: 403,
      code: "insufficient_scope",
    });
  });
});

/** Every operation, to hold each to the same rules. */
interface Operation {
  name: string;
  scope: "management.read" | "management.write";
  /** The request against `owner`'s objects. */
  request(owner: Fixture): { path: string; body?: unknown; query?: Record<string, string> };
  /** A request with bad input, when the operation takes any. */
  bad?(owner: Fixture): { path: string; body?: unknown; query?: Record<string, string> };
  /** Whether it names one object (another merchant's is 404). */
  object?: boolean;
}

interface Fixture {
  merchant: Merchant;
  key: string;
  keyId: string;
  endpointId: string;
  deliveryId: string;
}

async function fixture(): Promise<Fixture> {
  const { merchant, key, endpointId, deliveryId } = await withEndpoint();
  const spare = await v1("/api_keys", { key, body: { name: "spare" } });
  return { merchant, key, keyId: spare.body.id, endpointId, deliveryId };
}

const iso = (offset: number) => new Date(Date.now() + offset).toISOString();

const operations: Operation[] = [
  { name: "list keys", scope: "management.read", request: () => ({ path: "/api_keys" }) },
  {
    name: "create a key",
    scope: "management.write",
    request: () => ({ path: "/api_keys", body: { name: "matrix" } }),
    bad: () => ({ path: "/api_keys", body: { scopes: ["everything"] } }),
  },
  {
    name: "roll a key",
    scope: "management.write",
    object: true,
    request: (f) => ({ path: `/api_keys/${f.keyId}/roll`, body: { overlap_seconds: 60 } }),
    bad: (f) => ({ path: `/api_keys/${f.keyId}/roll`, body: { overlap_seconds: -1 } }),
  },
  { name: "revoke a key", scope: "management.write", object: true, request: (f) => ({ path: `/api_keys/${f.keyId}/revoke`, body: {} }) },
  { name: "list endpoints", scope: "management.read", request: () => ({ path: "/webhook_endpoints" }) },
  {
    name: "register an endpoint",
    scope: "management.write",
    request: () => ({ path: "/webhook_endpoints", body: { url: "https://example.com/matrix" } }),
    bad: () => ({ path: "/webhook_endpoints", body: { url: "ftp://example.com" } }),
  },
  { name: "read an endpoint", scope: "management.read", object: true, request: (f) => ({ path: `/webhook_endpoints/${f.endpointId}` }) },
  {
    name: "update an endpoint",
    scope: "management.write",
    object: true,
    request: (f) => ({ path: `/webhook_endpoints/${f.endpointId}`, body: { url: "https://example.com/moved" } }),
    bad: (f) => ({ path: `/webhook_endpoints/${f.endpointId}`, body: { url: "https://user:pw@example.com/" } }),
  },
  {
    name: "disable an endpoint",
    scope: "management.write",
    object: true,
    request: (f) => ({ path: `/webhook_endpoints/${f.endpointId}/disable`, body: {} }),
  },
  {
    name: "enable an endpoint",
    scope: "management.write",
    object: true,
    request: (f) => ({ path: `/webhook_endpoints/${f.endpointId}/enable`, body: {} }),
  },
  {
    name: "rotate a secret",
    scope: "management.write",
    object: true,
    request: (f) => ({ path: `/webhook_endpoints/${f.endpointId}/rotate_secret`, body: { overlap_seconds: 3600 } }),
    bad: (f) => ({ path: `/webhook_endpoints/${f.endpointId}/rotate_secret`, body: { overlap_seconds: "soon" } }),
  },
  {
    name: "send a test event",
    scope: "management.write",
    object: true,
    request: (f) => ({ path: `/webhook_endpoints/${f.endpointId}/test`, body: {} }),
  },
  {
    name: "list deliveries",
    scope: "management.read",
    request: () => ({ path: "/webhook_deliveries" }),
    bad: () => ({ path: "/webhook_deliveries", query: { state: "lost" } }),
  },
  { name: "read a delivery", scope: "management.read", object: true, request: (f) => ({ path: `/webhook_deliveries/${f.deliveryId}` }) },
  {
    name: "replay a delivery",
    scope: "management.write",
    object: true,
    request: (f) => ({ path: `/webhook_deliveries/${f.deliveryId}/replay`, body: {} }),
  },
  {
    name: "replay a range",
    scope: "management.write",
    request: () => ({ path: "/webhook_events/replay", body: { from: iso(-3_600_000), to: iso(60_000) } }),
    bad: () => ({ path: "/webhook_events/replay", body: { from: "yesterday", to: iso(0) } }),
  },
  {
    name: "list the audit log",
    scope: "management.read",
    request: () => ({ path: "/audit_events" }),
    bad: () => ({ path: "/audit_events", query: { limit: "0" } }),
  },
  {
    name: "export the audit log",
    scope: "management.read",
    request: () => ({ path: "/audit_events/export" }),
    bad: () => ({ path: "/audit_events/export", query: { from: "last week" } }),
  },
  { name: "read the account", scope: "management.read", request: () => ({ path: "/account" }) },
  {
    name: "set the threshold",
    scope: "management.write",
    request: () => ({ path: "/account", body: { at_limit_threshold_percent: 10 } }),
    bad: () => ({ path: "/account", body: { at_limit_threshold_percent: 12.5 } }),
  },
];

describe("every management operation", () => {
  it("answers its happy path, and refuses bad input, a publishable key, a key without the scope and another merchant's object", async () => {
    const owner = await fixture();
    const other = await fixture();
    const readOnly = await keyWith(owner.merchant, ["management.read"]);
    const apiOnly = await keyWith(owner.merchant, ["api"]);
    for (const operation of operations) {
      const send = (key: string, request: { path: string; body?: unknown; query?: Record<string, string> }) =>
        v1(request.path, { key, body: request.body, query: request.query });
      const label = operation.name;
      expect(errorOf(await send(owner.merchant.keys.pk_test, operation.request(owner))), label).toEqual({
        status: 401,
        code: "auth_required",
      });
      expect(errorOf(await send(apiOnly, operation.request(owner))), label).toEqual({ status: 403, code: "insufficient_scope" });
      if (operation.scope === "management.write")
        expect(errorOf(await send(readOnly, operation.request(owner))), label).toEqual({ status: 403, code: "insufficient_scope" });
      if (operation.bad)
        expect(errorOf(await send(owner.key, operation.bad(owner))), label).toEqual({ status: 400, code: "invalid_input" });
      if (operation.object)
        expect(errorOf(await send(other.key, operation.request(owner))), label).toEqual({ status: 404, code: "not_found" });
      // the other environment's key does not see the test environment's objects either
      if (operation.object)
        expect(errorOf(await send(owner.merchant.keys.sk_live, operation.request(owner))), label).toEqual({
          status: 404,
          code: "not_found",
        });
      const happy = await send(operation.scope === "management.read" ? readOnly : owner.key, operation.request(owner));
      expect(happy.status, `${label}: ${happy.text}`).toBeLessThan(300);
    }
    // nothing refused was written: only the happy paths are in the other merchant's log (none) and the owner's
    expect(await auditActions(other.merchant.merchant_id)).toEqual([
      "webhook_endpoint.created",
      "webhook_endpoint.tested",
      "api_key.created",
    ]);
  });

  it("replays every write under the same Idempotency-Key, and refuses the key with another body", async () => {
    for (const operation of operations.filter((op) => op.scope === "management.write")) {
      const owner = await fixture();
      const request = operation.request(owner);
      const idempotencyKey = `retry-${crypto.randomUUID()}`;
      const first = await v1(request.path, { key: owner.key, body: request.body, idempotencyKey });
      expect(first.status, `${operation.name}: ${first.text}`).toBeLessThan(300);
      const before = await auditActions(owner.merchant.merchant_id);
      const again = await v1(request.path, { key: owner.key, body: request.body, idempotencyKey });
      expect(again.status, operation.name).toBe(first.status);
      expect(again.headers.get("idempotency-status"), operation.name).toBe("replayed");
      const secretless = typeof first.body.secret === "string" ? { ...first.body, secret: null } : first.body;
      expect(again.body, operation.name).toEqual(secretless);
      // the act ran once
      expect(await auditActions(owner.merchant.merchant_id), operation.name).toEqual(before);
      const other = await v1(request.path, { key: owner.key, body: { ...(request.body as object), unknown_field: 1 }, idempotencyKey });
      expect(errorOf(other), operation.name).toEqual({ status: 422, code: "idempotency_key_reused" });
    }
  });

  it("counts every management request against the key's management bucket (burst 40, the same in the sandbox): then 429", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const first = await v1("/account", { key });
    expect(first.headers.get("service-ratelimit-limit")).toBe("40");
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 80 }, () => v1("/api_keys", { key })));
    const seconds = (Date.now() - started) / 1000;
    const passed = burst.filter((r) => r.status === 200).length;
    const limited = burst.filter((r) => r.status === 429);
    expect(passed + limited.length).toBe(80);
    expect(passed).toBeGreaterThanOrEqual(39);
    expect(passed).toBeLessThanOrEqual(39 + Math.ceil(20 * seconds) + 1);
    for (const r of limited) {
      expect(r.body.code).toBe("rate_limited");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    // the acts' buckets are another's: reads of mandates still pass
    expect((await v1("/mandates", { key })).status).toBe(200);
  });
});
