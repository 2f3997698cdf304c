/**
 * Mandate consumption benchmark: `npm run bench:consume [-- --clients 1,8,32,128 --repeat 3 --work 600
 * --poolers pgbouncer,direct --no-profile --keep]` (`-- --help` lists the options).
 *
 * Drives the one call that moves a ceiling, `public.mandate_consume`, at the same concurrency, on
 * one hot mandate and spread over 1,000 mandates, through each HTTP path asked for and raw:
 * - HTTP: POST /functions/v1/mandate-consume on the service as it runs at the edge (startServer:
 *   workerd, one Postgres connection per request through a local transaction pooler that stands in
 *   for Hyperdrive; key authentication, the replay guard and the consume in one RPC), each request with a fresh
 *   nonce and Idempotency-Key. One server per pooler, all started before the first cell: `pgbouncer`
 *   (a private PgBouncer in transaction mode, the default where it is installed), `direct` (no
 *   pooler, the default where it is not); the pooler gets DB_POOLER_SIZE backends (default 20);
 * - raw: pgbench with a custom script calling `select public.mandate_consume(...)` on persistent
 *   connections, each call with a fresh idempotency key (`:client_id` and a per-client sequence).
 * Every run does the same fixed amount of work on fresh mandates (so both paths start from the same
 * empty ledger), and is followed by the ledger check: no mandate's consumptions pass its ceiling, and
 * the allowed answers times the amount equal the stored sum. Cells are repeated and interleaved
 * (each HTTP path and raw, the order rotated every repeat); the tables show medians, and the issue's
 * goal cells per path (1 client hot p50 ratio, 32 clients hot and spread throughput ratios). With
 * `--profile` (default) the 32-client hot cell is decomposed with pgbench variants and per-process
 * CPU time.
 *
 * Database: a scratch database `hauth_bench_consume` on BENCH_ADMIN_URL's server (default
 * postgres://postgres@127.0.0.1:5432/postgres), created and dropped by this script. An external
 * pooler in front of it (Supavisor, a shared PgBouncer) given as BENCH_HTTP_DATABASE_URL is one more
 * HTTP path, `external` (its workers connect to that URL directly); seeding, checks and pgbench stay
 * on the direct connection.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { type GrantTerms, grantTermsDigest } from "../../shared/mandates/issue";
import { createKey } from "../../shared/merchants/accounts";
import { type Grantor, seedGrantor } from "../../tests/fixtures/mandate-seed";
import { applyMigrations } from "../local/migrations";
import { pgbouncerBinary } from "../local/pgbouncer";
import { freePort } from "../local/ports";
import type { RunningServer } from "../local/server";
import { BENCH_ADMIN_URL, hasFlag, loadNow, median, quantile, runConditions, type ScratchServer, scratchServer, textFlag } from "./common";

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------
if (hasFlag("help")) {
  process.stdout.write(`npm run bench:consume [-- options]

  --clients 1,8,32,128        concurrency of the cells (each on the hot mandate and spread)
  --repeat 3                  runs per cell and path (interleaved; the tables show medians)
  --work 600                  consumes a run (half with one client, at least 8 per client)
  --mandates 1000             mandates of the spread scenario
  --poolers pgbouncer,direct  HTTP paths: pgbouncer, direct (default: pgbouncer where it is
                              installed, else direct)
  --no-profile                skip the profile of the 32-client hot cell
  --no-front                  send the HTTP requests straight to workerd (Miniflare's own address, with
                              the CF-Connecting-IP the local front would set) instead of through the
                              front, the local stand-in for the edge (scripts/local/client-address.ts)
  --own-socket                send them to the mandate-consume worker's own socket: neither the front
                              nor Miniflare's entry worker, which routes every request on workerd's
                              shared address and has no counterpart at the edge
  --keep                      keep the scratch database hauth_bench_consume
  --cpu-profile               only a CPU profile of the mandate-consume worker in workerd at 32
                              clients on one hot mandate (V8's sampling profiler through workerd's
                              inspector), its time by source; needs a WebSocket in Node (Node 22,
                              or NODE_OPTIONS=--experimental-websocket on Node 20)

Environment: BENCH_ADMIN_URL (the server, default postgres://postgres@127.0.0.1:5432/postgres),
BENCH_HTTP_DATABASE_URL (an external pooler: one more HTTP path), DB_POOLER_SIZE (backends per
pooler, default 20), PGBENCH (default /usr/bin/pgbench).
`);
  process.exit(0);
}
const CLIENTS = (textFlag("clients") ?? "1,8,32,128").split(",").map(Number);
const REPEAT = Number(textFlag("repeat") ?? 3);
/** Consumes per run (per cell, per path): a single client does half, 128 clients 8 each. */
const WORK = Number(textFlag("work") ?? 600);
const SPREAD = Number(textFlag("mandates") ?? 1000);
const PROFILE = !hasFlag("no-profile");
/**
 * Where the HTTP requests go: through the local front (a Node proxy of its own, with no counterpart in a
 * Worker's bill or path), to Miniflare's address (`--no-front`), or to the function worker's own socket
 * (`--own-socket`: what a deployed Worker's request runs, as near as workerd gives it). Each but the
 * front carries the CF-Connecting-IP the front would set.
 */
