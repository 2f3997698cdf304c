/**
 * Configuration as every function reads it (shared/kernel/config.ts), on running instances of the
 * service with changed bindings: the configured legacy key header reaches CORS, and a service-role
 * key that is not `svc_…` is a configuration error, not a key that silently never matches.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../scripts/local/server";
import { readConfig } from "../../shared/kernel/config";
import { call } from "../harness/http";
import { serviceUnderTest } from "../harness/service";
import { startVariantServer } from "../harness/variant-server";

/** A CORS preflight from a merchant's page asking to send `header`. */
function preflight(baseUrl: string, header: string) {
  return fetch(`${baseUrl}/functions/v1/mandate-scopes`, {
    method: "OPTIONS",
    headers: { origin: "https://shop.example", "access-control-request-method": "POST", "access-control-request-headers": header },
  });
}

const allowedHeaders = (response: Response) => (response.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(",");

describe("configuration", () => {
  let renamedLegacy: RunningServer;
  let badServiceRole: RunningServer;
  beforeAll(async () => {
    [renamedLegacy, badServiceRole] = await Promise.all([
      startVariantServer(["mandate-scopes"], { LEGACY_API_KEY_HEADER: "X-Merchant-Token" }),
      startVariantServer(["mandate-scopes"], { SERVICE_ROLE_KEY: "k".repeat(64) }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([renamedLegacy?.stop(), badServiceRole?.stop()]);
  });

  it("lets browsers send the legacy key header under its configured name (CORS)", async () => {
    const renamed = await preflight(renamedLegacy.url, "x-merchant-token");
    expect(renamed.status).toBeLessThan(300);
    expect(allowedHeaders(renamed)).toContain("x-merchant-token");
    expect(allowedHeaders(renamed)).not.toContain("x-api-key");
    expect(allowedHeaders(await preflight(renamedLegacy.url, "x-service-api-key"))).toContain("x-service-api-key");
  });

  it("keeps the default legacy header x-api-key in CORS when none is configured", async () => {
    expect(allowedHeaders(await preflight(serviceUnderTest().baseUrl, "x-api-key"))).toContain("x-api-key");
  });

  it("refuses a SERVICE_ROLE_KEY without the svc_ prefix as a configuration error", async () => {
    const res = await fetch(`${badServiceRole.url}/functions/v1/mandate-scopes`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: expect.any(String), code: "INTERNAL_ERROR" });
    // the service under test runs with its generated svc_ key
    expect((await call("mandate-scopes")).status).toBe(200);
  });

  it("names the problem when the configuration is read", () => {
    const base = { DATABASE_URL: "postgres://127.0.0.1/x" };
    expect(() => readConfig({ ...base, SERVICE_ROLE_KEY: "k".repeat(64) })).toThrow(/SERVICE_ROLE_KEY must be svc_/);
    expect(() => readConfig({ ...base, SERVICE_ROLE_KEY: "svc_short" })).toThrow(/SERVICE_ROLE_KEY/);
    expect(() => readConfig({ ...base, SERVICE_ROLE_KEY: `svc_${"a".repeat(27)} ` })).toThrow(/SERVICE_ROLE_KEY/);
    expect(readConfig({ ...base, SERVICE_ROLE_KEY: `svc_${"a".repeat(28)}` }).SERVICE_ROLE_KEY).toBe(`svc_${"a".repeat(28)}`);
  });
});
