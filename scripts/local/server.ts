import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { Miniflare, type Request, Response, type WorkerOptions } from "miniflare";
import { bindingNames } from "../../shared/kernel/config";
import { connect } from "../../shared/kernel/db/client";
import { cronsOf, type FunctionName, functionNames, hasAssets, mountOf } from "../../shared/kernel/registry";
import { assetsRootOf, buildAll } from "./build";
import { startClientAddressFront } from "./client-address";
import { configuredDatabaseUrl, keepStatisticsFresh, startEmbeddedDatabase } from "./embedded-db";
import { DIST_DIR } from "./functions";
import { applyMigrations } from "./migrations";
import { startPooler } from "./pooler";
import { startRateLimitServer } from "./rate-limit-server";
import { localSecrets } from "./secrets";

const COMPATIBILITY_DATE = "2026-04-01";
/** As wrangler.toml: `global_fetch_strictly_public` is also what lets the MCP server resolve client metadata documents. */
const COMPATIBILITY_FLAGS = ["nodejs_compat", "global_fetch_strictly_public"];
/** The OAuth discovery documents sit at the origin's root (RFC 8414, RFC 9728); the MCP worker serves them. */
const OAUTH_WELL_KNOWN_ROUTES = ["*/.well-known/oauth-authorization-server*", "*/.well-known/oauth-protected-resource*"];
/** The workers bound to the OAuth provider's KV namespace (wrangler.toml says the same for deployment). */
const OAUTH_WORKERS: ReadonlySet<string> = new Set(["mcp", "agent-verification-request"]);

interface ServerOptions {
  port?: number;
  host?: string;
  /** Environment the bindings are read from (process.env by default). */
  env?: Record<string, string | undefined>;
  log?: (line: string) => void;
  /** Run only these functions (default: every function under functions/). */
  functions?: string[];
  /**
   * Receives every invocation's trace from each cron worker, through a Tail Worker on it (as
   * `tail_consumers` deliver them when deployed): its event, outcome and console output. Tests
   * read a tick's result from it.
   */
  cronTail?: (worker: string, traces: CronTrace[]) => void;
  /**
   * Certificates (PEM) the workers' outbound TLS trusts besides the public CAs: tests serve
   * https on loopback under a test CA (tests/fixtures/tls/).
   */
  trustedCertificates?: string[];
  /**
   * Called once if workerd ends by itself (killed, crashed) rather than by `stop()`: without it
   * the service cannot answer, so `npm start` stops everything else too (scripts/dev.ts).
   */
  onRuntimeExit?: () => void;
  /** workerd's V8 inspector on this port (DevTools protocol: a CPU profile of a worker, bench:consume --cpu-profile), with source maps beside the bundles. */
  inspectorPort?: number;
  /**
   * These functions' workers also listen on a loopback socket of their own (`ownSocketUrls`): a
   * request there reaches the function's worker without Miniflare's entry worker, which routes every
   * request on the shared address and has no counterpart at the edge. For benchmarks that measure
   * what a deployed Worker spends.
   */
  ownSockets?: string[];
}

/** The parts of a Tail Worker's trace item that `cronTail` passes on. */
export interface CronTrace {
  event: { cron: string; scheduledTime: number } | null;
  /** "ok", or how the invocation ended ("exception", "exceededCpu" …). */
  outcome: string;
  logs: { level: string; message: unknown[]; timestamp: number }[];
  exceptions: { name: string; message: string; timestamp: number }[];
}

/** Miniflare routes of a function's Worker (scripts/local/router.ts answers every other path). */
function routesOf(name: string): string[] {
  const mount = mountOf(name);
  return mount === `/functions/v1/${name}` ? [`*${mount}*`] : [`*${mount}`, `*${mount}/*`];
}

/** Miniflare's own Internet (public and private addresses, the public CAs) trusting `certificates` too. */
function internetTrusting(certificates: string[]): WorkerOptions["outboundService"] {
  return {
    network: {
      allow: ["public", "private", "240.0.0.0/4"],
      deny: [],
      tlsOptions: { trustBrowserCas: true, trustedCertificates: certificates },
    },
  };
}

