import { connect } from "../shared/db";
import { databaseUrlFromEnv } from "./lib/embedded-db";
import { applyMigrations } from "./lib/migrate";

const sql = connect(databaseUrlFromEnv(), { pooled: true });
try {
  const applied = await applyMigrations(sql);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "up to date");
} catch (error) {
  console.error(`migration failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await sql.end();
}
