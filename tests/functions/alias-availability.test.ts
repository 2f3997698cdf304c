import { describe, expect, it } from "vitest";
import { RESERVED_ALIASES } from "../../shared/aliases/alias";
import { randomHex, sha256Hex } from "../../shared/lib/crypto";
import { merchantFactory, testDb } from "../harness/factories";
import { type CallOptions, call, errorOf, freshIp } from "../harness/http";
import { enrollStranger } from "../harness/identity";

const FN = "alias-availability";
const CHECK_KEYS = ["alias", "available", "format_code", "format_ok", "suggestions"];
const RESERVE_KEYS = ["alias", "claim_token", "expires_at", "format_code", "format_ok", "reserved", "ttl_seconds"];

/** A valid alias no other test (or earlier run) uses. */
function freshAlias(prefix = "al"): string {
  return `${prefix}_${randomHex(6)}`;
}

function alias(body: Record<string, unknown>, options: Omit<CallOptions, "body"> & { ip?: string } = {}) {
  const { ip, ...rest } = options;
  return call(FN, { ...rest, method: "POST", body, ...(ip || !rest.key ? { from: ip ?? freshIp() } : {}) });
}

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

describe("alias-availability", () => {
  describe("happy", () => {
    it("checks a free alias with a publishable key (check is the default action)", async () => {
      const m = await merchantFactory();
      const name = freshAlias();
      for (const body of [{ alias: name }, { action: "check", alias: name }]) {
        const res = await alias(body, { key: m.keys.pk_test });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ alias: name, format_ok: true, format_code: null, available: true, suggestions: [] });
        expect(res.headers.get("cache-control")).toBe("no-store");
      }
    });

    it("echoes the normalised alias: leading @ dropped, trimmed, lowercased", async () => {
      const m = await merchantFactory();
      const name = freshAlias("ana");
      const res = await alias({ alias: `  @${name.toUpperCase()} ` }, { key: m.keys.sk_test });
      expect(res.body).toMatchObject({ alias: name, format_ok: true, format_code: null, available: true });
    });

    it("strips separators and symbols before validating (spec 4.17 rule 2): the stripped alias is judged, echoed and reserved", async () => {
      const m = await merchantFactory();
      const name = freshAlias("ana");
      const dotted = `${name.slice(0, 3)}.${name.slice(3, 6)}-${name.slice(6)}`;
      for (const input of [` @${dotted.toUpperCase()}! `, `@@${name}`, `${name.slice(0, 2)} ${name.slice(2)}`]) {
        const res = await alias({ alias: input }, { key: m.keys.sk_test });
        expect(res.body, input).toEqual({ alias: name, format_ok: true, format_code: null, available: true, suggestions: [] });
      }
      const reserved = await alias({ action: "reserve", alias: `${dotted}!` }, { key: m.keys.sk_test });
      expect(reserved.body).toMatchObject({ alias: name, format_ok: true, reserved: true });
      expect((await alias({ alias: name }, { key: m.keys.pk_test })).body).toMatchObject({ alias: name, available: false });
      // stripping never smuggles a reserved word past the list
      expect((await alias({ alias: "ad.min" })).body).toMatchObject({ alias: "admin", format_ok: false, format_code: "ALIAS_RESERVED" });
    });

    it("reserves with a default TTL of 300 s and returns the full reserve shape", async () => {
      const m = await merchantFactory();
      const name = freshAlias();
      const now = new Date();
      const res = await alias({ action: "reserve", alias: `@${name}` }, { key: m.keys.pk_test, now });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(RESERVE_KEYS);
      expect(res.body).toMatchObject({ alias: name, format_ok: true, format_code: null, reserved: true, ttl_seconds: 300 });
      expect(res.body.claim_token).toMatch(/^ct_[0-9A-Za-z]{43}$/);
      expect(res.body.expires_at).toBe(at(now, 300).toISOString());
      expect(res.headers.get("cache-control")).toBe("no-store");
    });

    it("accepts ttl_seconds up to 900", async () => {
      const m = await merchantFactory();
      const now = new Date();
      const res = await alias({ action: "reserve", alias: freshAlias(), ttl_seconds: 900 }, { key: m.keys.sk_test, now });
      expect(res.body).toMatchObject({ reserved: true, ttl_seconds: 900, expires_at: at(now, 900).toISOString() });
    });

    it("a reserved alias is taken for everyone in the environment, with suggestions", async () => {
      const [holder, other] = await Promise.all([merchantFactory(), merchantFactory()]);
      const name = freshAlias();
      expect((await alias({ action: "reserve", alias: name }, { key: holder.keys.pk_test })).status).toBe(200);

      for (const key of [other.keys.pk_test, other.keys.sk_test, holder.keys.pk_test]) {
        const res = await alias({ alias: name }, { key });
        expect(res.body).toEqual({
          alias: name,
          format_ok: true,
          format_code: null,
          available: false,
          suggestions: [`${name}1`, `${name}2`, `${name}3`],
        });
      }
      const again = await alias({ action: "reserve", alias: name }, { key: other.keys.pk_test });
      expect(errorOf(again)).toEqual({ status: 409, code: "ALIAS_TAKEN" });
      expect(again.headers.get("cache-control")).toBe("no-store");
    });

    it("suggestions are deterministic, at most three, and each verified free", async () => {
      const [holder, other] = await Promise.all([merchantFactory(), merchantFactory()]);
      const name = freshAlias();
      for (const taken of [name, `${name}1`, `${name}3`]) {
        expect((await alias({ action: "reserve", alias: taken }, { key: holder.keys.sk_test })).status).toBe(200);
      }
      const first = await alias({ alias: name }, { key: other.keys.pk_test });
      const second = await alias({ alias: name }, { key: other.keys.pk_test });
      expect(first.body.suggestions).toEqual([`${name}2`, `${name}4`, `${name}5`]);
      expect(second.body.suggestions).toEqual(first.body.suggestions);
      for (const suggestion of first.body.suggestions) {
        expect((await alias({ alias: suggestion }, { key: other.keys.pk_test })).body).toMatchObject({ available: true, suggestions: [] });
      }
    });

    it("release frees the alias at once", async () => {
      const [holder, other] = await Promise.all([merchantFactory(), merchantFactory()]);
      const name = freshAlias();
      const reserved = await alias({ action: "reserve", alias: name }, { key: holder.keys.pk_test });
      const released = await alias(
        { action: "release", alias: `@${name.toUpperCase()}`, claim_token: reserved.body.claim_token },
        { key: holder.keys.sk_test },
      );
      expect(released.status).toBe(200);
      expect(released.body).toEqual({ alias: name, released: true });
      expect(released.headers.get("cache-control")).toBe("no-store");
      expect((await alias({ alias: name }, { key: other.keys.pk_test })).body).toMatchObject({ available: true });
      expect((await alias({ action: "reserve", alias: name }, { key: other.keys.pk_test })).status).toBe(200);
    });

    it("a reservation expires with nothing running once the request clock passes its TTL", async () => {
      const [holder, other] = await Promise.all([merchantFactory(), merchantFactory()]);
      const name = freshAlias();
      const t0 = new Date();
      const reserved = await alias({ action: "reserve", alias: name, ttl_seconds: 60 }, { key: holder.keys.pk_test, now: t0 });
      expect(reserved.body.expires_at).toBe(at(t0, 60).toISOString());

      expect((await alias({ alias: name }, { key: other.keys.pk_test, now: at(t0, 59) })).body.available).toBe(false);
      expect((await alias({ alias: name }, { key: other.keys.pk_test, now: at(t0, 60) })).body).toMatchObject({
        available: true,
        suggestions: [],
      });
      const taken = await alias({ action: "reserve", alias: name }, { key: other.keys.pk_test, now: at(t0, 61) });
      expect(taken.body).toMatchObject({ reserved: true, alias: name });

      const late = await alias(
        { action: "release", alias: name, claim_token: reserved.body.claim_token },
        { key: holder.keys.pk_test, now: at(t0, 62) },
      );
      expect(errorOf(late)).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
    });

    it("an anonymous caller may check, in the live namespace", async () => {
      const m = await merchantFactory();
      const [inTest, inLive] = [freshAlias(), freshAlias()];
      await alias({ action: "reserve", alias: inTest }, { key: m.keys.pk_test });
      await alias({ action: "reserve", alias: inLive }, { key: m.keys.pk_live });
      const test = await alias({ alias: inTest });
      const live = await alias({ alias: inLive });
      expect(test.status).toBe(200);
      expect(test.body).toMatchObject({ alias: inTest, available: true });
      expect(live.body).toMatchObject({ alias: inLive, available: false });
      expect(live.body.suggestions).toHaveLength(3);
    });
  });

  describe("format", () => {
    it.each([
      ["ab", "ab", "ALIAS_TOO_SHORT"],
      ["a".repeat(31), "a".repeat(31), "ALIAS_TOO_LONG"],
      ["9lives", "9lives", "ALIAS_MUST_START_WITH_LETTER"],
      // a letter or digit outside a-z and 0-9 is not stripped (that would respell the name): it is refused
      ["José", "josé", "ALIAS_INVALID_CHARS"],
      ["@Мария", "мария", "ALIAS_INVALID_CHARS"],
      ["ana٣", "ana٣", "ALIAS_INVALID_CHARS"],
      ["a.b", "ab", "ALIAS_TOO_SHORT"],
      ["ana_", "ana_", "ALIAS_TRAILING_UNDERSCORE"],
      ["ana__maria", "ana__maria", "ALIAS_DOUBLE_UNDERSCORE"],
      ["@Admin", "admin", "ALIAS_RESERVED"],
    ])("check %j → 200, format_ok false, %j echoed, %s", async (input, echoed, code) => {
      const m = await merchantFactory();
      const res = await alias({ alias: input }, { key: m.keys.pk_test });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ alias: echoed, format_ok: false, format_code: code, available: false, suggestions: [] });
    });

    it.each(["admin", "support", "security", "legal", "official", "api", "login", "receipt", "mandate", "payment"])(
      "refuses the reserved word %s",
      async (word) => {
        const res = await alias({ alias: word });
        expect(res.body).toMatchObject({ alias: word, format_ok: false, format_code: "ALIAS_RESERVED", available: false });
      },
    );

    it("a bad format on reserve is a 200 with format_ok false and no reservation", async () => {
      const m = await merchantFactory();
      for (const word of ["x!", [...RESERVED_ALIASES][0]]) {
        const res = await alias({ action: "reserve", alias: word }, { key: m.keys.pk_test });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ format_ok: false, reserved: false });
        expect(res.body.format_code).toMatch(/^ALIAS_/);
        expect(res.body).not.toHaveProperty("claim_token");
      }
      const rows = await testDb()`select count(*)::int as n from private.aliases where merchant_id = ${m.merchant_id}`;
      expect(rows[0].n).toBe(0);
    });
  });

  describe("errors", () => {
    it.each([
      [{ action: "reserve", alias: "abc", ttl_seconds: 901 }, ["ttl_seconds"]],
      [{ action: "reserve", alias: "abc", ttl_seconds: 0 }, ["ttl_seconds"]],
      [{ action: "reserve", alias: "abc", ttl_seconds: 1.5 }, ["ttl_seconds"]],
      [{ action: "reserve", alias: "abc", ttl_seconds: "300" }, ["ttl_seconds"]],
      [{ action: "check" }, ["alias"]],
      [{ alias: 42 }, ["alias"]],
      [{ alias: "a".repeat(129) }, ["alias"]],
      [{ action: "claim", alias: "abc" }, ["claim_token", "subject_ref"]],
      [{ action: "transfer", alias: "abc" }, ["action"]],
      [{ action: "release", alias: "abc" }, ["claim_token"]],
      [["abc"], ["body"]],
    ])("%j → 400 INVALID_INPUT with fields %j", async (body, fields) => {
      const m = await merchantFactory();
      const res = await alias(body as Record<string, unknown>, { key: m.keys.sk_test });
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(res.body.fields).toEqual(fields);
      expect(res.headers.get("cache-control")).toBe("no-store");
    });

    it("refuses a body that is not JSON", async () => {
      const res = await call(FN, {
        method: "POST",
        rawBody: "{",
        headers: { "content-type": "application/json" },
        from: freshIp(),
      });
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_JSON" });
    });

    it.each(["GET", "PUT", "DELETE"])("answers %s with 405 METHOD_NOT_ALLOWED", async (method) => {
      const res = await call(FN, { method });
      expect(errorOf(res)).toEqual({ status: 405, code: "METHOD_NOT_ALLOWED" });
      expect(res.headers.get("cache-control")).toBe("no-store");
    });

    it("release with a wrong token, a repeated release and an unreserved alias are 409 CLAIM_TOKEN_INVALID", async () => {
      const m = await merchantFactory();
      const name = freshAlias();
      const reserved = await alias({ action: "reserve", alias: name }, { key: m.keys.pk_test });
      const wrong = await alias({ action: "release", alias: name, claim_token: `ct_${"x".repeat(43)}` }, { key: m.keys.pk_test });
      expect(errorOf(wrong)).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
      expect(
        (await alias({ action: "release", alias: name, claim_token: reserved.body.claim_token }, { key: m.keys.pk_test })).status,
      ).toBe(200);
      const repeat = await alias({ action: "release", alias: name, claim_token: reserved.body.claim_token }, { key: m.keys.pk_test });
      expect(errorOf(repeat)).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
      const never = await alias(
        { action: "release", alias: freshAlias(), claim_token: reserved.body.claim_token },
        { key: m.keys.pk_test },
      );
      expect(errorOf(never)).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
    });
  });

  describe("security", () => {
    it.each(["reserve", "release"])("%s without a key is 401 API_KEY_REQUIRED", async (action) => {
      const res = await alias({ action, alias: freshAlias(), claim_token: `ct_${"a".repeat(43)}` });
      expect(errorOf(res)).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
      expect(res.headers.get("cache-control")).toBe("no-store");
    });

    it.each([
      ["malformed", "pk_test_short"],
      ["unknown", `pk_test_${"A".repeat(40)}`],
    ])("a %s key is 401 INVALID_API_KEY, even for check", async (_, key) => {
      const res = await alias({ alias: freshAlias() }, { key });
      expect(errorOf(res)).toEqual({ status: 401, code: "INVALID_API_KEY" });
      expect(res.headers.get("cache-control")).toBe("no-store");
    });

    it.each([
      ["reserve", { alias: "abc", action: "reserve" }],
      ["check", { alias: "abc" }],
    ])("never accepts user_id (%s)", async (_, body) => {
      const m = await merchantFactory();
      const res = await alias({ ...body, user_id: "00000000-0000-0000-0000-000000000001" }, { key: m.keys.pk_test });
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(res.body.fields).toEqual(["user_id"]);
    });

    it("never returns user_id", async () => {
      const m = await merchantFactory();
      const name = freshAlias();
      const check = await alias({ alias: name }, { key: m.keys.pk_test });
      const reserve = await alias({ action: "reserve", alias: name }, { key: m.keys.pk_test });
      const release = await alias({ action: "release", alias: name, claim_token: reserve.body.claim_token }, { key: m.keys.pk_test });
      expect(Object.keys(check.body).sort()).toEqual(CHECK_KEYS);
      expect(Object.keys(reserve.body).sort()).toEqual(RESERVE_KEYS);
      expect(Object.keys(release.body).sort()).toEqual(["alias", "released"]);
      for (const res of [check, reserve, release]) expect(res.text).not.toContain("user_id");
    });

    it("only the reserving merchant can release, even with the right token", async () => {
      const [holder, thief] = await Promise.all([merchantFactory(), merchantFactory()]);
      const name = freshAlias();
      const reserved = await alias({ action: "reserve", alias: name }, { key: holder.keys.pk_test });
      const stolen = await alias({ action: "release", alias: name, claim_token: reserved.body.claim_token }, { key: thief.keys.sk_test });
      expect(errorOf(stolen)).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
      const live = await alias({ action: "release", alias: name, claim_token: reserved.body.claim_token }, { key: holder.keys.pk_live });
      expect(errorOf(live)).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
      expect((await alias({ alias: name }, { key: thief.keys.pk_test })).body.available).toBe(false);
    });

    it("test and live are separate namespaces", async () => {
      const [a, b] = await Promise.all([merchantFactory(), merchantFactory()]);
      const name = freshAlias();
      expect((await alias({ action: "reserve", alias: name }, { key: a.keys.pk_test })).status).toBe(200);
      expect((await alias({ alias: name }, { key: b.keys.pk_live })).body.available).toBe(true);
      expect((await alias({ action: "reserve", alias: name }, { key: b.keys.pk_live })).status).toBe(200);
      expect((await alias({ alias: name }, { key: b.keys.pk_test })).body.available).toBe(false);
    });

    it("stores only the SHA-256 of the claim token", async () => {
      const m = await merchantFactory();
      const name = freshAlias();
      const { claim_token } = (await alias({ action: "reserve", alias: name }, { key: m.keys.pk_test })).body;
      const rows =
        await testDb()`select to_jsonb(a)::text as row, claim_token_hash from private.aliases a where environment = 'test' and alias = ${name}`;
      expect(rows).toHaveLength(1);
      expect(rows[0].claim_token_hash).toBe(await sha256Hex(claim_token));
      expect(rows[0].row).not.toContain(claim_token);
    });
  });

  describe("rate limits", () => {
    /**
     * Sends `count` requests, at most 20 in flight (each keyed request opens a database connection
     * for key lookup; the shared Postgres has a connection ceiling), and returns their statuses.
     */
    async function burst(count: number, send: () => Promise<{ status: number }>) {
      const statuses: number[] = [];
      for (let sent = 0; sent < count; sent += 20) {
        const wave = await Promise.all(Array.from({ length: Math.min(20, count - sent) }, send));
        statuses.push(...wave.map((r) => r.status));
      }
      return statuses;
    }

    it("check: 120 per minute per merchant and environment, over all of its keys", async () => {
      const m = await merchantFactory();
      const statuses = await burst(120, () => alias({ alias: "x" }, { key: m.keys.pk_test }));
      expect(statuses.every((s) => s === 200)).toBe(true);
      const over = await alias({ alias: "x" }, { key: m.keys.pk_test });
      expect(errorOf(over)).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(over.headers.get("cache-control")).toBe("no-store");
      expect(errorOf(await alias({ alias: "x" }, { key: m.keys.sk_test }))).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect((await alias({ alias: "x" }, { key: m.keys.sk_live })).status).toBe(200);
    });

    it("check: 30 per minute per IP for anonymous callers", async () => {
      const ip = freshIp();
      const statuses = await burst(30, () => alias({ alias: "x" }, { ip }));
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(errorOf(await alias({ alias: "x" }, { ip }))).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect((await alias({ alias: "x" }, { ip: freshIp() })).status).toBe(200);
    });

    it("reserve: 10 per minute per merchant and environment", async () => {
      const m = await merchantFactory();
      const statuses = await burst(10, () => alias({ action: "reserve", alias: freshAlias() }, { key: m.keys.pk_test }));
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(errorOf(await alias({ action: "reserve", alias: freshAlias() }, { key: m.keys.pk_test }))).toEqual({
        status: 429,
        code: "RATE_LIMITED",
      });
      expect((await alias({ alias: "x" }, { key: m.keys.pk_test })).status).toBe(200);
    });

    it("release: 10 per minute per merchant and environment", async () => {
      const m = await merchantFactory();
      const release = () => alias({ action: "release", alias: freshAlias(), claim_token: `ct_${"b".repeat(43)}` }, { key: m.keys.sk_test });
      const statuses = await burst(10, release);
      expect(statuses.every((s) => s === 409)).toBe(true);
      expect(errorOf(await release())).toEqual({ status: 429, code: "RATE_LIMITED" });
    });
  });
});

