import type { TestProject } from "vitest/node";
import { type EmbeddedDatabase, startEmbeddedDatabase } from "../../scripts/local/embedded-db";
import { applyMigrations } from "../../scripts/local/migrations";
import { freePort } from "../../scripts/local/ports";
import { connect } from "../../shared/kernel/db/client";

declare module "vitest" {
  export interface ProvidedContext {
    /** The migrated database the domain tests run their operations on (tests/harness/domain.ts). */
    domainDatabaseUrl: string;
  }
}

let embedded: EmbeddedDatabase | undefined;

/**
 * The domain project's whole setup: a database, migrated by the runner everything uses. No service,
 * no workers: DATABASE_URL when set (CI: a fresh Postgres), else a fresh embedded PGlite in memory,
 * as tests/harness/global-setup.ts starts the service without one.
 */
export async function setup(project: TestProject) {
  let url = process.env.DATABASE_URL || undefined;
  if (!url) {
    embedded = await startEmbeddedDatabase({ dataDir: "memory://", port: await freePort() });
    url = embedded.url;
  }
  const sql = connect(url);
  try {
    await applyMigrations(sql);
  } finally {
    await sql.end();
  }
  project.provide("domainDatabaseUrl", url);
}

export async function teardown() {
  await embedded?.stop();
}
