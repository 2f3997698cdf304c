/**
 * Identification benchmark: `npm run bench:identify [-- --sizes 1000,10000,100000 --queries 40 --queries-large 20]`.
 *
 * face-identify latency (median, p95) at each number of enrolled templates, HNSW and exact paths
 * side by side, and HNSW recall@1 against the exact scan:
 * - raw: one `face_template_search` RPC over the wire protocol, as the function issues it, with and
 *   without `exact: true`;
 * - HTTP: `POST /functions/v1/face-identify` through the real worker (startServer, workerd), which
 *   also validates the descriptor, runs the presence engine on it, claims the replay nonce and
 *   records the pseudonym; it takes the default path (HNSW where pgvector exists).
 *
 * Databases: an in-process embedded PGlite with pgvector (always), and, when DATABASE_URL is set,
 * that Postgres through a scratch database `hauth_bench_identify` created and dropped here (never
 * the database DATABASE_URL names). A Postgres without pgvector has only the exact path.
 *
 * Templates: 200 sandbox persons enrolled with their protected face, the rest random unit vectors
 * generated server-side in one `insert … select`. Each size is grown from the previous one; the
 * HNSW index is dropped while seeding and rebuilt from its own definition (building is far faster
 * than inserting into the graph), then both tables are analysed (PGlite runs no autovacuum; without
 * statistics the planner does not choose the HNSW index).
 *
 * Queries: half are fresh live captures of enrolled persons (recognition), half are captures with a
 * random face (strangers: the hardest case for an approximate index). The same protected vectors go
 * to the raw and the HTTP paths. At 100,000 templates fewer queries run (--queries-large), because
 * the exact scan takes seconds there on PGlite.
 */
import { performance } from "node:perf_hooks";
import type { PresenceDescriptor } from "../../shared/engine";
import type { TemplateMatch } from "../../shared/identity/rpc";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { rpc } from "../../shared/kernel/db/rpc";
import { TEMPLATE_DIMENSIONS, type TemplateProtector, templateProtector } from "../../shared/lib/template-protection";
import { createMerchant } from "../../shared/merchants/accounts";
import { faceEmbeddingOfPerson, simulateCapture } from "../../shared/simulator";
import { startEmbeddedDatabase } from "../local/embedded-db";
import { applyMigrations } from "../local/migrations";
import { freePort } from "../local/ports";
import { localSecrets } from "../local/secrets";
import { type RunningServer, startServer } from "../local/server";
import { loadNow, median, quantile, runConditions, scratchServer, textFlag } from "./common";

const SCRATCH_DATABASE = "hauth_bench_identify";
const ENROLLED_PERSONS = 200;
const WARMUP = 3;

const sizes = (textFlag("sizes") ?? "1000,10000,100000").split(",").map(Number);
const queries = Number(textFlag("queries") ?? "40");
const queriesLarge = Number(textFlag("queries-large") ?? "20");
if (sizes.some((n) => !Number.isInteger(n) || n < ENROLLED_PERSONS) || !(queries >= 2) || !(queriesLarge >= 2)) {
  throw new Error(`--sizes must be integers >= ${ENROLLED_PERSONS}; --queries and --queries-large at least 2`);
}
const queriesAt = (size: number) => (size >= 100_000 ? queriesLarge : queries);

const log = (line: string) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

interface Measure {
  n: number;
  median: number;
  p95: number;
}