describe("alias-availability claim: a reserved alias attached to the person (spec 2.6: a public handle attached to the identity)", () => {
  async function reservedFor() {
    const merchant = await merchantFactory();
    const person = await enrollStranger(merchant.keys.pk_test);
    const name = freshAlias("me");
    const now = new Date();
    const reserved = await alias({ action: "reserve", alias: `@${name}`, ttl_seconds: 60 }, { key: merchant.keys.pk_test, now });
    expect(reserved.body).toMatchObject({ alias: name, reserved: true });
    return { merchant, person, name, now, claimToken: reserved.body.claim_token as string };
  }

  it("redeems the claim token with the merchant's secret key: the alias is the person's for good, the token spent", async () => {
    const { merchant, person, name, now, claimToken } = await reservedFor();
    const body = { action: "claim", alias: ` @${name.toUpperCase()}`, claim_token: claimToken, subject_ref: person.subject_ref };
    const claimed = await alias(body, { key: merchant.keys.sk_test, now });
    expect(claimed.status, claimed.text).toBe(200);
    expect(claimed.body).toEqual({ alias: name, claimed: true, claimed_at: now.toISOString() });
    expect(claimed.headers.get("cache-control")).toBe("no-store");
    // held past the reservation's TTL, by nobody's reservation: no one can reserve it, nor release it
    const later = new Date(now.getTime() + 3_600_000);
    expect((await alias({ alias: name }, { key: merchant.keys.pk_test, now: later })).body).toMatchObject({ available: false });
    expect(errorOf(await alias({ action: "reserve", alias: name }, { key: merchant.keys.pk_test, now: later }))).toEqual({
      status: 409,
      code: "ALIAS_TAKEN",
    });
    expect(errorOf(await alias({ action: "release", alias: name, claim_token: claimToken }, { key: merchant.keys.pk_test }))).toEqual({
      status: 409,
      code: "CLAIM_TOKEN_INVALID",
    });
    // the token is redeemed: a second claim with it is refused
    expect(errorOf(await alias(body, { key: merchant.keys.sk_test, now }))).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
    const [row] = await testDb()`
      select a.state, a.claim_token_hash, a.expires_at, a.identity_id = s.identity_id as attached
      from private.aliases a join private.subject_refs s on s.subject_ref = ${person.subject_ref}
      where a.environment = 'test' and a.alias = ${name}`;
    expect(row).toEqual({ state: "claimed", claim_token_hash: null, expires_at: null, attached: true });
  });

  it("refuses a publishable key, another merchant, an expired hold, a wrong token and a person the merchant does not know", async () => {
    const { merchant, person, name, now, claimToken } = await reservedFor();
    const body = { action: "claim", alias: name, claim_token: claimToken, subject_ref: person.subject_ref };
    expect(errorOf(await alias(body, { key: merchant.keys.pk_test, now }))).toEqual({ status: 401, code: "AUTH_REQUIRED" });
    expect(errorOf(await alias(body))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
    const other = await merchantFactory();
    expect(errorOf(await alias(body, { key: other.keys.sk_test, now }))).toMatchObject({ status: 404, code: "not_found" });
    const stranger = await enrollStranger(other.keys.pk_test);
    expect(errorOf(await alias({ ...body, subject_ref: stranger.subject_ref }, { key: merchant.keys.sk_test, now }))).toEqual({
      status: 404,
      code: "not_found",
    });
    expect(errorOf(await alias({ ...body, claim_token: `ct_${"A".repeat(43)}` }, { key: merchant.keys.sk_test, now }))).toEqual({
      status: 409,
      code: "CLAIM_TOKEN_INVALID",
    });
    expect(errorOf(await alias({ ...body, subject_ref: undefined }, { key: merchant.keys.sk_test, now }))).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
    });
    const expired = new Date(now.getTime() + 61_000);
    expect(errorOf(await alias(body, { key: merchant.keys.sk_test, now: expired }))).toEqual({ status: 409, code: "CLAIM_TOKEN_INVALID" });
    // a bad format is the 200 of every action, with nothing claimed
    const bad = await alias({ ...body, alias: "ad.min" }, { key: merchant.keys.sk_test, now });
    expect(bad.body).toEqual({ alias: "admin", format_ok: false, format_code: "ALIAS_RESERVED", claimed: false });
  });
});