const TARGETS = {
  front: { flag: "", said: "through the local front", base: (server: RunningServer) => server.url },
  "no-front": { flag: " --no-front", said: "to Miniflare's address", base: (server: RunningServer) => server.runtimeUrl },
  "own-socket": {
    flag: " --own-socket",
    said: "to the worker's own socket",
    base: (server: RunningServer) => server.ownSocketUrls["mandate-consume"]!,
  },
} as const;
const TARGET_NAME: keyof typeof TARGETS = hasFlag("own-socket") ? "own-socket" : hasFlag("no-front") ? "no-front" : "front";
const TARGET = TARGETS[TARGET_NAME];
const KEEP = hasFlag("keep");
const CPU_PROFILE = hasFlag("cpu-profile");
const AMOUNT = 7;
const CEILING = 1_000_000_000_000;
/** The scratch database (BENCH_DB_NAME names another: scratchServer). */
const DB_NAME = process.env.BENCH_DB_NAME ?? "hauth_bench_consume";
const PGBENCH = process.env.PGBENCH ?? "/usr/bin/pgbench";
const HTTP_DATABASE_URL = process.env.BENCH_HTTP_DATABASE_URL;
/** The HTTP paths: one server each, its workers through that pooler (or none). */
const POOLERS = (textFlag("poolers") ?? (pgbouncerBinary() ? "pgbouncer" : "direct")).split(",").filter(Boolean);
for (const pooler of POOLERS)
  if (!["pgbouncer", "direct"].includes(pooler)) throw new Error(`--poolers: unknown ${pooler} (pgbouncer, direct)`);
const PATHS = [...POOLERS, ...(HTTP_DATABASE_URL ? ["external"] : [])];

const log = (line: string) => process.stderr.write(`${line}\n`);
const workFor = (clients: number) => (clients === 1 ? Math.ceil(WORK / 2) : Math.max(WORK, 8 * clients));

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------
interface RunResult {
  /** Completed consumes per second over the run. */
  throughput: number;
  p50: number;
  p99: number;
  /** Consumes that answered allowed (HTTP) or ran (pgbench). */
  allowed: number;
  /** Anything but an allowed answer: refusals by reason, HTTP errors by status and code. */
  other: Record<string, number>;
  /** pgbench ran fewer clients than asked (connection slots). */
  clientsRun: number;
}

// ---------------------------------------------------------------------------------------------
// Fixture: one merchant and person (plain SQL), fresh mandates per run
// ---------------------------------------------------------------------------------------------
interface Fixture {
  sql: Sql;
  grantor: Grantor;
  apiKey: string;
}

let runCounter = 0;

/**
 * Issues `count` fresh mandates through mandate_issue in one statement (after their proofs), each proven by its own grant
 * capture of the run's terms (one agent per run: a grant capture proves one mandate of the terms it
 * showed); returns the run number that names them.
 */
async function freshMandates({ sql, grantor }: Fixture, count: number): Promise<{ run: number; ids: string[] }> {
  const run = ++runCounter;
  const terms: GrantTerms = {
    granted_to: `agent_bench_${process.pid}_${run}`,
    granted_to_kind: "agent",
    scopes: ["purchase"],
    constraints: {},
    ceiling: { kind: "amount", amount: CEILING, currency: "USD", count: null, period: "lifetime" },
    expires_at: new Date(grantor.at.getTime() + 365 * 86_400_000).toISOString(),
  };
  const digest = await grantTermsDigest(terms);
  const base = {
    ...terms,
    merchant_id: grantor.merchantId,
    environment: grantor.environment,
    now: grantor.at.toISOString(),
    granted_by_ref: grantor.subjectRef,
    money_scopes: ["purchase", "payment"],
    terms_digest: digest,
    proof_max_age_seconds: 300,
  };
  // The proofs first (a statement's own writes are not for its functions to read), then the issues.
  const proofs = await sql.unsafe(
    `insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, capture_nonce,
       liveness_passed, coercion_signal, assurance_level, engine_version, created_at, purpose, grant_terms_digest)
     select id, $2, $3, $4, 'ACTION_LOGIN', 'svc:' || id, 'nonce-' || id, true, false, 'face_voice_doc', 'bench',
       $5::timestamptz - interval '1 minute', 'grant', $6
     from (select gen_random_uuid() as id from generate_series(1, $1::int)) fresh returning id::text`,
    [count, grantor.merchantId, grantor.environment, grantor.identityId, grantor.at.toISOString(), digest],
  );
  const rows = await sql.unsafe(
    `with ids as (select g, gen_random_uuid() as id, capture_id from unnest($2::uuid[]) with ordinality as p(capture_id, g)),
          issued as (select g, id, public.mandate_issue($3::jsonb || jsonb_build_object('id', id, 'capture_id', capture_id)) as m from ids)
     insert into bench.mandates (run, i, id, merchant_id) select $1, g, id, $4 from issued returning id`,
    // The ids as an array literal: on the pooled (unprepared) connection a JS array reaches `uuid[]` as one text value.
    [run, `{${proofs.map((p) => p.id as string).join(",")}}`, base as never, grantor.merchantId],
  );
  return { run, ids: rows.map((r) => r.id as string) };
}

