/**
 * `npm run db:migrate`: applies supabase/migrations to DATABASE_URL, else to the embedded database.
 * When the embedded one is not running (nothing listens on PGPORT_EMBEDDED), it is started for the
 * duration of the migration on its data directory (PGLITE_DATA_DIR, default .data/pglite) and stopped.
 */
import { connect as netConnect } from "node:net";
import { connect } from "../shared/kernel/db/client";
import {
  configuredDatabaseUrl,
  DEFAULT_EMBEDDED_PORT,
  databaseUrlFromEnv,
  type EmbeddedDatabase,
  startEmbeddedDatabase,
} from "./local/embedded-db";
import { applyMigrations } from "./local/migrations";

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

let embedded: EmbeddedDatabase | null = null;
if (!configuredDatabaseUrl()) {
  const port = Number(process.env.PGPORT_EMBEDDED ?? DEFAULT_EMBEDDED_PORT);
  if (!(await listening(port))) embedded = await startEmbeddedDatabase({ dataDir: process.env.PGLITE_DATA_DIR, port });
}

const sql = connect(embedded?.url ?? databaseUrlFromEnv(), { pooled: true });
try {
  const applied = await applyMigrations(sql);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "up to date");
} catch (error) {
  console.error(`migration failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await sql.end();
  await embedded?.stop();
}
