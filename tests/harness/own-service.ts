import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { type CronTrace, type RunningServer, startServer } from "../../scripts/local/server";
import { connect, type Sql } from "../../shared/kernel/db/client";
import type { Environment } from "../../shared/kernel/principal";
import { randomHex } from "../../shared/lib/crypto";
import type { CreatedMerchant } from "../../shared/merchants/accounts";
import { createEndpoint } from "../../shared/webhooks/endpoints";
import { merchantFactory, testDb } from "./factories";
import { serviceUnderTest, useService } from "./service";
import { type Receiver, type Responder, startReceiver } from "./webhook-receiver";

export interface OwnService {
  server: RunningServer;
  /** A pooled client on the file's own database (testDb() returns it while the service runs). */
  sql: Sql;
  /**
   * Runs one cron tick of `worker` at `scheduledTime` through Miniflare's scheduled-event API, waits
   * for the tick's trace, and returns the summary the worker logged, or null when it logged none
   * (a pass with nothing to do). Throws when the tick did not end "ok".
   */
  tick(worker: string, scheduledTime: Date): Promise<Record<string, unknown> | null>;
  /** Deletes every outbox event and webhook delivery of the file's own database: nothing is due. */
  emptyOutbox(): Promise<void>;
  /** Stops the service, drops its database, and points the harness back at the run's service. */
  stop(): Promise<void>;
}

const TRACE_WAIT_MS = 10_000;

/**
 * Starts this test file's own instance of the service on its own fresh database, with the run's
 * bindings (secrets, limiter, test settings), and points the harness at it (./service.ts): `call`,
 * `testDb` and `merchantFactory` reach it until `stop()`.
 *
 * For files that run the cron workers: a tick is a global pass over everything due in its
 * database, so it must never see another file's rows. The database is a new Postgres database
 * beside DATABASE_URL's (dropped on stop), or, without DATABASE_URL, a fresh in-memory embedded
 * PGlite; the migrations are applied to it as on any start. `overrides` changes bindings for this
 * instance (a deployment setting under test, e.g. WEBHOOK_ALLOW_LOOPBACK_HTTP=0).
 *
 * @example
 * let own: OwnService;
 * beforeAll(async () => { own = await startOwnService("outbox", ["session-expiry-and-webhooks"]); });
 * afterAll(() => own?.stop());
 */