/**
 * The ledger check after a run: no mandate of the run holds more than its ceiling, and the
 * consumptions stored are exactly the allowed ones (count and sum).
 */
async function checkLedger(sql: Sql, run: number, allowed: number): Promise<void> {
  const [row] = await sql.unsafe(
    `select count(c.id)::int as count, coalesce(sum(c.amount), 0)::bigint as sum,
            (select count(*)::int from bench.mandates b join private.mandates m on m.id = b.id
              where b.run = $1 and (select coalesce(sum(amount), 0) from private.mandate_consumptions where mandate_id = b.id) > m.ceiling_amount) as over
     from bench.mandates b join private.mandate_consumptions c on c.mandate_id = b.id where b.run = $1`,
    [run],
  );
  const problems = [
    row.over !== 0 && `${row.over} mandates past their ceiling`,
    row.count !== allowed && `${row.count} consumptions stored for ${allowed} allowed`,
    Number(row.sum) !== allowed * AMOUNT && `stored sum ${row.sum} != ${allowed} x ${AMOUNT}`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`ledger check failed for run ${run}: ${problems.join("; ")}`);
}

// ---------------------------------------------------------------------------------------------
// HTTP path
// ---------------------------------------------------------------------------------------------
/**
 * One POST on a keep-alive connection of `agent`, with Node's own HTTP client: the load generator
 * should cost little beside the service, as pgbench does beside Postgres (fetch costs about three
 * times the CPU per request).
 */
function post(url: URL, agent: Agent, headers: Record<string, string>, body: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: "POST", agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          let json: unknown = {};
          try {
            json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            // a non-JSON body counts as an unknown failure below
          }
          resolve({ status: response.statusCode ?? 0, json });
        });
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

