import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export const DEFAULT_EMBEDDED_PORT = 54322;

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Embedded PostgreSQL (PGlite with pgvector), persisted under `dataDir` and served over the
 * Postgres wire protocol with pglite-socket's multiplexer, so workerd, the CLI and the tests all
 * reach it through the same postgres.js code path as a real server.
 */
export async function startEmbeddedDatabase({
  dataDir = join(process.cwd(), ".data", "pglite"),
  port = DEFAULT_EMBEDDED_PORT,
  host = "127.0.0.1",
}: { dataDir?: string; port?: number; host?: string } = {}): Promise<EmbeddedDatabase> {
  if (!dataDir.startsWith("memory://")) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir, { extensions: { vector } });
  await db.exec("create extension if not exists vector");
  const server = new PGLiteSocketServer({ db, port, host, maxConnections: 64 });
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

/** The URL the CLI and other processes use: DATABASE_URL, else the running embedded database. */
export function databaseUrlFromEnv(): string {
  return process.env.DATABASE_URL ?? `postgres://postgres@127.0.0.1:${process.env.PGPORT_EMBEDDED ?? DEFAULT_EMBEDDED_PORT}/postgres`;
}