export async function startOwnService(tag: string, functions?: string[], overrides: Record<string, string> = {}): Promise<OwnService> {
  const database = await freshDatabase(tag);
  const traces = new Map<string, CronTrace[]>();
  const waiters = new Set<() => void>();
  let server: RunningServer;
  try {
    server = await startServer({
      port: await freePort(),
      functions,
      // the run's bindings (its DATABASE_URL aside) and the runtime's knobs (DB_POOLER …) from the environment
      env: { ...process.env, ...serviceUnderTest().bindings, CRON_TIMER: "0", ...overrides, ...database.env },
      cronTail(worker, received) {
        traces.set(worker, [...(traces.get(worker) ?? []), ...received]);
        for (const wake of waiters) wake();
      },
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const sql = connect(server.databaseUrl, { pooled: true });
  useService({ baseUrl: server.url, databaseUrl: server.databaseUrl, bindings: { ...server.bindings }, sql });

  /** Takes the first trace of `worker`'s tick at `at` that nobody took yet, waiting for it to arrive. */
  async function traceOf(worker: string, at: number): Promise<CronTrace> {
    const deadline = Date.now() + TRACE_WAIT_MS;
    for (;;) {
      const list = traces.get(worker) ?? [];
      const index = list.findIndex((trace) => trace.event?.scheduledTime === at);
      if (index >= 0) return list.splice(index, 1)[0];
      if (Date.now() > deadline) throw new Error(`no trace of ${worker}'s tick at ${new Date(at).toISOString()}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 100);
        waiters.add(wake);
      });
    }
  }

  return {
    server,
    sql,
    async tick(worker, scheduledTime) {
      await server.triggerCron(worker, scheduledTime);
      const trace = await traceOf(worker, scheduledTime.getTime());
      if (trace.outcome !== "ok") {
        const errors = [...trace.exceptions.map((e) => `${e.name}: ${e.message}`), ...trace.logs.map((l) => l.message.join(" "))];
        throw new Error(`${worker}'s tick at ${scheduledTime.toISOString()} ended ${trace.outcome}: ${errors.join("; ")}`);
      }
      for (const log of trace.logs) {
        const [line] = log.message;
        if (log.level !== "log" || typeof line !== "string" || !line.startsWith("{")) continue;
        const { function: name, ...summary } = JSON.parse(line) as Record<string, unknown>;
        if (name === worker) return summary;
      }
      return null;
    },
    async emptyOutbox() {
      await sql`delete from private.webhook_deliveries`;
      await sql`delete from private.outbox_events`;
    },
    async stop() {
      useService(undefined);
      await sql.end({ timeout: 1 });
      await server.stop();
      await database.drop();
    },
  };
}

export interface OwnServiceFixture {
  /** The file's running instance (inside its tests and hooks). */
  readonly own: OwnService;
  /** A loopback webhook receiver, closed after the test. */
  receiver(respond?: Responder): Promise<Receiver>;
  /** Registers an endpoint of `merchantId` at `url` in the own database (loopback http allowed). */
  endpointFor(
    merchantId: string,
    url: string,
    options?: { environment?: Environment; eventTypes?: string[]; now?: Date },
  ): ReturnType<typeof createEndpoint>;
  /** A new merchant with one test-environment endpoint on a fresh receiver. */
  subscribed(
    respond?: Responder,
    options?: { eventTypes?: string[] },
  ): Promise<{ merchant: CreatedMerchant; receiver: Receiver; endpoint: Awaited<ReturnType<typeof createEndpoint>> }>;
}

/**
 * A test file's own service for the file's whole run, as vitest hooks: started before its tests
 * (startOwnService), the outbox emptied before each test so a tick's counts are exact, the
 * receivers it started closed after each test, stopped after all. `endpointsAt` is when endpoints
 * count as registered (default: now).
 *
 * @example
 * const service = useOwnService("mandate_events", ["mandate-issue", "session-expiry-and-webhooks"]);
 * it("delivers", async () => {
 *   const { merchant, receiver } = await service.subscribed();
 *   await service.own.tick("session-expiry-and-webhooks", new Date());
 * });
 */
export function useOwnService(
  tag: string,
  functions?: string[],
  options: { overrides?: Record<string, string>; endpointsAt?: Date } = {},
): OwnServiceFixture {
  let running: OwnService | undefined;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    running = await startOwnService(tag, functions, options.overrides);
  });
  afterAll(async () => {
    await running?.stop();
  });
  beforeEach(async () => {
    await fixture.own.emptyOutbox();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  const fixture: OwnServiceFixture = {
    get own() {
      if (!running) throw new Error(`${tag}: the own service is not running (outside the file's tests?)`);
      return running;
    },
    async receiver(respond) {
      const receiver = await startReceiver(respond);
      receivers.push(receiver);
      return receiver;
    },
    endpointFor(merchantId, url, endpoint = {}) {
      return createEndpoint(testDb(), fixture.own.server.bindings.WEBHOOK_SECRET_KEY, {
        merchantId,
        environment: endpoint.environment ?? "test",
        url,
        eventTypes: endpoint.eventTypes,
        allowLoopbackHttp: true,
        now: endpoint.now ?? options.endpointsAt ?? new Date(),
      });
    },
    async subscribed(respond, subscription = {}) {
      const merchant = await merchantFactory();
      const receiver = await fixture.receiver(respond);
      const endpoint = await fixture.endpointFor(merchant.merchant_id, receiver.url, subscription);
      return { merchant, receiver, endpoint };
    },
  };
  return fixture;
}

/** A new, empty database for one test file, as the environment for startServer. */
async function freshDatabase(tag: string): Promise<{ env: Record<string, string | undefined>; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const env = { DATABASE_URL: undefined, PGLITE_DATA_DIR: "memory://", PGPORT_EMBEDDED: String(await freePort()) };
    return { env, drop: async () => {} };
  }
  const url = new URL(base);
  const name = `${url.pathname.slice(1) || "postgres"}_${tag}_${randomHex(4)}`.replace(/[^a-z0-9_]/gi, "_").toLowerCase();
  const admin = () => connect(base);
  const create = admin();
  try {
    await create`create database ${create(name)}`;
  } finally {
    await create.end();
  }
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    async drop() {
      const sql = admin();
      try {
        await sql`drop database if exists ${sql(name)} with (force)`;
      } finally {
        await sql.end();
      }
    },
  };
}