async function httpRun(server: RunningServer, fixture: Fixture, ids: string[], clients: number, work: number): Promise<RunResult> {
  const url = new URL(`${TARGET.base(server)}/functions/v1/mandate-consume`);
  const address: Record<string, string> = TARGET_NAME === "front" ? {} : { "cf-connecting-ip": "127.0.0.1" };
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const latencies: number[] = [];
  const other: Record<string, number> = {};
  let allowed = 0;
  let issued = 0;
  const client = async (c: number) => {
    for (let seq = 0; issued < work; seq++) {
      issued++;
      const mandateId = ids[Math.floor(Math.random() * ids.length)];
      const started = performance.now();
      const res = await post(
        url,
        agent,
        {
          ...address,
          "content-type": "application/json",
          "x-service-api-key": fixture.apiKey,
          "x-service-timestamp": String(Math.floor(Date.now() / 1000)),
          "x-service-nonce": `bench-${randomUUID()}`,
          "idempotency-key": `bench-${c}-${seq}-${randomUUID()}`,
        },
        JSON.stringify({ mandate_id: mandateId, scope: "purchase", amount: AMOUNT, currency: "USD" }),
      );
      const body = res.json as { allowed?: boolean; reason?: string; code?: string };
      latencies.push(performance.now() - started);
      if (res.status === 200 && body.allowed) allowed++;
      else {
        const what = res.status === 200 ? String(body.reason) : `HTTP ${res.status} ${body.code ?? ""}`.trim();
        other[what] = (other[what] ?? 0) + 1;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  return {
    throughput: latencies.length / elapsed,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    allowed,
    other,
    clientsRun: clients,
  };
}

// ---------------------------------------------------------------------------------------------
// Raw path: pgbench
// ---------------------------------------------------------------------------------------------
const CONSUME_SQL = `select public.mandate_consume(jsonb_build_object('mandate_id', m.id, 'merchant_id', m.merchant_id,
  'environment', 'test', 'now', now(), 'idempotency_key', 'pgb-' || :run || '-' || :client_id || '-' || :n,
  'request_hash', 'bench', 'scope', 'purchase', 'amount', ${AMOUNT}, 'currency', 'USD'))
  from bench.mandates m where m.run = :run and m.i = :i;`;

const SCRIPTS = {
  /** The consume RPC alone: what the HTTP path's last round trip does. */
  consume: `\\set i random(1, :nm)\n\\set n :n + 1\n${CONSUME_SQL}\n`,
  /** The one RPC an HTTP consume makes: key authentication, the replay guard's nonce claim and the consume. */
  "http-rpc": `\\set i random(1, :nm)\n\\set n :n + 1
select public.mandate_consume_request(jsonb_build_object(
  'credential', jsonb_build_object('key_hash', k.key_hash, 'kind', 'secret', 'environment', 'test'),
  'now', now(), 'nonce', 'pgbn-' || :run || '-' || :client_id || '-' || :n, 'window_seconds', 300,
  'decision', jsonb_build_object('mandate_id', m.id, 'idempotency_key', 'pgb-' || :run || '-' || :client_id || '-' || :n,
    'request_hash', 'bench', 'scope', 'purchase', 'amount', ${AMOUNT}, 'currency', 'USD')))
  from bench.mandates m, bench.keys k where m.run = :run and m.i = :i;\n`,
  /** Nothing but a round trip: with -C, the cost of opening a connection. */
  select1: `select 1;\n`,
};
type ScriptName = keyof typeof SCRIPTS;

interface PgbenchOptions {
  script: ScriptName;
  run: number;
  mandates: number;
  clients: number;
  work: number;
  /** New connection per transaction (-C), as the HTTP path opens one per request. */
  reconnect?: boolean;
}

function pgEnv(url: string): NodeJS.ProcessEnv {
  const u = new URL(url);
  return {
    ...process.env,
    PGHOST: u.hostname,
    PGPORT: u.port || "5432",
    PGUSER: decodeURIComponent(u.username || "postgres"),
    ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}),
    PGDATABASE: u.pathname.slice(1),
  };
}

function exec(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Connection slots pgbench may take now without starving the server (other sessions, superuser reserve, a margin). */
async function freeSlots(sql: Sql): Promise<number> {
  const [row] = await sql.unsafe(
    `select current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
            - (select count(*)::int from pg_stat_activity where backend_type = 'client backend') as free`,
  );
  return Math.max(1, row.free - 6);
}

async function pgbenchRun(databaseUrl: string, sql: Sql, options: PgbenchOptions): Promise<RunResult> {
  const clientsRun = Math.min(options.clients, await freeSlots(sql));
  const perClient = Math.max(1, Math.round(options.work / clientsRun));
  const dir = await mkdtemp(join(tmpdir(), "bench-consume-"));
  try {
    const scriptPath = join(dir, `${options.script}.sql`);
    await writeFile(scriptPath, SCRIPTS[options.script]);
    const args = [
      "-n",
      "-M",
      "simple",
      "-c",
      String(clientsRun),
      "-j",
      String(Math.min(clientsRun, 2)),
      "-t",
      String(perClient),
      "-f",
      scriptPath,
      "-D",
      `run=${options.run}`,
      "-D",
      `nm=${options.mandates}`,
      "-D",
      "n=0",
      "-l",
      "--log-prefix",
      join(dir, "log"),
      ...(options.reconnect ? ["-C"] : []),
    ];
    const result = await exec(PGBENCH, args, pgEnv(databaseUrl));
    if (result.code !== 0 || /aborted|error/i.test(result.stderr.replace(/^pgbench \(.*\)$/m, ""))) {
      throw new Error(`pgbench failed (${result.code}): ${result.stderr.trim().split("\n").slice(-5).join(" | ")}`);
    }
    const latencies: number[] = [];
    for (const file of (await readdir(dir)).filter((f) => f.startsWith("log."))) {
      for (const line of (await readFile(join(dir, file), "utf8")).split("\n")) {
        const fields = line.trim().split(/\s+/);
        if (fields.length >= 6) latencies.push(Number(fields[2]) / 1000);
      }
    }
    // pgbench's own figure: transactions per second over the run, without the initial connection time
    // (with -C every transaction's connection is inside it, as with the HTTP path)
    const tps = Number(/tps = ([\d.]+) \((without initial connection time|including reconnection times)\)/.exec(result.stdout)?.[1]);
    const processed = Number(/number of transactions actually processed: (\d+)/.exec(result.stdout)?.[1]);
    if (processed !== latencies.length) throw new Error(`pgbench logged ${latencies.length} transactions of ${processed}`);
    return { throughput: tps, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), allowed: processed, other: {}, clientsRun };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// CPU attribution (Linux /proc): this process, its workerd children, pgbench, and Postgres backends
// ---------------------------------------------------------------------------------------------
const TICKS = 100;

async function procTimes(pid: number | "self"): Promise<{ own: number; children: number; ppid: number; comm: string } | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields after comm: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
    return { own: (Number(f[11]) + Number(f[12])) / TICKS, children: (Number(f[13]) + Number(f[14])) / TICKS, ppid: Number(f[1]), comm };
  } catch {
    return null;
  }
}

async function machineTicks(): Promise<{ busy: number; total: number }> {
  const cpu = (await readFile("/proc/stat", "utf8")).split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = cpu[3] + cpu[4];
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

interface CpuSample {
  at: number;
  machine: { busy: number; total: number };
  self: number;
  pgbench: number;
  workerd: number;
  pgbouncer: number;
  postgres: number;
}

let postmasterPid: number | null = null;

async function findPostmaster(sql: Sql): Promise<void> {
  try {
    const [row] = await sql.unsafe(`show data_directory`);
    postmasterPid = Number((await readFile(join(row.data_directory, "postmaster.pid"), "utf8")).split("\n")[0]);
  } catch {
    postmasterPid = null;
  }
}

async function cpuSample(): Promise<CpuSample> {
  const self = await procTimes("self");
  let workerd = 0;
  let pgbouncer = 0;
  let postgres = 0;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const p = await procTimes(Number(entry));
    if (!p) continue;
    if (p.comm === "workerd" && p.ppid === process.pid) workerd += p.own;
    if (p.comm === "pgbouncer" && p.ppid === process.pid) pgbouncer += p.own;
    if (postmasterPid && p.ppid === postmasterPid) postgres += p.own;
  }
  const master = postmasterPid ? await procTimes(postmasterPid) : null;
  // backends that exited were reaped by the postmaster: their time is in its children's counters
  postgres += master ? master.own + master.children : 0;
  return {
    at: performance.now(),
    machine: await machineTicks(),
    self: self?.own ?? 0,
    pgbench: self?.children ?? 0,
    workerd,
    pgbouncer,
    postgres,
  };
}

function cpuReport(a: CpuSample, b: CpuSample, done: number): string {
  const wall = (b.at - a.at) / 1000;
  const busy = (b.machine.busy - a.machine.busy) / (b.machine.total - a.machine.total);
  const parts: [string, number][] = [
    ["postgres", b.postgres - a.postgres],
    ["workerd", b.workerd - a.workerd],
    ["pgbouncer", b.pgbouncer - a.pgbouncer],
    ["node (load generator)", b.self - a.self],
    ["pgbench", b.pgbench - a.pgbench],
  ];
  const used = parts.filter(([, x]) => x > 0);
  const perConsume = used.reduce((n, [, x]) => n + x, 0) / done;
  return (
    `machine ${(busy * 100).toFixed(0)}% busy; ` +
    used.map(([name, x]) => `${name} ${(x / wall).toFixed(2)} cores`).join(", ") +
    `; ${(perConsume * 1000).toFixed(2)} ms of CPU per consume (` +
    used.map(([name, x]) => `${name} ${((x / done) * 1000).toFixed(2)}`).join(", ") +
    ")"
  );
}

/**
 * What one HTTP consume costs the database, step by step, measured from Node with the worker's own
 * client settings: open a connection, then the one RPC of the path on it (cold: the backend's
 * first calls, which compile the PL/pgSQL and plan every statement), then the same call again (warm).
 */
async function coldWarmProbe(databaseUrl: string, fixture: Fixture, iterations: number) {
  const { run, ids } = await freshMandates(fixture, 1);
  const [keyRow] = await fixture.sql.unsafe(`select key_hash from bench.keys`);
  const steps: Record<string, number[]> = {};
  const time = async (label: string, work: () => Promise<unknown>) => {
    const t = performance.now();
    await work();
    (steps[label] ??= []).push(performance.now() - t);
  };
  for (let i = 0; i < iterations; i++) {
    const db = connect(databaseUrl);
    const rpcs = (phase: string) =>
      [
        [
          `${phase}: mandate_consume_request (key, nonce, consume)`,
          () =>
            rawRpc(db, "mandate_consume_request", {
              credential: { key_hash: keyRow.key_hash, kind: "secret", environment: "test" },
              now: new Date().toISOString(),
              nonce: `probe-${randomUUID()}`,
              window_seconds: 300,
              decision: {
                mandate_id: ids[0],
                idempotency_key: `probe-${randomUUID()}`,
                request_hash: "probe",
                scope: "purchase",
                amount: AMOUNT,
                currency: "USD",
              },
            }),
        ],
      ] as const;
    await time("open a connection (startup, auth, first round trip)", () => db.unsafe("select 1"));
    for (const [label, work] of rpcs("cold")) await time(label, work);
    for (const [label, work] of rpcs("warm")) await time(label, work);
    await db.end();
  }
  await checkLedger(fixture.sql, run, 2 * iterations);
  return Object.entries(steps).map(([label, xs]) => [label, median(xs)] as const);
}

// ---------------------------------------------------------------------------------------------
// Main: seed, run each cell, profile, report
// ---------------------------------------------------------------------------------------------
const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : "-");
const fmtMs = (x: number) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(1)) : "-");

