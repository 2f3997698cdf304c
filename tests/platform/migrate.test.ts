import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { childEnv, run } from "../harness/spawn";

const migrate = (env: Record<string, string | undefined>) => run("npx", ["tsx", "scripts/migrate.ts"], { env: childEnv(env) });

describe("db:migrate", () => {
  it("is a no-op when re-run on DATABASE_URL", { timeout: 60_000 }, async () => {
    // The global setup migrated the database under test; the first run applies at most what was
    // added since, the second finds nothing to do.
    const first = await migrate({ DATABASE_URL: inject("databaseUrl") });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toMatch(/^(up to date|applied: .+)$/);
    const second = await migrate({ DATABASE_URL: inject("databaseUrl") });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe("up to date");
  });

  it("fails with a message and a non-zero exit when DATABASE_URL cannot be reached", { timeout: 30_000 }, async () => {
    const { code, stdout, stderr } = await migrate({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` });
    expect(code).not.toBe(0);
    expect(stderr).toContain("migration failed");
    expect(stdout).toBe("");
  });

  describe("without DATABASE_URL", () => {
    let dataDir: string | undefined;
    afterAll(async () => {
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it("starts the embedded database for the migration, then a re-run is a no-op", { timeout: 90_000 }, async () => {
      dataDir = await mkdtemp(join(tmpdir(), "migrate-test-"));
      const env = { DATABASE_URL: undefined, PGLITE_DATA_DIR: dataDir, PGPORT_EMBEDDED: String(await freePort()) };
      const first = await migrate(env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^applied: .*_platform\.sql/);
      const second = await migrate(env);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout.trim()).toBe("up to date");
    });
  });
});
