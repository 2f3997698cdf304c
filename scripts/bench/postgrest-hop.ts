/**
 * What a decision would pay if the functions reached Postgres through PostgREST (supabase-js's
 * `rpc`) instead of postgres.js (docs/decisions.md, D-431): the same statement run directly over
 * the Postgres wire protocol, and through one HTTP server in front of the same connection, as
 * PostgREST stands between a client and the database. The statement is `select 1`, so the figure is
 * the hop alone, not the decision.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx scripts/bench/postgrest-hop.ts [--rounds 500]
 */
import http from "node:http";
import { performance } from "node:perf_hooks";
import postgres from "postgres";
import { flag } from "./common";

const rounds = flag("rounds", 500);
const sql = postgres(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", { max: 1, prepare: false });

async function timed(run: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Math.round(samples[Math.floor(samples.length * q)] * 1000) / 1000;
  return { median: at(0.5), p95: at(0.95) };
}

const direct = await timed(() => sql`select 1`);
const server = http
  .createServer(async (_request, response) => {
    await sql`select 1`;
    response.end("[1]");
  })
  .listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const { port } = server.address() as { port: number };
const throughHttp = await timed(async () => (await fetch(`http://127.0.0.1:${port}/rpc/decide`, { method: "POST", body: "{}" })).text());
console.log(JSON.stringify({ rounds, direct_ms: direct, through_http_ms: throughHttp }));
server.close();
await sql.end();
