/**
 * Outbox worker throughput: how long one cron pass takes to drain N due events (docs/benchmarks.md).
 *
 *   npm run bench:webhooks                      # 1000 events per scenario, embedded database
 *   npm run bench:webhooks -- --events 3000     # more
 *   DATABASE_URL=postgres://… npm run bench:webhooks   # against a real Postgres (use a scratch database:
 *                                                     # the pass is unscoped, as in production)
 *
 * For each scenario: a fresh merchant with E endpoints on a loopback node:http receiver that
 * answers 200 after a fixed latency, N events written through private.outbox_emit, then ONE cron
 * tick of the outbox worker (workerd, as deployed, through Miniflare) at the current time. It checks
 * that the single pass delivered every event to every endpoint, once, and reports the pass's wall
 * time and deliveries per second.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "../../shared/kernel/db/client";
import { createMerchant } from "../../shared/merchants/accounts";
import { createEndpoint } from "../../shared/webhooks/endpoints";
import { freePort } from "../local/ports";
import { startServer } from "../local/server";
import { flag } from "./common";

interface Scenario {
  endpoints: number;
  latencyMs: number;
}

const events = flag("events", 1000);
if (!Number.isInteger(events) || events < 1) throw new Error("--events must be a positive integer");
const scenarios: Scenario[] = [
  { endpoints: 1, latencyMs: 0 },
  { endpoints: 4, latencyMs: 0 },
  { endpoints: 4, latencyMs: 50 },
];

let latencyMs = 0;
const seen = new Map<string, number>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const { id } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string };
    const key = `${req.url} ${id}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    setTimeout(() => res.end("ok"), latencyMs);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const env: Record<string, string | undefined> = { ...process.env, CRON_TIMER: "0", WEBHOOK_ALLOW_LOOPBACK_HTTP: "1" };
if (!env.DATABASE_URL) {
  env.PGLITE_DATA_DIR = "memory://";
  env.PGPORT_EMBEDDED = String(await freePort());
}
const server = await startServer({ port: await freePort(), env, functions: ["session-expiry-and-webhooks"] });
const sql = connect(server.databaseUrl, { pooled: true });
const database = process.env.DATABASE_URL ? "Postgres (DATABASE_URL)" : "embedded PGlite";
const rows: string[] = [];

try {
  for (const scenario of scenarios) {
    latencyMs = scenario.latencyMs;
    seen.clear();
    const merchant = await createMerchant(sql, `bench ${Date.now()}`);
    for (let e = 0; e < scenario.endpoints; e++) {
      await createEndpoint(sql, server.bindings.WEBHOOK_SECRET_KEY, {
        merchantId: merchant.merchant_id,
        environment: "live",
        url: `${receiverUrl}?endpoint=${e}`,
        allowLoopbackHttp: true,
      });
    }
    await sql`
      select private.outbox_emit(${merchant.merchant_id}::uuid, 'live', 'mandate.consumed',
        jsonb_build_object('mandate_id', 'mdt_bench', 'consumption_id', 'cns_' || n, 'amount', 100, 'currency', 'EUR',
          'remaining', jsonb_build_object('amount', 1000000 - 100 * n, 'currency', 'EUR', 'count', null), 'at_limit', false),
        now() - interval '1 second')
      from generate_series(1, ${events}) n`;

    const started = performance.now();
    await server.triggerCron("session-expiry-and-webhooks", new Date());
    const seconds = (performance.now() - started) / 1000;

    const expected = events * scenario.endpoints;
    const [state] = await sql`
      select count(*) filter (where state = 'succeeded')::int as succeeded, count(*)::int as total
      from private.webhook_deliveries where merchant_id = ${merchant.merchant_id}::uuid`;
    const duplicates = [...seen.values()].filter((n) => n > 1).length;
    if (state.succeeded !== expected || seen.size !== expected || duplicates) {
      throw new Error(
        `one pass should have delivered ${expected} (got ${state.succeeded} succeeded of ${state.total}, ${seen.size} received, ${duplicates} duplicated)`,
      );
    }
    rows.push(
      `| ${events} | ${scenario.endpoints} | ${scenario.latencyMs} ms | ${expected} | ${seconds.toFixed(2)} s | ${Math.round(expected / seconds)} |`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
  }
} finally {
  await sql.end();
  await server.stop();
  receiver.close();
}

console.log(`Outbox worker, one cron pass per row (${database}, Node ${process.version}):\n`);
console.log("| due events | endpoints | receiver latency | deliveries | pass wall time | deliveries/s |");
console.log("|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
