/**
 * The hosted session's rules at the operations (shared/sessions/create.ts, consume.ts): the body's
 * rules and their codes as the surface parses it (parseInput with createSessionSchema), then
 * createSession and consumeSession against the migrated database at the `now` each call passes.
 * tests/functions/hosted-session-create.test.ts holds the same over HTTP.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ServicePrincipal, Tenant } from "../../shared/kernel/principal";
import { parseInput } from "../../shared/kernel/validation";
import { sha256Hex } from "../../shared/lib/crypto";
import { consumeSession } from "../../shared/sessions/consume";
import { createSession, createSessionSchema } from "../../shared/sessions/create";
import { depsAt, domainDb, plusSeconds, refusal, refusedWith, seedTenant } from "../harness/domain";
import { authorizeBody, CREATED_KEYS } from "../harness/sessions";

const T0 = new Date("2027-06-01T08:00:00.000Z");
const BASE_URL = "https://auth.example.test";
const service: ServicePrincipal = { kind: "service" };

/** The body as the surface parses it. */
const parsed = (body: unknown) => parseInput(createSessionSchema, body);

/** Creates a session of `tenant` at `now` from the body as sent. */
function create(tenant: Tenant, body: unknown, now: Date = T0) {
  return createSession(depsAt(now), tenant, parsed(body), BASE_URL);
}

const sessionsOf = async (tenant: Tenant) =>
  (await domainDb().unsafe(`select count(*)::int as n from private.hosted_sessions where merchant_id = $1`, [tenant.merchantId]))[0].n;

describe("createSessionSchema: each field answers its own code (4.12)", () => {
  const refused: Record<string, [name: string, body: unknown][]> = {
    INVALID_ACTION: [
      ["action missing", {}],
      ["action null", { action: null }],
      ["action unknown", { action: "pay" }],
      ["action not a string", { action: 1 }],
    ],
    INVALID_EXTERNAL_TXN_REF: [
      ["too short", { action: "login", external_txn_ref: "abc" }],
      ["with a space", { action: "login", external_txn_ref: "order 12345" }],
      ["too long", { action: "login", external_txn_ref: "x".repeat(129) }],
      ["a number", { action: "login", external_txn_ref: 12345678 }],
    ],
    INVALID_AMOUNT_CENTS: [
      ["negative", authorizeBody({ amount_cents: -1 })],
      ["a string", authorizeBody({ amount_cents: "1299" })],
      ["a fraction", authorizeBody({ amount_cents: 12.5 })],
      ["beyond 2^53", authorizeBody({ amount_cents: 2 ** 53 })],
      ["on login", { action: "login", amount_cents: 100 }],
    ],
    INVALID_CURRENCY: [
      ["lowercase", authorizeBody({ currency: "eur" })],
      ["unknown", authorizeBody({ currency: "XXX" })],
      ["on sign", { action: "sign", currency: "EUR" }],
    ],
    AMOUNT_AND_REF_REQUIRED: [
      ["authorize without amount", authorizeBody({ amount_cents: undefined })],
      ["authorize without currency", authorizeBody({ currency: undefined })],
      ["authorize without reference", authorizeBody({ external_txn_ref: undefined })],
      ["authorize with the amount null", authorizeBody({ amount_cents: null })],
    ],
    INVALID_TTL: [
      ["59", { action: "login", ttl_seconds: 59 }],
      ["901", { action: "login", ttl_seconds: 901 }],
      ["fractional", { action: "login", ttl_seconds: 120.5 }],
      ["a string", { action: "login", ttl_seconds: "300" }],
    ],
    INVALID_BRAND: [
      ["empty", { action: "login", brand: "" }],
      ["with surrounding spaces", { action: "login", brand: " Acme " }],
      ["over 80 characters", { action: "login", brand: "A".repeat(81) }],
      ["with a control character", { action: "login", brand: "Acme\nTravel" }],
      ["not a string", { action: "login", brand: 7 }],
    ],
    INVALID_METADATA: [
      ["an array", { action: "login", metadata: ["a"] }],
      ["a string", { action: "login", metadata: "a=b" }],
      ["with a number", { action: "login", metadata: { n: 1 } }],
      ["nested", { action: "login", metadata: { a: { b: "c" } } }],
      ["with an empty key", { action: "login", metadata: { "": "x" } }],
    ],
    METADATA_TOO_LARGE: [
      ["51 keys", { action: "login", metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) }],
      ["a key over 40 characters", { action: "login", metadata: { ["k".repeat(41)]: "v" } }],
      ["a value over 500 characters", { action: "login", metadata: { note: "v".repeat(501) } }],
    ],
    INVALID_INPUT: [
      ["an unknown field", { action: "login", ammount_cents: 5 }],
      ["a body that is no object", ["login"]],
      ["merchant_id not a string", { action: "login", merchant_id: 5 }],
    ],
  };
  it.each(Object.entries(refused))("%s", async (code, cases) => {
    for (const [name, body] of cases) expect(await refusedWith(() => parsed(body)), name).toBe(code);
  });

  it("accepts the edges: ttl 60 and 900, amount 0 in a 3-decimal currency, 50 keys of 40 characters with 500-character values", () => {
    for (const ttl of [60, 900]) expect(parsed({ action: "login", ttl_seconds: ttl }).ttl_seconds).toBe(ttl);
    expect(parsed(authorizeBody({ amount_cents: 0, currency: "BHD" }))).toMatchObject({ amount_cents: 0, currency: "BHD" });
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padStart(40, "k"), "v".repeat(500)]));
    expect(parsed({ action: "login", metadata }).metadata).toEqual(metadata);
  });

  it("names the unknown field it refuses (a misspelt one is never ignored)", async () => {
    expect((await refusal(() => parsed({ action: "login", ammount_cents: 5 }))).extra).toEqual({ fields: ["ammount_cents"] });
  });
});

