import { describe, expect, inject, it } from "vitest";
import { call, errorOf } from "../harness/http";

/** What a browser sends before a cross-origin POST with a key. */
const preflight = {
  origin: "https://shop.example",
  "access-control-request-method": "POST",
  "access-control-request-headers": "x-service-api-key",
};

describe("router and app factory", () => {
  it("answers an unknown function name with 404 FUNCTION_NOT_FOUND", async () => {
    for (const name of ["no-such-function", "disclose-claims-x", "MANDATE-SCOPES", "mandate-scopes-extra", "mandate-get2"]) {
      expect(errorOf(await call(name))).toEqual({ status: 404, code: "FUNCTION_NOT_FOUND" });
    }
    const outside = await fetch(`${inject("baseUrl")}/v2/whatever`);
    expect(outside.status).toBe(404);
    expect((await outside.json()).code).toBe("FUNCTION_NOT_FOUND");
  });

  it("answers every request to a cron worker, a CORS preflight included, as it answers an unknown name", async () => {
    const unknown = await call("no-such-function", { method: "OPTIONS", headers: preflight });
    for (const name of ["session-expiry-and-webhooks", "receipt-anchor"]) {
      for (const method of ["OPTIONS", "GET", "POST", "DELETE"]) {
        const res = await call(name, { method, headers: preflight, ...(method === "POST" ? { body: {} } : {}) });
        expect({ method, ...errorOf(res) }).toEqual({ method, status: 404, code: "FUNCTION_NOT_FOUND" });
        expect(res.headers.get("access-control-allow-origin")).toBe(unknown.headers.get("access-control-allow-origin"));
      }
    }
  });

  it("answers an unknown sub-path of a function with 404 ROUTE_NOT_FOUND", async () => {
    expect(errorOf(await call("mandate-scopes/extra"))).toEqual({ status: 404, code: "ROUTE_NOT_FOUND" });
  });

  it("gives every response a request id and echoes a well-formed incoming one", async () => {
    const fresh = await call("mandate-scopes");
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await call("mandate-scopes", { headers: { "x-request-id": "req-12345678" } });
    expect(echoed.headers.get("x-request-id")).toBe("req-12345678");
    const refused = await call("mandate-scopes", { headers: { "x-request-id": "bad id with spaces" } });
    expect(refused.headers.get("x-request-id")).not.toBe("bad id with spaces");
  });
});