/** One scenario at one concurrency: every run of each HTTP path and of pgbench. */
interface Cell {
  scenario: "hot" | "spread";
  mandates: number;
  clients: number;
  http: Record<string, RunResult[]>;
  raw: RunResult[];
}

/** How the mandate-consume server of one HTTP path starts: through its pooler (or none). */
async function serverOptions(path: string) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DB_POOLER: path === "external" || path === "direct" ? "0" : path,
    TEST_CLOCK: "0",
    CRON_TIMER: "0",
  };
  delete env.UPSTASH_REDIS_REST_URL;
  delete env.UPSTASH_REDIS_REST_TOKEN;
  return {
    env,
    ...(path === "external" ? { serviceDatabaseUrl: HTTP_DATABASE_URL } : {}),
    ...(CPU_PROFILE ? { inspectorPort: await freePort() } : {}),
    ...(TARGET_NAME === "own-socket" ? { ownSockets: ["mandate-consume"] } : {}),
  };
}

/** The scratch database with one mandate-consume server per HTTP path on it. */
async function startServers(): Promise<{ scratch: ScratchServer; servers: Record<string, RunningServer> }> {
  const [first, ...rest] = PATHS;
  const scratch = await scratchServer(DB_NAME, ["mandate-consume"], { ...(await serverOptions(first!)), keep: KEEP });
  const servers: Record<string, RunningServer> = { [first!]: scratch.server };
  for (const path of rest) servers[path] = await scratch.another(await serverOptions(path));
  return { scratch, servers };
}