describe("createSession", () => {
  it("stores the session under its token's SHA-256 and answers the fields of 2.7 at the request's instant", async () => {
    const tenant = await seedTenant();
    const body = authorizeBody({ brand: "Acme Travel", metadata: { order: "A-1" }, ttl_seconds: 600 });
    const created = await create(tenant, body);
    expect(Object.keys(created).sort()).toEqual(CREATED_KEYS);
    expect(created).toMatchObject({
      merchant_id: tenant.merchantId,
      action: "authorize",
      external_txn_ref: body.external_txn_ref,
      amount_cents: 1299,
      currency: "EUR",
      brand: "Acme Travel",
      metadata: { order: "A-1" },
      ttl_seconds: 600,
      expires_at: plusSeconds(T0, 600).toISOString(),
      created_at: T0.toISOString(),
      single_use: true,
      state: "open",
    });
    const token = created.session_token;
    expect(token).toMatch(/^hst_[A-Za-z0-9_-]{43}$/);
    expect(created.url).toBe(`${BASE_URL}/functions/v1/hosted-capture/session#${token}`);
    const [row] = await domainDb().unsafe(`select token_hash, environment from private.hosted_sessions where merchant_id = $1`, [
      tenant.merchantId,
    ]);
    expect(row).toEqual({ token_hash: await sha256Hex(token), environment: "test" });
  });

  it("defaults ttl to 300 and metadata to {}, and null is absent, for every action but authorize", async () => {
    const tenant = await seedTenant();
    for (const action of ["enroll", "login", "sign"]) {
      expect(await create(tenant, { action, brand: null, ttl_seconds: null, metadata: null })).toMatchObject({
        action,
        ttl_seconds: 300,
        expires_at: plusSeconds(T0, 300).toISOString(),
        metadata: {},
        external_txn_ref: null,
        amount_cents: null,
        currency: null,
        brand: null,
      });
    }
  });

  it("takes merchant_id only when it is the tenant's own (any case): else MERCHANT_MISMATCH, and nothing is stored", async () => {
    const [tenant, other] = await Promise.all([seedTenant("live"), seedTenant()]);
    for (const merchantId of [other.merchantId, "not-a-merchant"]) {
      expect(await refusedWith(() => create(tenant, { action: "login", merchant_id: merchantId }))).toBe("MERCHANT_MISMATCH");
    }
    expect(await sessionsOf(tenant)).toBe(0);
    expect(await create(tenant, { action: "login", merchant_id: tenant.merchantId.toUpperCase() })).toMatchObject({
      merchant_id: tenant.merchantId,
    });
    const [row] = await domainDb().unsafe(`select environment from private.hosted_sessions where merchant_id = $1`, [tenant.merchantId]);
    expect(row.environment).toBe("live");
  });
});

describe("consumeSession: the token is exchanged once, before the session expires", () => {
  it("exchanges once; a second exchange is SESSION_ALREADY_CONSUMED", async () => {
    const tenant = await seedTenant();
    const { session_token } = await create(tenant, { action: "login" });
    const exchanged = await consumeSession(depsAt(plusSeconds(T0, 1)), service, session_token);
    expect(exchanged).toMatchObject({ screen_token: expect.any(String), capture_nonce: expect.any(String) });
    expect(await refusedWith(consumeSession(depsAt(plusSeconds(T0, 2)), service, session_token))).toBe("SESSION_ALREADY_CONSUMED");
  });

  it("is SESSION_EXPIRED at exactly expires_at; a millisecond before it still exchanges", async () => {
    const tenant = await seedTenant();
    const [late, early] = [
      await create(tenant, { action: "login", ttl_seconds: 60 }),
      await create(tenant, { action: "login", ttl_seconds: 60 }),
    ];
    expect(await refusedWith(consumeSession(depsAt(plusSeconds(T0, 60)), service, late.session_token))).toBe("SESSION_EXPIRED");
    expect(await consumeSession(depsAt(plusSeconds(T0, 59.999)), service, early.session_token)).toMatchObject({
      screen_token: expect.any(String),
    });
  });

  it("reaches a merchant's own sessions only: another merchant's token or a malformed one is not_found, and stays unused", async () => {
    const [tenant, other] = await Promise.all([seedTenant(), seedTenant()]);
    const { session_token } = await create(tenant, { action: "login" });
    const asMerchant = (t: Tenant) => ({ kind: "merchant_key" as const, ...t, keyKind: "secret" as const, keyId: randomUUID() });
    expect(await refusedWith(consumeSession(depsAt(T0), asMerchant(other), session_token))).toBe("not_found");
    expect(await refusedWith(consumeSession(depsAt(T0), service, "hst_short"))).toBe("not_found");
    expect(await consumeSession(depsAt(T0), asMerchant(tenant), session_token)).toMatchObject({ screen_token: expect.any(String) });
  });
});
