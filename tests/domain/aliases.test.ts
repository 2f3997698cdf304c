/**
 * The alias rules at the operations (shared/aliases/availability.ts: checkAlias, reserveAlias,
 * releaseAlias) against the migrated database: who holds an alias, for how long (the request's
 * `now` against the reservation's TTL), and who may free it. The format rules themselves are pure
 * (tests/unit/alias.test.ts); tests/functions/alias-availability.test.ts holds the same over HTTP.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkAlias, releaseAlias, reserveAlias } from "../../shared/aliases/availability";
import type { Tenant } from "../../shared/kernel/principal";
import { sha256Hex } from "../../shared/lib/crypto";
import { depsAt, domainDb, plusSeconds, refusedWith, seedTenant } from "../harness/domain";

const T0 = new Date("2027-05-01T12:00:00.000Z");
const TTL = 300;

/** A valid alias nobody holds: a letter, then 12 hex digits (room for a suggestion's suffix). */
const freshAlias = () => `d${randomBytes(6).toString("hex")}`;

/** Reserves a valid alias for `tenant` and returns the claim token that releases it. */
async function hold(tenant: Tenant, alias: string, ttlSeconds = TTL, at = T0): Promise<string> {
  const reserved = await reserveAlias(depsAt(at), tenant, alias, ttlSeconds);
  if (!("claim_token" in reserved)) throw new Error(`${alias} was not reserved: ${reserved.format_code}`);
  return reserved.claim_token;
}

describe("checkAlias", () => {
  it("echoes the normalised alias; a free one is available with no suggestions", async () => {
    const name = freshAlias();
    expect(await checkAlias(depsAt(T0), "test", `  @${name.toUpperCase()} `)).toEqual({
      alias: name,
      format_ok: true,
      format_code: null,
      available: true,
      suggestions: [],
    });
  });

  it("answers a malformed alias with its format code, unavailable, without asking the database", async () => {
    const broken = { ...depsAt(T0), sql: undefined as never };
    expect(await checkAlias(broken, "test", "ab")).toEqual({
      alias: "ab",
      format_ok: false,
      format_code: "ALIAS_TOO_SHORT",
      available: false,
      suggestions: [],
    });
    expect(await checkAlias(broken, "test", "admin")).toMatchObject({ format_code: "ALIAS_RESERVED", available: false });
  });
});

