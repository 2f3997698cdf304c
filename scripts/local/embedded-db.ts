import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pgcrypto } from "@electric-sql/pglite/contrib/pgcrypto";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { connect } from "../../shared/kernel/db/client";

export const DEFAULT_EMBEDDED_PORT = 54322;

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Embedded PostgreSQL (PGlite with pgvector and pgcrypto), persisted under `dataDir` and served over the
 * Postgres wire protocol with pglite-socket's multiplexer, so workerd, the CLI and the tests all
 * reach it through the same postgres.js code path as a real server.
 */
export async function startEmbeddedDatabase({
  dataDir = join(process.cwd(), ".data", "pglite"),
  port = DEFAULT_EMBEDDED_PORT,
  host = "127.0.0.1",
}: {
  dataDir?: string;
  port?: number;
  host?: string;
} = {}): Promise<EmbeddedDatabase> {
  if (!dataDir.startsWith("memory://")) await mkdir(dataDir, { recursive: true });
  // pgcrypto seals the face templates (D-680); the migration creates it, PGlite needs its module loaded.
  const db = await PGlite.create(dataDir, { extensions: { vector, pgcrypto } });
  await db.exec("create extension if not exists vector");
  const server = new PGLiteSocketServer({ db: holdExtendedQueryCycles(db), port, host, maxConnections: 512 });
  await server.start();
  const address = server.getServerConn?.() ?? `${host}:${port}`;
  return {
    url: `postgres://postgres@${address}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/**
 * PGlite has no autovacuum, so nothing would ever ANALYZE it, and without statistics the planner
 * never chooses the HNSW index for 1:N face search. This analyses now and then every
 * `intervalMs`, through the wire protocol like any other client (so the multiplexer orders it).
 */
export function keepStatisticsFresh(url: string, intervalMs = 10 * 60_000): { stop(): Promise<void> } {
  const sql = connect(url);
  const analyse = () => sql`analyze`.catch(() => undefined);
  const timer = setInterval(analyse, intervalMs);
  timer.unref();
  const first = analyse();
  return {
    async stop() {
      clearInterval(timer);
      await first;
      await sql.end({ timeout: 1 });
    },
  };
}

const EXTENDED_QUERY_MESSAGES = new Set("PBDECH".split("").map((c) => c.charCodeAt(0)));
const SYNC = "S".charCodeAt(0);

/**
 * The multiplexer queues each wire message on its own and, outside an explicit transaction, runs
 * them first come first served across connections. One PGlite session has one unnamed statement
 * and portal, so a Parse/Bind/Execute cycle of one connection interleaved with another's runs the
 * wrong statement with the wrong parameters. Reporting a cycle in progress (from its first
 * extended-query message to its Sync) as "in a transaction" keeps each cycle on one connection.
 */
function holdExtendedQueryCycles(db: PGlite): PGlite {
  let cycleOpen = false;
  return new Proxy(db, {
    get(target, property) {
      if (property === "isInTransaction") return () => cycleOpen || target.isInTransaction();
      if (property === "execProtocolRawStream") {
        return async (message: Uint8Array, options: Parameters<PGlite["execProtocolRawStream"]>[1]) => {
          if (EXTENDED_QUERY_MESSAGES.has(message[0])) cycleOpen = true;
          else if (message[0] === SYNC) cycleOpen = false;
          return target.execProtocolRawStream(message, options);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * DATABASE_URL when it names a database; an empty one counts as unset (`DATABASE_URL= npm start`
 * means the embedded default, never postgres.js's own defaults).
 */
export function configuredDatabaseUrl(env: Record<string, string | undefined> = process.env): string | undefined {
  return env.DATABASE_URL || undefined;
}

/** The URL the CLI and other processes use: DATABASE_URL, else the running embedded database. */
export function databaseUrlFromEnv(env: Record<string, string | undefined> = process.env): string {
  return configuredDatabaseUrl(env) ?? `postgres://postgres@127.0.0.1:${env.PGPORT_EMBEDDED ?? DEFAULT_EMBEDDED_PORT}/postgres`;
}
