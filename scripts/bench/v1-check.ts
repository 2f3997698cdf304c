/**
 * The resource API's check benchmark: `npm run bench:v1 [-- --seconds 8 --clients 8]`.
 *
 * On a scratch database (`hauth_bench_v1` on BENCH_ADMIN_URL's server, created and dropped here) and
 * the service as it runs locally (startServer: workerd, the default pooler, the shared rate-limit
 * counters), in one run, each for `--seconds` with `--clients` concurrent callers on one hot mandate
 * (a production key, so the spec's 1,000/s bucket applies, and a count ceiling no run exhausts):
 * - `POST /v1/mandates/{id}/check` over HTTP, without an Idempotency-Key (the service keys the
 *   consumption itself) and with a fresh key per request (the response store's two calls added);
 * - the RPC that decides it, `mandate_consume_request` with the authenticated tenant, called
 *   directly on persistent connections (the raw ceiling of the database side);
 * - per call, one at a time: the rate limiter as the workers reach it (the local shared counters
 *   over HTTP; a /v1 keyed request takes two buckets), the in-process limiter, the key's
 *   authentication (`bearer_key_authenticate`) and the response store (`idempotency_begin` and
 *   `idempotency_finish`).
 * Prints a Markdown table for docs/benchmarks.md with the machine's load before and after.
 */
import { randomUUID } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import { InProcessRateLimiter, LocalSharedRateLimiter, type RateLimitRule } from "../../shared/edge/rate-limit";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { createKey } from "../../shared/merchants/accounts";
import { issueMandate, seedGrantor } from "../../tests/fixtures/mandate-seed";
import { flag, loadNow, median, quantile, runConditions, scratchServer } from "./common";

const SECONDS = flag("seconds", 8);
const CLIENTS = flag("clients", 8);
const SAMPLES = flag("samples", 500);
const DATABASE = "hauth_bench_v1";

interface Run {
  requests: number;
  throughput: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
}

/** Runs `call` from `clients` loops for `seconds`; answers throughput and latency. */
async function sustained(clients: number, seconds: number, call: () => Promise<string>): Promise<Run> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        const status = await call();
        latencies.push(performance.now() - t);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    requests: latencies.length,
    throughput: latencies.length / elapsed,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    statuses,
  };
}

/** The median cost of `call` in milliseconds, one at a time. */
async function perCall(samples: number, call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  return median(times);
}

function post(agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", agent, headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.statusCode)));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function main() {
  const started = performance.now();
  const loadAtStart = loadNow();
  const env: Record<string, string | undefined> = { ...process.env, TEST_CLOCK: "0", CRON_TIMER: "0" };
  delete env.UPSTASH_REDIS_REST_URL;
  const scratch = await scratchServer(DATABASE, ["resource-api"], { env });
  const { server } = scratch;
  let sql: Sql | undefined;
  try {
    sql = connect(scratch.databaseUrl, { pooled: true });
    const grantor = await seedGrantor(sql, { at: new Date(), environment: "live" });
    const key = await createKey(sql, grantor.merchantId, "secret", "live");
    const [{ key_hash: keyHash }] = await sql.unsafe(`select key_hash from private.api_keys where id = $1`, [key.key_id]);
    const { id: mandateId } = await issueMandate(sql, grantor, {
      scopes: ["login"],
      ceiling: { kind: "count", count: 2_000_000_000, period: "lifetime" },
    });
    const checkUrl = new URL(`${server.url}/v1/mandates/mdt_${mandateId.replace(/-/g, "")}/check`);
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    const auth = { authorization: `Bearer ${key.key}` };
    const body = JSON.stringify({ operation: "login" });
    const keyless = () => post(agent, checkUrl, auth, body);
    const keyed = () => post(agent, checkUrl, { ...auth, "idempotency-key": `bench-${randomUUID()}` }, body);
    const tenant = { merchant_id: grantor.merchantId, environment: "live" };
    const raw = async () => {
      await rawRpc(sql!, "mandate_consume_request", {
        tenant,
        now: new Date().toISOString(),
        decision: { mandate_id: mandateId, scope: "login", idempotency_key: `raw-${randomUUID()}`, request_hash: "bench" },
      });
      return "rpc";
    };

    for (const warm of [keyless, keyed, raw]) await sustained(CLIENTS, 1, warm);
    const runs: [string, Run][] = [];
    for (const [name, call] of [
      ["HTTP check, no Idempotency-Key", keyless],
      ["HTTP check, a fresh Idempotency-Key each", keyed],
      ["raw RPC `mandate_consume_request`", raw],
    ] as const) {
      runs.push([name, await sustained(CLIENTS, SECONDS, call)]);
      process.stderr.write(`${name}: ${runs.at(-1)![1].throughput.toFixed(0)}/s\n`);
    }

    const rule: RateLimitRule = { name: "bench-v1", limit: 1_000_000, windowSeconds: 1, burst: 1_000_000 };
    const shared = new LocalSharedRateLimiter(server.bindings.LOCAL_RATE_LIMIT_URL);
    const inProcess = new InProcessRateLimiter();
    const record = { merchant_id: grantor.merchantId, environment: "live" as const, function_name: "bench", key: "" };
    const costs: [string, number][] = [
      ["rate limiter, local shared counters (one bucket; a /v1 request takes two)", await perCall(SAMPLES, () => shared.limit(rule, "k"))],
      ["rate limiter, in process (one bucket)", await perCall(SAMPLES, () => inProcess.limit(rule, "k"))],
      [
        "key authentication `bearer_key_authenticate`",
        await perCall(SAMPLES, () =>
          rawRpc(sql!, "bearer_key_authenticate", {
            credential: { key_hash: keyHash, kind: "secret", environment: "live" },
            now: new Date().toISOString(),
          }),
        ),
      ],
      [
        "response store `idempotency_begin` + `idempotency_finish`",
        await perCall(SAMPLES, async () => {
          const keyed = { ...record, key: `cost-${randomUUID()}` };
          await rawRpc(sql!, "idempotency_begin", {
            ...keyed,
            request_hash: "bench",
            now: new Date().toISOString(),
            lease_seconds: 60,
            retention_seconds: 86_400,
          });
          await rawRpc(sql!, "idempotency_finish", { ...keyed, status: 200, body: { allowed: true } });
        }),
      ],
    ];

    const fmt = (n: number) => n.toFixed(n < 10 ? 2 : 0);
    const lines = [
      `${CLIENTS} clients, ${SECONDS} s a run, one hot mandate, a production key. Run: ${runConditions(started, loadAtStart)}.`,
      "",
      "| path | requests | req/s | p50 ms | p99 ms | answers |",
      "| --- | ---: | ---: | ---: | ---: | --- |",
      ...runs.map(
        ([name, r]) =>
          `| ${name} | ${r.requests} | ${fmt(r.throughput)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${Object.entries(r.statuses)
            .map(([s, n]) => `${s}: ${n}`)
            .join(", ")} |`,
      ),
      "",
      "| per call, one at a time (median) | µs |",
      "| --- | ---: |",
      ...costs.map(([name, ms]) => `| ${name} | ${(ms * 1000).toFixed(1)} |`),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    agent.destroy();
  } finally {
    await sql?.end({ timeout: 1 });
    await scratch.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