describe("reserveAlias", () => {
  it("holds the alias for ttl seconds from now, for everyone in the environment (the holder too), with three free suggestions", async () => {
    const [holder, other] = await Promise.all([seedTenant(), seedTenant()]);
    const name = freshAlias();
    const reserved = await reserveAlias(depsAt(T0), holder, name, 900);
    expect(reserved).toEqual({
      alias: name,
      format_ok: true,
      format_code: null,
      reserved: true,
      claim_token: expect.stringMatching(/^ct_[0-9A-Za-z]{43}$/),
      expires_at: plusSeconds(T0, 900).toISOString(),
      ttl_seconds: 900,
    });
    for (const environment of [other.environment, holder.environment]) {
      expect(await checkAlias(depsAt(T0), environment, name)).toMatchObject({
        available: false,
        suggestions: [`${name}1`, `${name}2`, `${name}3`],
      });
    }
    expect(await refusedWith(reserveAlias(depsAt(T0), other, name, TTL))).toBe("ALIAS_TAKEN");
    expect(await refusedWith(reserveAlias(depsAt(T0), holder, name, TTL))).toBe("ALIAS_TAKEN");
  });

  it("suggests only free candidates, in their fixed order", async () => {
    const holder = await seedTenant();
    const name = freshAlias();
    for (const taken of [name, `${name}1`, `${name}3`]) await reserveAlias(depsAt(T0), holder, taken, TTL);
    const { suggestions } = await checkAlias(depsAt(T0), "test", name);
    expect(suggestions).toEqual([`${name}2`, `${name}4`, `${name}5`]);
  });

  it("expires at exactly expires_at with nothing running: then anyone may reserve it, and the old token releases nothing", async () => {
    const [holder, other] = await Promise.all([seedTenant(), seedTenant()]);
    const name = freshAlias();
    const claimToken = await hold(holder, name, 60);
    expect((await checkAlias(depsAt(plusSeconds(T0, 59.999)), "test", name)).available).toBe(false);
    expect(await checkAlias(depsAt(plusSeconds(T0, 60)), "test", name)).toMatchObject({ available: true, suggestions: [] });
    expect(await reserveAlias(depsAt(plusSeconds(T0, 60)), other, name, TTL)).toMatchObject({ reserved: true });
    expect(await refusedWith(releaseAlias(depsAt(plusSeconds(T0, 61)), holder, name, claimToken))).toBe("CLAIM_TOKEN_INVALID");
  });

  it("reserves nothing for a malformed alias", async () => {
    const holder = await seedTenant();
    expect(await reserveAlias(depsAt(T0), holder, "9lives", TTL)).toEqual({
      alias: "9lives",
      format_ok: false,
      format_code: "ALIAS_MUST_START_WITH_LETTER",
      reserved: false,
    });
  });

  it("keeps test and live apart: one alias may be held in each", async () => {
    const tenant = await seedTenant();
    const name = freshAlias();
    await reserveAlias(depsAt(T0), tenant, name, TTL);
    expect((await checkAlias(depsAt(T0), "live", name)).available).toBe(true);
    expect(await reserveAlias(depsAt(T0), { ...tenant, environment: "live" }, name, TTL)).toMatchObject({ reserved: true });
  });

  it("stores only the SHA-256 of the claim token", async () => {
    const holder = await seedTenant();
    const name = freshAlias();
    const claimToken = await hold(holder, name);
    const rows = await domainDb().unsafe(
      `select to_jsonb(a)::text as row, claim_token_hash from private.aliases a where environment = 'test' and alias = $1`,
      [name],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].claim_token_hash).toBe(await sha256Hex(claimToken));
    expect(rows[0].row).not.toContain(claimToken);
  });
});

describe("releaseAlias", () => {
  it("frees the alias at once for its holder's token (the alias normalised); a second release is CLAIM_TOKEN_INVALID", async () => {
    const [holder, other] = await Promise.all([seedTenant(), seedTenant()]);
    const name = freshAlias();
    const claimToken = await hold(holder, name);
    expect(await releaseAlias(depsAt(T0), holder, `@${name.toUpperCase()}`, claimToken)).toEqual({ alias: name, released: true });
    expect((await checkAlias(depsAt(T0), "test", name)).available).toBe(true);
    expect(await refusedWith(releaseAlias(depsAt(T0), holder, name, claimToken))).toBe("CLAIM_TOKEN_INVALID");
    expect(await reserveAlias(depsAt(T0), other, name, TTL)).toMatchObject({ reserved: true });
  });

  it("is CLAIM_TOKEN_INVALID for a wrong token, an alias never reserved, another merchant or the other environment, and the hold stays", async () => {
    const [holder, thief] = await Promise.all([seedTenant(), seedTenant()]);
    const name = freshAlias();
    const claimToken = await hold(holder, name);
    const attempts = [
      () => releaseAlias(depsAt(T0), holder, name, `ct_${"x".repeat(43)}`),
      () => releaseAlias(depsAt(T0), holder, freshAlias(), claimToken),
      () => releaseAlias(depsAt(T0), thief, name, claimToken),
      () => releaseAlias(depsAt(T0), { ...holder, environment: "live" }, name, claimToken),
    ];
    for (const attempt of attempts) expect(await refusedWith(attempt)).toBe("CLAIM_TOKEN_INVALID");
    expect((await checkAlias(depsAt(T0), "test", name)).available).toBe(false);
  });
});
