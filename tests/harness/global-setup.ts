import { readFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { freePort } from "../../scripts/local/ports";
import { type RunningBridge, startRedisRestBridge } from "../../scripts/local/redis-rest-bridge";
import { type RunningServer, startServer } from "../../scripts/local/server";
import { randomHex } from "../../shared/lib/crypto";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    databaseUrl: string;
    /** The service's SIGNING_KEYS_JWK, so tests can sign receipts as the transaction sink will. */
    signingKeysJwk: string;
    limiter: "upstash" | "in-process";
    /** Every binding the workers received, so a test can start a variant server with one of them changed. */
    serverBindings: Record<string, string>;
  }
}

/** The CA of tests/fixtures/tls/localhost.pem (its key was thrown away once that certificate was signed). */
const TEST_CA = new URL("../fixtures/tls/ca.pem", import.meta.url);

let server: RunningServer | undefined;
let bridge: RunningBridge | undefined;

/**
 * Starts the service once for the whole run, exactly as `npm start` does: against DATABASE_URL
 * (CI: the machine's real Postgres) or a fresh in-memory embedded database, and with the
 * Upstash limiter through the Redis REST bridge when REDIS_URL is set (CI), in-process otherwise.
 */
export async function setup(project: TestProject) {
  const env: Record<string, string | undefined> = { ...process.env, TEST_CLOCK: "1" };
  // Webhook receivers in tests are loopback http servers; a short timeout keeps the timeout test
  // fast; no wall-clock cron ticks and no quick passes after requests (tests/functions/webhooks-soon.test.ts
  // turns those on for its own service), so every outbox pass runs at the time its test chooses.
  Object.assign(env, { WEBHOOK_ALLOW_LOOPBACK_HTTP: "1", WEBHOOK_TIMEOUT_MS: "2000", CRON_TIMER: "0", WEBHOOK_QUICK_PASS: "0" });
  // Client metadata documents in tests are served over https on loopback, under the test CA.
  env.OAUTH_CIMD_ALLOW_LOOPBACK = "1";
  if (process.env.REDIS_URL && !process.env.UPSTASH_REDIS_REST_URL) {
    bridge = await startRedisRestBridge({ redisUrl: process.env.REDIS_URL, token: randomHex(16) });
    env.UPSTASH_REDIS_REST_URL = bridge.url;
    env.UPSTASH_REDIS_REST_TOKEN = bridge.token;
  }
  if (!env.DATABASE_URL) {
    env.PGLITE_DATA_DIR = "memory://";
    env.PGPORT_EMBEDDED = String(await freePort());
  }
  server = await startServer({ port: await freePort(), env, trustedCertificates: [readFileSync(TEST_CA, "utf8")] });
  project.provide("baseUrl", server.url);
  project.provide("databaseUrl", server.databaseUrl);
  project.provide("signingKeysJwk", server.bindings.SIGNING_KEYS_JWK);
  project.provide("serverBindings", { ...server.bindings });
  project.provide("limiter", env.UPSTASH_REDIS_REST_URL ? "upstash" : "in-process");
}

export async function teardown() {
  await server?.stop();
  await bridge?.stop();
}
