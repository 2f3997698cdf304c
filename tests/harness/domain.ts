/**
 * What a domain test needs to call an operation directly, `operation(deps, tenant, body)`, against
 * the migrated database of tests/harness/domain-setup.ts: the deps at a chosen instant, tenants and
 * keys seeded in plain SQL, and the ApiError code an operation refuses with. Every seed uses fresh
 * random ids, so tests share the database (and run in parallel) without cleaning up; time is the
 * `now` each call passes, never the wall clock.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, inject } from "vitest";
import type { Credential } from "../../shared/kernel/authenticate";
import { connect, type Sql } from "../../shared/kernel/db/client";
import type { Deps } from "../../shared/kernel/deps";
import { ApiError, type ErrorCode } from "../../shared/kernel/errors";
import type { Locale } from "../../shared/kernel/i18n";
import type { Environment, Tenant } from "../../shared/kernel/principal";

let sql: Sql | undefined;

/** A pooled client on the domain project's database, closed after the file's tests. */
export function domainDb(): Sql {
  if (!sql) {
    sql = connect(inject("domainDatabaseUrl"), { pooled: true });
    const opened = sql;
    afterAll(() => opened.end({ timeout: 1 }));
  }
  return sql;
}

/** The deps of one call: the database, the request's instant and the caller's locale. */
export function depsAt(now: Date | string, locale: Locale = "en"): Deps {
  return { sql: domainDb(), now: new Date(now), locale };
}

/** `at` moved by `seconds` (negative for earlier). */
export function plusSeconds(at: Date | string, seconds: number): Date {
  return new Date(new Date(at).getTime() + seconds * 1000);
}

/** A fresh merchant, seeded in SQL, as the tenant of one environment. */
export async function seedTenant(environment: Environment = "test"): Promise<Tenant> {
  const merchantId = randomUUID();
  await domainDb().unsafe(`insert into private.merchants (id, name) values ($1, $2)`, [
    merchantId,
    `Domain merchant ${merchantId.slice(0, 8)}`,
  ]);
  return { merchantId, environment };
}

/** A live secret key of the tenant, as the edge presents it to an operation that authenticates itself. */
export async function seedSecretKey(tenant: Tenant): Promise<Credential> {
  const keyHash = randomBytes(32).toString("hex");
  await domainDb().unsafe(
    `insert into private.api_keys (merchant_id, environment, kind, key_hash, key_hint) values ($1, $2, 'secret', $3, 'sk_…seed')`,
    [tenant.merchantId, tenant.environment, keyHash],
  );
  return { keyHash, kind: "secret", environment: tenant.environment };
}

/** The ApiError `attempt` is refused with (the test fails when it succeeds or throws anything else). */
export async function refusal(attempt: Promise<unknown> | (() => unknown)): Promise<ApiError> {
  try {
    await (typeof attempt === "function" ? attempt() : attempt);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError, but the operation succeeded");
}

/** The code of the ApiError `attempt` is refused with. */
export async function refusedWith(attempt: Promise<unknown> | (() => unknown)): Promise<ErrorCode> {
  return (await refusal(attempt)).code;
}
