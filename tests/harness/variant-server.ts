import { freePort } from "../../scripts/local/ports";
import { type RunningServer, startServer } from "../../scripts/local/server";
import { serviceUnderTest } from "./service";

/**
 * A second instance of the service under test (./service.ts) on its database, with some bindings
 * changed (an unreachable template store, a broken signing key …), running only the given
 * functions: for testing real failures, never flags. An override of `undefined` removes a binding.
 */
export async function startVariantServer(functions: string[], overrides: Record<string, string | undefined>): Promise<RunningServer> {
  return startServer({ port: await freePort(), functions, env: { ...serviceUnderTest().bindings, ...overrides } });
}

/** Calls a function on a variant server. */
export async function callOn(server: RunningServer, name: string, init: { key: string; body: unknown; headers?: Record<string, string> }) {
  const response = await fetch(`${server.url}/functions/v1/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-api-key": init.key, ...init.headers },
    body: JSON.stringify(init.body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}