/** The bench schema (the mandates of each run, the key's hash for pgbench), one grantor and their secret key. */
async function seed(sql: Sql): Promise<Fixture> {
  await sql.unsafe(`create schema bench`);
  await sql.unsafe(
    `create table bench.mandates (run int not null, i int not null, id uuid not null, merchant_id uuid not null, primary key (run, i))`,
  );
  await sql.unsafe(`create table bench.keys (merchant_id uuid not null, key_hash text not null)`);
  const grantor = await seedGrantor(sql, { at: new Date() });
  const key = await createKey(sql, grantor.merchantId, "secret", "test");
  const [keyRow] = await sql.unsafe(`select key_hash from private.api_keys where id = $1`, [key.key_id]);
  await sql.unsafe(`insert into bench.keys values ($1, $2)`, [grantor.merchantId, keyRow.key_hash]);
  return { sql, grantor, apiKey: key.key };
}

/** Warms each path's isolates and connection path once, on a mandate of its own. */
async function warmUp(servers: Record<string, RunningServer>, fixture: Fixture): Promise<void> {
  for (const path of PATHS) {
    const warm = await freshMandates(fixture, 1);
    const warmed = await httpRun(servers[path], fixture, warm.ids, 16, 400);
    await checkLedger(fixture.sql, warm.run, warmed.allowed);
    log(`warm-up ${path}: ${fmt(warmed.throughput)} req/s`);
  }
}

/** Every cell (each scenario at each concurrency), REPEAT times, each HTTP path and raw in a rotating order. */
async function runCells(servers: Record<string, RunningServer>, fixture: Fixture, benchUrl: string): Promise<Cell[]> {
  const cells: Cell[] = [];
  const steps = [...PATHS, "raw"];
  for (const [scenario, mandates] of [
    ["hot", 1],
    ["spread", SPREAD],
  ] as const) {
    for (const clients of CLIENTS) {
      const cell: Cell = { scenario, mandates, clients, http: Object.fromEntries(PATHS.map((p) => [p, []])), raw: [] };
      cells.push(cell);
      const work = workFor(clients);
      for (let r = 0; r < REPEAT; r++) {
        const parts: string[] = [];
        // the order rotates every repeat, so no path always runs first (or right after pgbench)
        for (const step of [...steps.slice(r % steps.length), ...steps.slice(0, r % steps.length)]) {
          const fresh = await freshMandates(fixture, mandates);
          if (step === "raw") {
            const raw = await pgbenchRun(benchUrl, fixture.sql, { script: "consume", run: fresh.run, mandates, clients, work });
            await checkLedger(fixture.sql, fresh.run, raw.allowed);
            cell.raw.push(raw);
            parts.push(
              `pgbench ${fmt(raw.throughput)} tps p50 ${fmtMs(raw.p50)} p99 ${fmtMs(raw.p99)}` +
                `${raw.clientsRun < clients ? ` (${raw.clientsRun} clients: connection slots)` : ""}`,
            );
          } else {
            const http = await httpRun(servers[step], fixture, fresh.ids, clients, work);
            await checkLedger(fixture.sql, fresh.run, http.allowed);
            cell.http[step].push(http);
            const others = Object.entries(http.other)
              .map(([k, v]) => `${k} ${v}`)
              .join(", ");
            parts.push(
              `HTTP ${step} ${fmt(http.throughput)} req/s p50 ${fmtMs(http.p50)} p99 ${fmtMs(http.p99)}${others ? ` (not allowed: ${others})` : ""}`,
            );
          }
        }
        log(`${scenario} ${clients} clients #${r + 1}: ${parts.join("; ")}; ledger checked`);
      }
    }
  }
  return cells;
}

