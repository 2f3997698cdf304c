import { describe, expect, inject, it } from "vitest";
import { merchantFactory } from "../harness/factories";
import { newStranger } from "../harness/identity";
import { claim, liveClaim } from "../harness/resource-api";
import { type Ran, cli as runCli } from "../harness/spawn";

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: inject("databaseUrl") });

function json(ran: Ran): any {
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

function expectUsageError(ran: Ran, message: RegExp) {
  expect(ran.code).toBe(2);
  expect(ran.stdout).toBe("");
  expect(ran.stderr).toMatch(message);
}

describe("cli usage and allowance", () => {
  it("usage --merchant prints the month's billed claims and the allowance per environment, from the billing ledger", async () => {
    const merchant = await merchantFactory();
    for (const person of [newStranger(), newStranger()]) expect((await claim(merchant.keys.sk_test, person.capture())).status).toBe(201);
    expect((await liveClaim(merchant.keys.sk_live, newStranger())).status).toBe(201);

    const out = json(await cli("usage", "--merchant", merchant.merchant_id, "--json"));
    const month = new Date().toISOString().slice(0, 7);
    expect(out).toEqual({
      merchant_id: merchant.merchant_id,
      month,
      period_start: `${month}-01T00:00:00.000Z`,
      period_end: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00\.000Z$/),
      environments: {
        live: { claims_billed: 1, persons_billed: 1, allowance: 1000, allowance_remaining: 999 },
        test: { claims_billed: 2, persons_billed: 2, allowance: 100, allowance_remaining: 98 },
      },
    });
    const before = json(await cli("usage", "--merchant", merchant.merchant_id, "--month", "2020-01", "--json"));
    expect(before.environments.test).toMatchObject({ claims_billed: 0, persons_billed: 2 });
  });

  it("allowance set changes what usage reports and what the next claim may bill", async () => {
    const merchant = await merchantFactory();
    const set = json(await cli("allowance", "set", "--merchant", merchant.merchant_id, "--env", "test", "--claims", "0", "--json"));
    expect(set).toEqual({ merchant_id: merchant.merchant_id, environment: "test", monthly_claims: 0 });
    const out = json(await cli("usage", "--merchant", merchant.merchant_id, "--json"));
    expect(out.environments.test).toMatchObject({ allowance: 0, allowance_remaining: 0 });
    expect(out.environments.live).toMatchObject({ allowance: 1000 });
    const refused = await claim(merchant.keys.sk_test, newStranger().capture());
    expect(refused.status).toBe(402);
  });

  it("refuses bad arguments with a usage error and an unknown merchant with a message", async () => {
    expectUsageError(await cli("usage", "--json"), /--merchant <value> is required/);
    expectUsageError(await cli("usage", "--merchant", "nope", "--json"), /--merchant must be a merchant id/);
    const merchant = await merchantFactory();
    expectUsageError(await cli("usage", "--merchant", merchant.merchant_id, "--month", "2026-13", "--json"), /--month must be YYYY-MM/);
    expectUsageError(
      await cli("allowance", "set", "--merchant", merchant.merchant_id, "--env", "prod", "--claims", "5"),
      /--env must be one of/,
    );
    expectUsageError(
      await cli("allowance", "set", "--merchant", merchant.merchant_id, "--env", "live", "--claims", "-1"),
      /--claims must be/,
    );
    const unknown = await cli("usage", "--merchant", crypto.randomUUID(), "--json");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/error: unknown merchant/);
  });
});