function measure(samples: number[]): Measure {
  return { n: samples.length, median: median(samples), p95: quantile(samples, 0.95) };
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const fraction = (hits: number, total: number) => (total ? `${((100 * hits) / total).toFixed(0)}% (${hits}/${total})` : "—");

// ---------------------------------------------------------------------------------------------
// Seeding
// ---------------------------------------------------------------------------------------------

/** Enrols sandbox persons 1..n under the deployment's key; returns person -> identity id. */
async function enrollPersons(sql: Sql, protector: TemplateProtector, n: number): Promise<Map<number, string>> {
  const rows = Array.from({ length: n }, (_, i) => ({
    person: i + 1,
    id: crypto.randomUUID() as string,
    embedding: protector.protect(faceEmbeddingOfPerson(i + 1)),
  }));
  const json = JSON.stringify(rows);
  await sql.unsafe(
    `insert into private.identities (id, environment, created_at)
     select (r ->> 'id')::uuid, 'test', now() from jsonb_array_elements($1::text::jsonb) r`,
    [json],
  );
  await sql.unsafe(
    `insert into private.face_templates (identity_id, environment, key_id, code, sealed, seal_key_id, created_at)
     select (r ->> 'id')::uuid, 'test', $2, ('x' || (r ->> 'code'))::bit(2048),
            private.template_seal(array(select e::real from jsonb_array_elements_text(r -> 'embedding') with ordinality as x(e, n) order by n)),
            (select k.id from private.template_seal_keys k where k.retired_at is null), now()
     from jsonb_array_elements($1::text::jsonb) r`,
    [JSON.stringify(rows.map((r) => ({ ...r, code: protector.code(r.embedding) }))), protector.keyId],
  );
  return new Map(rows.map((r) => [r.person, r.id]));
}

/**
 * Adds `count` random unit-vector templates (and their identities) in one statement, server-side: each
 * sealed as identity_enroll seals, with random bits for its code (a random direction's code under
 * Gaussian hyperplanes is a fair coin per bit, D-680).
 */
async function addRandomTemplates(sql: Sql, keyId: string, count: number): Promise<void> {
  await sql.unsafe(
    `with ids as (insert into private.identities (environment, created_at) select 'test', now() from generate_series(1, $1::int) returning id)
     insert into private.face_templates (identity_id, environment, key_id, code, sealed, seal_key_id, created_at)
     select ids.id, 'test', $2,
            (select string_agg(case when random() < 0.5 then '0' else '1' end, '') from generate_series(1, 2048) where ids.id is not null)::bit(2048),
            private.template_seal(v.embedding), (select k.id from private.template_seal_keys k where k.retired_at is null), now()
     from ids cross join lateral (
       select array_agg((x / norm)::real) as embedding from (
         select x, sqrt(sum(x * x) over ()) as norm from (
           select sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) as x, ids.id
           from generate_series(1, ${TEMPLATE_DIMENSIONS})
         ) normals
       ) scaled
     ) v`,
    [count, keyId],
  );
}

async function hnswIndexDefinition(sql: Sql): Promise<string | null> {
  const [row] = await sql`select indexdef from pg_indexes where schemaname = 'private' and indexname = 'face_templates_hnsw_idx'`;
  return row ? String(row.indexdef) : null;
}

/** Grows the store to `target` templates: drop HNSW, insert, rebuild HNSW from its definition, analyse. */
async function growTo(sql: Sql, keyId: string, current: number, target: number, hnswDefinition: string | null) {
  let started = performance.now();
  if (hnswDefinition) await sql`drop index if exists private.face_templates_hnsw_idx`;
  for (let added = current; added < target; ) {
    const count = Math.min(25_000, target - added);
    await addRandomTemplates(sql, keyId, count);
    added += count;
  }
  const seedMs = performance.now() - started;
  started = performance.now();
  if (hnswDefinition) {
    await sql`set maintenance_work_mem = '512MB'`;
    await sql.unsafe(hnswDefinition);
    await sql`reset maintenance_work_mem`;
  }
  const buildMs = performance.now() - started;
  await sql`analyze private.face_templates`;
  await sql`analyze private.identities`;
  return { seedMs, buildMs };
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

interface Query {
  /** The sandbox person captured, or null for a stranger (random face). */
  person: number | null;
  descriptor: PresenceDescriptor;
  /** The protected embedding the function will search with. */
  embedding: number[];
}

function randomUnit(): number[] {
  const raw = Array.from(
    { length: TEMPLATE_DIMENSIONS },
    () => Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random()),
  );
  const norm = Math.hypot(...raw);
  return raw.map((x) => x / norm);
}

type Path = "http" | "hnsw" | "exact";

/** Fresh live captures (taken now: the engine refuses stale ones); even-numbered ones of enrolled persons. */
function makeQueries(n: number, protector: TemplateProtector, first = 0): Query[] {
  return Array.from({ length: n }, (_, j) => {
    const i = first + j;
    const person = i % 2 === 0 ? 1 + Math.floor(Math.random() * ENROLLED_PERSONS) : null;
    const capture = simulateCapture({
      person: person ?? 1,
      nonce: `bench-${crypto.randomUUID()}`,
      capturedAt: new Date().toISOString(),
      seed: Math.floor(Math.random() * 2 ** 31),
    });
    const descriptor = person === null ? { ...capture, face: { ...capture.face, embedding: randomUnit() } } : capture;
    return { person, descriptor, embedding: protector.protect(descriptor.face.embedding) };
  });
}

/** One search as the function makes it (the code is computed before the clock starts: it is the Worker's, not the store's). */
async function searchRaw(sql: Sql, protector: TemplateProtector, embedding: number[]) {
  const code = protector.code(embedding);
  const started = performance.now();
  const [top] = await rpc(sql, "face_template_search", { environment: "test", key_id: protector.keyId, embedding, code, limit: 1 });
  return { ms: performance.now() - started, top: top ?? null };
}

async function identifyOverHttp(baseUrl: string, publishableKey: string, query: Query) {
  const body = JSON.stringify({ face_template: query.descriptor, capture_nonce: query.descriptor.capture_nonce });
  const headers = {
    "content-type": "application/json",
    "x-service-api-key": publishableKey,
    "x-service-timestamp": String(Math.floor(Date.now() / 1000)),
    "x-service-nonce": `n-${crypto.randomUUID()}`,
  };
  const started = performance.now();
  const response = await fetch(`${baseUrl}/functions/v1/face-identify`, { method: "POST", headers, body });
  const answer = (await response.json()) as { matched?: boolean };
  return { ms: performance.now() - started, status: response.status, matched: answer.matched === true };
}

/** The plan the non-exact search's query gets at this size: does it walk the HNSW graph? */
async function plannedPath(sql: Sql, keyId: string, embedding: number[]): Promise<string> {
  const plan = await sql.unsafe(
    `explain (costs off)
     select t.identity_id from private.face_templates t join private.identities i on i.id = t.identity_id
     where t.environment = 'test' and t.key_id = $2
     order by t.embedding_vector operator(public.<=>) $1::text::public.vector(128) limit 1`,
    [JSON.stringify(embedding), keyId],
  );
  return plan.some((row) => /face_templates_hnsw_idx/.test(String(row["QUERY PLAN"]))) ? "HNSW index" : "sort (no index)";
}

// ---------------------------------------------------------------------------------------------
// One database
// ---------------------------------------------------------------------------------------------

interface SizeResult {
  size: number;
  seedMs: number;
  buildMs: number;
  plan: string;
  http: Measure;
  /** HTTP answers that were not 200, or did not match an enrolled person, or matched a stranger. */
  httpAnomalies: string[];
  rawExact: Measure;
  rawHnsw: Measure | null;
  recallEnrolled: [number, number];
  recallRandom: [number, number];
  /** Enrolled persons the exact scan ranked first. */
  exactFindsEnrolled: [number, number];
  maxSimilarityGap: number;
}

interface DatabaseRun {
  label: string;
  version: string;
  pgvector: string | null;
  results: SizeResult[];
}

/** Measures face-identify on `server`, whose database is `databaseUrl`. */
async function benchDatabase(
  label: string,
  server: RunningServer,
  databaseUrl: string,
  secrets: Record<string, string>,
): Promise<DatabaseRun> {
  const sql = connect(databaseUrl);
  const protector = await templateProtector(secrets.TEMPLATE_PROTECTION_KEY);
  try {
    const [{ version }] = await sql`select current_setting('server_version') as version`;
    const [vector] = await sql`select extversion from pg_extension where extname = 'vector'`;
    const hasColumn =
      (
        await sql`select 1 from information_schema.columns
        where table_schema = 'private' and table_name = 'face_templates' and column_name = 'embedding_vector'`
      ).length > 0;
    const hnswDefinition = hasColumn ? await hnswIndexDefinition(sql) : null;
    const merchant = await createMerchant(sql, `bench-identify ${new Date().toISOString()}`);
    const persons = await enrollPersons(sql, protector, ENROLLED_PERSONS);
    // face-identify answers only persons who consented with the calling merchant.
    await sql.unsafe(
      `insert into private.consents (identity_id, merchant_id, version, retention_days, granted_at)
       select id::uuid, $2, 'bench', 30, now() from jsonb_array_elements_text($1::text::jsonb) id`,
      [JSON.stringify([...persons.values()]), merchant.merchant_id],
    );
    let current = ENROLLED_PERSONS;
    const results: SizeResult[] = [];

    for (const size of sizes) {
      log(`${label}: growing to ${size.toLocaleString("en")} templates …`);
      const { seedMs, buildMs } = await growTo(sql, protector.keyId, current, size, hnswDefinition);
      current = size;
      log(
        `${label}: ${size.toLocaleString("en")} seeded in ${(seedMs / 1000).toFixed(1)} s${hnswDefinition ? `, HNSW built in ${(buildMs / 1000).toFixed(1)} s` : ""}`,
      );

      // Every query goes through each path in turn (HTTP, raw default, raw exact), in an order that
      // rotates from one query to the next, so drifting machine load weighs on all paths alike. Each
      // capture is taken just before its query: the engine refuses one older than five minutes.
      const paths: Path[] = hnswDefinition ? ["http", "hnsw", "exact"] : ["http", "exact"];
      for (const q of makeQueries(WARMUP, protector)) {
        await identifyOverHttp(server.url, merchant.keys.pk_test, q);
        for (let pass = hnswDefinition ? 2 : 1; pass > 0; pass--) await searchRaw(sql, protector, q.embedding);
      }
      const samples: Record<Path, number[]> = { http: [], hnsw: [], exact: [] };
      const httpAnomalies: string[] = [];
      const recallEnrolled: [number, number] = [0, 0];
      const recallRandom: [number, number] = [0, 0];
      const exactFindsEnrolled: [number, number] = [0, 0];
      let maxSimilarityGap = 0;
      let firstQuery: number[] | null = null;
      for (let i = 0; i < queriesAt(size); i++) {
        const [q] = makeQueries(1, protector, i);
        firstQuery ??= q.embedding;
        const top = new Map<Path, TemplateMatch | null>();
        for (const path of [...paths.slice(i % paths.length), ...paths.slice(0, i % paths.length)]) {
          if (path === "http") {
            const r = await identifyOverHttp(server.url, merchant.keys.pk_test, q);
            samples.http.push(r.ms);
            if (r.status !== 200) httpAnomalies.push(`status ${r.status}`);
            else if (q.person !== null && !r.matched) httpAnomalies.push(`person ${q.person} not matched`);
            else if (q.person === null && r.matched) httpAnomalies.push("stranger matched");
          } else {
            const r = await searchRaw(sql, protector, q.embedding);
            samples[path].push(r.ms);
            top.set(path, r.top);
          }
        }
        const exact = top.get("exact");
        if (q.person !== null) {
          exactFindsEnrolled[1]++;
          if (exact?.identity_id === persons.get(q.person)) exactFindsEnrolled[0]++;
        }
        if (top.has("hnsw")) {
          const hnsw = top.get("hnsw");
          const recall = q.person !== null ? recallEnrolled : recallRandom;
          recall[1]++;
          if (hnsw && exact && hnsw.identity_id === exact.identity_id) {
            recall[0]++;
            maxSimilarityGap = Math.max(maxSimilarityGap, Math.abs(hnsw.similarity - exact.similarity));
          }
        }
      }
      const httpMs = samples.http;
      const exactMs = samples.exact;
      const hnswMs = samples.hnsw;
      const plan = hnswDefinition ? await plannedPath(sql, protector.keyId, firstQuery!) : "exact scan (no pgvector)";
      const result: SizeResult = {
        size,
        seedMs,
        buildMs,
        plan,
        http: measure(httpMs),
        httpAnomalies,
        rawExact: measure(exactMs),
        rawHnsw: hnswMs.length ? measure(hnswMs) : null,
        recallEnrolled,
        recallRandom,
        exactFindsEnrolled,
        maxSimilarityGap,
      };
      results.push(result);
      log(
        `${label} ${size}: HTTP ${ms(result.http.median)} ms, exact ${ms(result.rawExact.median)} ms` +
          (result.rawHnsw
            ? `, HNSW ${ms(result.rawHnsw.median)} ms (${plan}), recall@1 enrolled ${fraction(...recallEnrolled)}, random ${fraction(...recallRandom)}`
            : ""),
      );
    }
    return { label, version: String(version), pgvector: vector ? String(vector.extversion) : null, results };
  } finally {
    await sql.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

function report(runs: DatabaseRun[], conditions: string): string {
  const lines: string[] = [];
  const command = `npm run bench:identify -- --sizes ${sizes.join(",")} --queries ${queries} --queries-large ${queriesLarge}`;
  lines.push(`Command: \`${command}\`${process.env.DATABASE_URL ? " with `DATABASE_URL` set" : ""}.`);
  lines.push(`Run: ${conditions}.`);
  lines.push(
    `Queries per size: ${queries} (${queriesLarge} at 100,000 and above), half fresh live captures of the ${ENROLLED_PERSONS} enrolled sandbox persons, half strangers (random faces); ` +
      `each query goes through every path in a rotating order, after ${WARMUP} warm-up queries. Latencies in ms; the median and p95 are the values at rank floor(p x n) from the fastest, counted from 0 (scripts/bench/common.ts: with 20 queries, p95 is the slowest).`,
  );
  for (const run of runs) {
    lines.push("");
    lines.push(`### ${run.label} (PostgreSQL ${run.version}${run.pgvector ? `, pgvector ${run.pgvector}` : ", no pgvector"})`);
    lines.push("");
    lines.push(
      "| templates | path | queries | raw median | raw p95 | HTTP median | HTTP p95 | HTTP / raw (medians) | recall@1 enrolled | recall@1 random |",
    );
    lines.push("|---:|---|---:|---:|---:|---:|---:|---:|---|---|");
    for (const r of run.results) {
      const size = r.size.toLocaleString("en");
      const http = `${ms(r.http.median)} | ${ms(r.http.p95)}`;
      if (r.rawHnsw) {
        lines.push(
          `| ${size} | HNSW (default) | ${r.rawHnsw.n} | ${ms(r.rawHnsw.median)} | ${ms(r.rawHnsw.p95)} | ${http} | ${(r.http.median / r.rawHnsw.median).toFixed(1)}× | ${fraction(...r.recallEnrolled)} | ${fraction(...r.recallRandom)} |`,
        );
        lines.push(
          `| ${size} | exact | ${r.rawExact.n} | ${ms(r.rawExact.median)} | ${ms(r.rawExact.p95)} | — | — | — | (reference) | (reference) |`,
        );
      } else {
        lines.push(
          `| ${size} | exact (default) | ${r.rawExact.n} | ${ms(r.rawExact.median)} | ${ms(r.rawExact.p95)} | ${http} | ${(r.http.median / r.rawExact.median).toFixed(1)}× | — | — |`,
        );
      }
    }
    lines.push("");
    for (const r of run.results) {
      const parts = [
        `seeded in ${(r.seedMs / 1000).toFixed(1)} s`,
        ...(r.rawHnsw
          ? [
              `HNSW index built in ${(r.buildMs / 1000).toFixed(1)} s`,
              `planner: ${r.plan}`,
              `HNSW/exact similarity gap on agreeing answers ≤ ${r.maxSimilarityGap.toExponential(1)}`,
            ]
          : []),
        `exact scan ranked the enrolled person first ${fraction(...r.exactFindsEnrolled)}`,
        `HTTP anomalies: ${r.httpAnomalies.length ? r.httpAnomalies.join(", ") : "none"}`,
      ];
      lines.push(`- ${r.size.toLocaleString("en")}: ${parts.join("; ")}.`);
    }
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

const started = performance.now();
const loadAtStart = loadNow();
// Fresh secrets for this run only (generated in memory, never written).
const secrets: Record<string, string> = { ...localSecrets({}) };
const runs: DatabaseRun[] = [];

const embedded = await startEmbeddedDatabase({ dataDir: "memory://", port: await freePort() });
try {
  const sql = connect(embedded.url);
  await applyMigrations(sql).finally(() => sql.end());
  const server = await startServer({
    port: await freePort(),
    env: { ...secrets, DATABASE_URL: embedded.url },
    functions: ["face-identify"],
  });
  try {
    runs.push(await benchDatabase("Embedded PGlite", server, embedded.url, secrets));
  } finally {
    await server.stop();
  }
} finally {
  await embedded.stop();
}

if (process.env.DATABASE_URL) {
  const scratch = await scratchServer(SCRATCH_DATABASE, ["face-identify"], { env: secrets, adminUrl: process.env.DATABASE_URL });
  try {
    runs.push(
      await benchDatabase(`Postgres at DATABASE_URL, scratch database ${SCRATCH_DATABASE}`, scratch.server, scratch.databaseUrl, secrets),
    );
  } finally {
    await scratch.stop();
  }
}

console.log(report(runs, runConditions(started, loadAtStart)));