export interface RunningServer {
  url: string;
  /**
   * Miniflare's own address, behind the front: a request sent here must carry the CF-Connecting-IP
   * the front would set. For benchmarks that time the Worker without the local stand-in for the edge.
   */
  runtimeUrl: string;
  databaseUrl: string;
  /** The bindings every function worker received (secrets included): for test harnesses only. */
  bindings: Readonly<Record<string, string>>;
  miniflare: Miniflare;
  /** workerd's inspector port, when started with one. */
  inspectorPort?: number;
  /** Each function of `ownSockets` → its worker's own address (requests there must carry CF-Connecting-IP, as on `runtimeUrl`). */
  ownSocketUrls: Readonly<Record<string, string>>;
  /** Runs one cron tick of a scheduled worker now, as the minute timer does; `scheduledTime` sets the tick's clock (tests, benchmarks). */
  triggerCron(name: string, scheduledTime?: Date): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the service as it runs at the edge: the database (DATABASE_URL, or embedded PGlite),
 * migrations, one workerd worker per function from its own bundle, the router beside them (every
 * other path), a front on `host:port` that sets CF-Connecting-IP from the socket as the edge does
 * (client-address.ts), and a minute timer driving the cron triggers (not started when `env.CRON_TIMER` is
 * "0": tests trigger every tick themselves, at the time they choose). With DATABASE_URL the workers
 * reach it through a local transaction pooler (`DB_POOLER`, scripts/local/pooler.ts: a private
 * PgBouncer where one is installed, else none; `DB_POOLER_SIZE` backends), as they reach Postgres
 * through Hyperdrive or Supavisor when deployed; `DB_POOLER=0` connects them directly.
 * Migrations always use the direct URL. Without UPSTASH_REDIS_REST_URL the workers share one set of
 * rate-limit counters held by this process (LOCAL_RATE_LIMIT_URL, scripts/local/rate-limit-server.ts).
 */
export async function startServer({
  port = 8787,
  host = "127.0.0.1",
  env = process.env,
  log = () => {},
  functions,
  cronTail,
  trustedCertificates,
  onRuntimeExit,
  inspectorPort,
  ownSockets = [],
}: ServerOptions = {}): Promise<RunningServer> {
  const configuredUrl = configuredDatabaseUrl(env);
  const embedded = configuredUrl
    ? null
    : await startEmbeddedDatabase({
        dataDir: env.PGLITE_DATA_DIR,
        port: env.PGPORT_EMBEDDED ? Number(env.PGPORT_EMBEDDED) : undefined,
      });
  const databaseUrl = configuredUrl ?? embedded!.url;
  const sql = connect(databaseUrl, { pooled: true });
  try {
    const applied = await applyMigrations(sql);
    if (applied.length) log(`applied migrations: ${applied.join(", ")}`);
  } finally {
    await sql.end();
  }
  const statistics = embedded ? keepStatisticsFresh(databaseUrl) : null;
  const pooler = configuredUrl ? await startPooler(configuredUrl, env, log) : null;

  const outDir = join(DIST_DIR, "run", `${process.pid}-${port}`);
  const bundles = await buildAll(functions, outDir, { sourcemaps: inspectorPort !== undefined });
  const ephemeral = embedded && env.PGLITE_DATA_DIR?.startsWith("memory://");
  const secretsFile = ephemeral ? undefined : join(process.cwd(), ".data", "secrets.json");
  const merged: Record<string, string | undefined> = { ...env, ...localSecrets(env, secretsFile) };
  const bindings: Record<string, string> = {};
  for (const name of bindingNames) if (merged[name] !== undefined) bindings[name] = merged[name]!;
  bindings.DATABASE_URL = pooler?.url ?? databaseUrl;
  // Without Upstash, every worker counts rate limits in this process (scripts/local/rate-limit-server.ts).
  const rateLimits =
    bindings.UPSTASH_REDIS_REST_URL || bindings.LOCAL_RATE_LIMIT_URL ? null : await startRateLimitServer({ host: "127.0.0.1" });
  if (rateLimits) bindings.LOCAL_RATE_LIMIT_URL = rateLimits.url;

  const tailed = cronTail ? bundles.filter((b) => cronsOf(b.name as FunctionName).length > 0).map((b) => b.name) : [];
  const workers: WorkerOptions[] = [
    {
      name: "router",
      modules: [{ type: "ESModule", path: join(outDir, "router.js") }],
      compatibilityDate: COMPATIBILITY_DATE,
    },
    ...bundles.map(
      (b): WorkerOptions => ({
        name: b.name,
        // The bundle is named as the one module it is: given only its path, Miniflare would parse
        // every bundle with acorn to find its imports, about 20 s of CPU for all of them at each start.
        modules: [{ type: "ESModule", path: b.path }],
        modulesRoot: dirname(b.path),
        compatibilityDate: COMPATIBILITY_DATE,
        compatibilityFlags: COMPATIBILITY_FLAGS,
        bindings,
        ...(trustedCertificates ? { outboundService: internetTrusting(trustedCertificates) } : {}),
        // Miniflare's entry hands a request straight to the function's worker, as the edge routes it to
        // the function's own Worker: no extra worker hop. A longer name sharing the prefix falls
        // through to the function, whose app answers it FUNCTION_NOT_FOUND (createFunctionApp). A
        // Worker with its own mount (the resource API at /v1) takes that path and everything under it.
        routes: [...routesOf(b.name), ...(b.name === "mcp" ? OAUTH_WELL_KNOWN_ROUTES : [])],
        // The MCP server's OAuth grants and tokens (hashed) live in Workers KV, in memory locally;
        // agent-verification-request reads them too (it accepts an agent's bearer, spec 5 rule 4).
        ...(OAUTH_WORKERS.has(b.name) ? { kvNamespaces: ["OAUTH_KV"] } : {}),
        ...(tailed.includes(b.name) ? { tails: [`${b.name}-tail`] } : {}),
        ...(ownSockets.includes(b.name) ? { unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] } : {}),
        // Static assets reach the function only through its ASSETS binding (run_worker_first), as deployed.
        // Miniflare backs every Worker's assets with one storage directory, so each binding gets the
        // root of all functions' folders, and a function fetches its files below its own (assets.ts).
        ...(hasAssets(b.name as FunctionName)
          ? {
              assets: {
                directory: assetsRootOf(outDir),
                binding: "ASSETS",
                routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
              },
            }
          : {}),
      }),
    ),
    ...tailed.map(
      (name): WorkerOptions => ({
        name: `${name}-tail`,
        modules: true,
        script: `export default { tail: (traces, env) => env.REPORT.fetch("http://tail/", { method: "POST", body: JSON.stringify(traces) }) };`,
        compatibilityDate: COMPATIBILITY_DATE,
        serviceBindings: {
          REPORT: async (request: Request) => {
            cronTail!(name, (await request.json()) as CronTrace[]);
            return new Response(null, { status: 204 });
          },
        },
      }),
    ),
  ];
  let stopping = false;
  // Miniflare listens privately; the front on host:port sets CF-Connecting-IP from the socket (client-address.ts).
  const miniflare = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
    workers,
    // Miniflare's own output handling (each line to the console, stderr in red), plus the one signal
    // it has no event for: workerd's output ending means workerd itself ended.
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      createInterface(stdout).on("line", (line) => console.log(line));
      createInterface(stderr).on("line", (line) => console.error(line));
      stdout.once("end", () => {
        if (!stopping) onRuntimeExit?.();
      });
    },
  });
  const stopBeforeReady = async (error: unknown): Promise<never> => {
    stopping = true;
    await miniflare.dispose().catch(() => undefined);
    await pooler?.stop();
    await rateLimits?.stop();
    throw error;
  };
  const runtimeUrl = await miniflare.ready.catch(stopBeforeReady);
  const front = await startClientAddressFront({ host, port, target: runtimeUrl.toString() }).catch(stopBeforeReady);
  const url = front.url;
  const ownSocketUrls: Record<string, string> = {};
  for (const name of ownSockets) ownSocketUrls[name] = (await miniflare.unsafeGetDirectURL(name)).origin;

  const triggerCron = async (name: string, scheduledTime?: Date) => {
    const worker = (await miniflare.getWorker(name)) as unknown as {
      scheduled(options: { cron: string; scheduledTime?: Date }): Promise<unknown>;
    };
    for (const cron of cronsOf(name as FunctionName)) await worker.scheduled({ cron, ...(scheduledTime ? { scheduledTime } : {}) });
  };
  const timers = functionNames
    .filter((name) => cronsOf(name).length > 0 && env.CRON_TIMER !== "0" && bundles.some((b) => b.name === name))
    .map((name) => setInterval(() => triggerCron(name).catch((error) => log(`cron ${name} failed: ${error}`)), 60_000));

  return {
    url,
    runtimeUrl: runtimeUrl.toString().replace(/\/$/, ""),
    ownSocketUrls,
    databaseUrl,
    bindings,
    miniflare,
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
    triggerCron,
    async stop() {
      stopping = true;
      timers.forEach(clearInterval);
      await front.stop();
      await miniflare.dispose();
      await pooler?.stop();
      await rateLimits?.stop();
      await statistics?.stop();
      await embedded?.stop();
      await rm(outDir, { recursive: true, force: true });
    },
  };
}