/** The cells' table: medians per HTTP path against pgbench. */
function cellTable(cells: Cell[]): string[] {
  const lines: string[] = [];
  lines.push(
    `| mandates | clients | HTTP path | HTTP req/s | HTTP p50 ms | HTTP p99 ms | pgbench tps | pgbench p50 ms | pgbench p99 ms | HTTP/raw |`,
  );
  lines.push(`|---|---|---|---|---|---|---|---|---|---|`);
  for (const cell of cells) {
    const r = median(cell.raw.map((x) => x.throughput));
    const rawClients = Math.min(...cell.raw.map((x) => x.clientsRun));
    for (const path of PATHS) {
      const runs = cell.http[path];
      const h = median(runs.map((x) => x.throughput));
      const errors = runs.reduce(
        (n, x) =>
          n +
          Object.entries(x.other)
            .filter(([k]) => k.startsWith("HTTP"))
            .reduce((m, [, v]) => m + v, 0),
        0,
      );
      lines.push(
        `| ${cell.scenario === "hot" ? "1 (hot)" : `${cell.mandates} (spread)`} | ${cell.clients}${rawClients < cell.clients ? ` (pgbench ${rawClients})` : ""} ` +
          `| ${path} | ${fmt(h)}${errors ? ` (${errors} errors)` : ""} | ${fmtMs(median(runs.map((x) => x.p50)))} | ${fmtMs(median(runs.map((x) => x.p99)))} ` +
          `| ${fmt(r)} | ${fmtMs(median(cell.raw.map((x) => x.p50)))} | ${fmtMs(median(cell.raw.map((x) => x.p99)))} | ${fmt(h / r, 2)} |`,
      );
    }
  }
  return lines;
}

/** The issue's goal cells, per HTTP path (medians of the run; "-" where the cell was not measured). */
function goalTable(cells: Cell[]): string[] {
  const cellOf = (scenario: string, clients: number) => cells.find((c) => c.scenario === scenario && c.clients === clients);
  const latencyGoal = (path: string) => {
    const cell = cellOf("hot", 1);
    if (!cell) return "-";
    const h = median(cell.http[path].map((x) => x.p50));
    const r = median(cell.raw.map((x) => x.p50));
    return `${fmtMs(h)} / ${fmtMs(r)} ms = ${fmt(h / r, 1)}x (${h / r <= 3 ? "met" : "NOT met"})`;
  };
  const throughputGoal = (scenario: string, goal: number) => (path: string) => {
    const cell = cellOf(scenario, 32);
    if (!cell) return "-";
    const h = median(cell.http[path].map((x) => x.throughput));
    const r = median(cell.raw.map((x) => x.throughput));
    return `${fmt(h)} / ${fmt(r)} = ${fmt(h / r, 2)} (${h / r >= goal ? "met" : "NOT met"})`;
  };
  const goals: [string, string, (path: string) => string][] = [
    ["1 client, hot mandate, HTTP p50 / raw p50", "at most 3x", latencyGoal],
    ["32 clients, hot mandate, HTTP / raw throughput", "at least 0.7", throughputGoal("hot", 0.7)],
    [`32 clients, ${SPREAD.toLocaleString("en")} mandates, HTTP / raw throughput`, "at least 0.6", throughputGoal("spread", 0.6)],
  ];
  const lines = [`| cell | goal | ${PATHS.join(" | ")} |`, `|---|---|${PATHS.map(() => "---|").join("")}`];
  for (const [label, goal, value] of goals) lines.push(`| ${label} | ${goal} | ${PATHS.map(value).join(" | ")} |`);
  return lines;
}

/** The 32-client hot cell decomposed: pgbench variants against each HTTP path, where the CPU goes, one consume's database steps. */
async function profileHotCell(servers: Record<string, RunningServer>, fixture: Fixture, benchUrl: string): Promise<string[]> {
  log("profiling the 32-client hot cell");
  const { sql } = fixture;
  const profile: string[] = [];
  const work = workFor(32);
  const variants: [string, ScriptName, boolean][] = [
    ["pgbench: consume RPC, persistent connections (the table's raw column)", "consume", false],
    ["pgbench: consume RPC, a new connection per call (-C)", "consume", true],
    ["pgbench: the HTTP path's one RPC (key auth, nonce claim, consume), persistent connections", "http-rpc", false],
    ["pgbench: the HTTP path's one RPC, a new connection per request (-C)", "http-rpc", true],
    ["pgbench: connect + select 1 (-C)", "select1", true],
  ];
  const figures: Record<string, number[]> = {};
  for (let r = 0; r < REPEAT; r++) {
    for (const [label, script, reconnect] of variants) {
      const fresh = await freshMandates(fixture, 1);
      const result = await pgbenchRun(benchUrl, sql, { script, run: fresh.run, mandates: 1, clients: 32, work, reconnect });
      if (script !== "select1") await checkLedger(sql, fresh.run, result.allowed);
      (figures[label] ??= []).push(result.throughput);
    }
    for (const path of PATHS) {
      const fresh = await freshMandates(fixture, 1);
      const http = await httpRun(servers[path], fixture, fresh.ids, 32, work);
      await checkLedger(sql, fresh.run, http.allowed);
      (figures[`HTTP through ${path}: POST mandate-consume`] ??= []).push(http.throughput);
    }
  }
  profile.push(
    `32 clients on one hot mandate, ${work} calls a run, per second (median of ${REPEAT}):`,
    "",
    `| path | per second |`,
    `|---|---|`,
  );
  for (const [label, xs] of Object.entries(figures)) profile.push(`| ${label} | ${fmt(median(xs))} |`);

  // where the CPU goes, one run of each path
  profile.push("");
  for (const path of [...PATHS, "pgbench"]) {
    const fresh = await freshMandates(fixture, 1);
    const a = await cpuSample();
    const result =
      path === "pgbench"
        ? await pgbenchRun(benchUrl, sql, { script: "consume", run: fresh.run, mandates: 1, clients: 32, work })
        : await httpRun(servers[path], fixture, fresh.ids, 32, work);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const b = await cpuSample();
    await checkLedger(sql, fresh.run, result.allowed);
    const name = path === "pgbench" ? "pgbench" : `HTTP (${path})`;
    profile.push(`CPU during a ${name} run at 32 clients (${fmt(result.throughput)}/s): ${cpuReport(a, b, work)}.`, "");
  }

  const probe = await coldWarmProbe(benchUrl, fixture, 40);
  profile.push(
    `One HTTP consume's database work, step by step from Node with the worker's client settings (medians of 40, ms):`,
    "",
    `| step | ms |`,
    `|---|---|`,
  );
  for (const [label, ms] of probe) profile.push(`| ${label} | ${fmtMs(ms)} |`);
  return profile;
}

