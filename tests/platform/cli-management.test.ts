/**
 * The merchant commands as clients of the management API (docs/management.md; README, "The CLI"):
 * with the merchant's own key and the service's URL, and no database, `key`, `webhook` and `usage`
 * act on the key's environment over HTTP.
 */
import { describe, expect, it } from "vitest";
import { merchantFactory } from "../harness/factories";
import { serviceUnderTest } from "../harness/service";
import { type Ran, cli as runCli } from "../harness/spawn";

/** The CLI with the service's URL and no database at all. */
const cli = (...args: string[]) => runCli(args, { SERVICE_URL: serviceUnderTest().baseUrl, DATABASE_URL: undefined });

function json(ran: Ran): any {
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

describe("the merchant commands over the management API", () => {
  it("key list, create, roll and revoke; webhook add, list, update, test, deliveries, threshold; usage: with a key, no database", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const keys = json(await cli("key", "list", "--api-key", key, "--json"));
    expect(keys.data).toHaveLength(2);
    const created = json(await cli("key", "create", "--api-key", key, "--scopes", "management.read", "--name", "Dashboard", "--json"));
    expect(created).toMatchObject({ scopes: ["management.read"], name: "Dashboard", secret: expect.stringMatching(/^sk_test_/) });
    const rolled = json(await cli("key", "roll", "--api-key", key, "--key-id", created.id, "--overlap-seconds", "60", "--json"));
    expect(rolled.rolled).toMatchObject({ id: created.id, status: "expiring" });
    expect(json(await cli("key", "revoke", "--api-key", key, "--key-id", rolled.id, "--json")).status).toBe("revoked");

    const endpoint = json(await cli("webhook", "add", "--api-key", key, "--url", "https://example.com/hooks", "--json"));
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(json(await cli("webhook", "list", "--api-key", key, "--json")).data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    const updated = json(
      await cli("webhook", "update", "--api-key", key, "--endpoint", endpoint.id, "--events", "mandate.revoked", "--json"),
    );
    expect(updated.event_types).toEqual(["mandate.revoked"]);
    const test = json(await cli("webhook", "test", "--api-key", key, "--endpoint", endpoint.id, "--json"));
    const log = json(await cli("webhook", "deliveries", "--api-key", key, "--endpoint", endpoint.id, "--json"));
    expect(log.data.map((d: { id: string }) => d.id)).toEqual([test.delivery_id]);
    expect(
      json(await cli("webhook", "rotate", "--api-key", key, "--endpoint", endpoint.id, "--overlap-hours", "1", "--json")).secret,
    ).toMatch(/^whsec_/);
    expect(json(await cli("webhook", "threshold", "--api-key", key, "--percent", "7", "--json")).at_limit_threshold_percent).toBe(7);
    expect(json(await cli("usage", "--api-key", key, "--json"))).toMatchObject({ object: "usage", environment: "test", claims_billed: 0 });

    // the service's refusals are the command's error (exit 1), naming the code
    const unknown = await cli("key", "revoke", "--api-key", key, "--key-id", `key_${"0".repeat(32)}`, "--json");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/404 not_found/);
    const readOnly = await cli("webhook", "add", "--api-key", created.secret, "--url", "https://example.com/x", "--json");
    expect(readOnly.code).toBe(1);
    // a command only the API serves needs a key; a malformed key is a usage error
    expect((await cli("key", "list", "--json")).code).toBe(2);
    expect((await cli("key", "list", "--api-key", "pk_test_nope", "--json")).code).toBe(2);
  });
});
