import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");
export const FUNCTIONS_DIR = join(ROOT, "functions");
export const DIST_DIR = join(ROOT, "dist");

/** Cron schedules of the workers that have one (wrangler `--schedule` in deploy, a timer locally). */
export const cronSchedules: Record<string, string[]> = {
  "receipt-anchor": ["* * * * *"],
  "outbox-worker": ["* * * * *"],
};

/** Every implemented function: a folder under functions/ holding index.ts. */
export function functionNames(): string[] {
  return readdirSync(FUNCTIONS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(FUNCTIONS_DIR, entry.name, "index.ts")))
    .map((entry) => entry.name)
    .sort();
}

/** The binding names a function worker receives from the environment, when set. */
export const passedBindings = [
  "DATABASE_URL",
  "UPSTASH_REDIS_REST_URL",
  "UPSTASH_REDIS_REST_TOKEN",
  "LEGACY_API_KEY_HEADER",
  "TEST_CLOCK",
  "TEMPLATE_STORE_URL",
  "PUBLIC_BASE_URL",
  "THEME_ASSETS_BASE_URL",
  "DEPLOYMENT_ID",
  "SUBJECT_REF_SECRET",
  "TEMPLATE_PROTECTION_KEY",
  "SIGNING_KEYS_JWK",
  "SERVICE_ROLE_KEY",
  "WEBHOOK_SECRET_KEY",
  "WEBHOOK_SECRET_KEY_PREVIOUS",
  "WEBHOOK_ALLOW_LOOPBACK_HTTP",
  "WEBHOOK_TIMEOUT_MS",
] as const;