/** The Markdown report for docs/benchmarks.md. */
function report(cells: Cell[], profile: string[], conditions: string): string {
  const poolSize = process.env.DB_POOLER_SIZE ?? "20";
  return [
    `Run: \`${HTTP_DATABASE_URL ? "BENCH_HTTP_DATABASE_URL=<pooler> " : ""}npm run bench:consume -- --poolers ${POOLERS.join(",")}${TARGET.flag}\` ` +
      `(HTTP paths ${PATHS.join(", ")}; ${poolSize} backends per pooler; ${REPEAT} repeats per cell, interleaved; ${WORK} consumes a run, ${workFor(1)} for one client, ${workFor(128)} for 128; ` +
      `fresh mandates every run, amount ${AMOUNT} against a lifetime ceiling never reached; medians). Run: ${conditions}.`,
    "",
    ...cellTable(cells),
    "",
    "The issue's goal cells (HTTP against raw pgbench in the same run, medians):",
    "",
    ...goalTable(cells),
    "",
    "Every run was followed by the ledger check (no mandate past its ceiling; stored consumptions = allowed answers, stored sum = allowed x amount): all passed.",
    ...(profile.length ? ["", ...profile] : []),
  ].join("\n");
}

async function main() {
  const started = performance.now();
  const loadAtStart = loadNow();
  log(
    `scratch database ${DB_NAME} on ${new URL(BENCH_ADMIN_URL).host}; starting mandate-consume on workerd, HTTP paths: ${PATHS.join(", ")}, sent ${TARGET.said}`,
  );
  const { scratch, servers } = await startServers();
  const benchUrl = scratch.databaseUrl;
  let sql: Sql | undefined;
  try {
    // The first server's start migrated it, unless that server reaches it only through an external pooler.
    const migrating = connect(benchUrl);
    await applyMigrations(migrating);
    await migrating.end();
    sql = connect(benchUrl, { pooled: true });
    const fixture = await seed(sql);
    await findPostmaster(sql);
    await warmUp(servers, fixture);
    if (CPU_PROFILE) {
      const { profileWorker } = await import("./workerd-profile");
      const path = PATHS[0]!;
      // The CPU of every process first, without the profiler: workerd's share per consume is the figure the goal names.
      const unprofiled = await freshMandates(fixture, 1);
      const before = await cpuSample();
      const plain = await httpRun(servers[path]!, fixture, unprofiled.ids, 32, workFor(32) * 2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const cpu = cpuReport(before, await cpuSample(), workFor(32) * 2);
      await checkLedger(sql, unprofiled.run, plain.allowed);
      const fresh = await freshMandates(fixture, 1);
      const work = workFor(32) * 3;
      let result: RunResult | undefined;
      const report = await profileWorker(servers[path]!, "mandate-consume", work, async () => {
        result = await httpRun(servers[path]!, fixture, fresh.ids, 32, work);
      });
      await checkLedger(sql, fresh.run, result!.allowed);
      process.stdout.write(
        `\n## workerd CPU profile: POST mandate-consume, 32 clients, one hot mandate, through ${path} (${fmt(result!.throughput)}/s)\n\n` +
          `Without the profiler, a run of ${workFor(32) * 2} consumes at 32 clients (${fmt(plain.throughput)}/s): ${cpu}.\n\n${report}\n\n${runConditions(started, loadAtStart)}\n`,
      );
      return;
    }
    const cells = await runCells(servers, fixture, benchUrl);
    const profile = PROFILE && CLIENTS.includes(32) ? await profileHotCell(servers, fixture, benchUrl) : [];
    process.stdout.write(`${report(cells, profile, runConditions(started, loadAtStart))}\n`);
  } finally {
    await sql?.end();
    await scratch.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
