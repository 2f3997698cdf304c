import postgres from "postgres";
import { ApiError, type ErrorCode } from "../errors";
import { type OpenSocket, WireClient, workerdSocket } from "./wire";

export type Sql = postgres.Sql;
/** One transaction of a client (or a savepoint in it): statements, and savepoints of its own. */
export type Transaction = postgres.TransactionSql;
/**
 * What a request's operations run on: one statement at a time (`unsafe`), a transaction (`begin`),
 * and `end`. A postgres.js client is one; in a Worker it is requestDatabase's.
 */
export interface Database extends Queryable {
  begin: Sql["begin"];
  end(options?: { timeout?: number }): Promise<void>;
}
/** What statements run on: a client, or one of its transactions (which has no begin or end of its own). */
export type Statements = Database | Transaction;

/**
 * Custom SQLSTATEs raised by the RPCs in supabase/migrations, each mapped to exactly one API error code.
 * Class `HA` is ours; the number is stable once published.
 */
const sqlStateCodes: Record<string, ErrorCode> = {
  HA001: "ALIAS_TAKEN",
  HA002: "CLAIM_TOKEN_INVALID",
  HA401: "INVALID_API_KEY",
  HA402: "NONCE_REUSED",
  HA404: "not_found",
  HA408: "SESSION_PRESENT",
  HA409: "IDENTITY_UNREACHABLE",
  HA410: "ENROLLMENT_RACE",
  HA411: "CAPTURE_REPLAYED",
  HA412: "IDEMPOTENCY_IN_FLIGHT",
  HA422: "IDEMPOTENCY_KEY_REUSED",
  HA430: "PROOF_INVALID",
  HA431: "DOCUMENT_REQUIRED",
  HA432: "STEP_UP_OF_INVALID",
  HA440: "ALLOWANCE_EXHAUSTED",
  HA441: "ALREADY_CLAIMED",
  // Its detail names the reason, document_already_bound (D-427).
  HA438: "DOCUMENT_REQUIRED",
  HA445: "ATTESTATION_INVALID",
  HA446: "CONSENT_MISSING",
  HA450: "KEY_INACTIVE",
  HA451: "ENDPOINT_DISABLED",
  HA452: "LAST_OWNER",
  HA453: "ALREADY_OWNER",
  HA454: "THEME_DRAFT_CHANGED",
  HA442: "CONSENT_REVOKED",
  HA443: "AUDIT_ID_REUSED",
  HA444: "CONSENT_EXPIRED",
  HA501: "IDENTITY_CREATE_FAILED",
  HA502: "TEMPLATE_STORE_FAILED",
  HA503: "SESSION_MINT_FAILED",
  HA601: "WEBHOOK_ENDPOINT_LIMIT",
  HA701: "SESSION_ALREADY_CONSUMED",
  HA702: "SESSION_EXPIRED",
  HA703: "SESSION_ENDED",
  HA704: "COMPLETION_IN_PROGRESS",
  HA705: "SCREEN_TOKEN_INVALID",
  HA801: "NOT_MERCHANT_OWNER",
  HA802: "ACCESS_REVOKED",
  HA803: "HANDOFF_CODE_INVALID",
};

const unreachableErrors = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);

/**
 * Opens a postgres.js client. Workers open one connection per request (I/O cannot cross requests
 * in workerd; Hyperdrive or a transaction pooler does the pooling in production); Node processes pool.
 * Prepared statements stay off so transaction poolers and the embedded multiplexer work unchanged.
 */
export function connect(url: string, { pooled = false }: { pooled?: boolean } = {}): Sql {
  return postgres(url, {
    max: pooled ? 10 : 1,
    prepare: false,
    fetch_types: false,
    connect_timeout: 5,
    idle_timeout: pooled ? 20 : 0,
    onnotice: () => {},
  });
}

/**
 * A Worker request's database (docs/decisions.md, D-505): statements on the wire client, one connection
 * opened by the first and closed by `end`; a transaction, which few requests need, opens a postgres.js
 * client of its own when `begin` is first called (so a request that runs one uses two connections).
 */
export function requestDatabase(url: string, open: OpenSocket = workerdSocket): Database {
  const wire = new WireClient(url, open);
  let transactions: Sql | null = null;
  const database: Database = {
    unsafe: (query, parameters) => wire.unsafe(query, parameters),
    begin: ((...args: Parameters<Sql["begin"]>) => {
      transactions ??= connect(url);
      return (transactions.begin as (...a: unknown[]) => unknown)(...args);
    }) as Sql["begin"],
    end: async (options) => {
      await Promise.all([wire.end(options), transactions?.end(options)]);
    },
  };
  return database;
}

/** Socket failures as workerd reports them (no error code, only a message). */
const SOCKET_FAILURE = /cannot connect|connection (refused|reset|closed)|network connection lost|socket/i;

/** True when the error means the database could not be reached, as opposed to a failed statement. */
function isUnreachable(error: unknown): boolean {
  const { code, name, message } = (error ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === "string" && (unreachableErrors.has(code) || code.startsWith("08") || ["57P01", "57P03", "53300"].includes(code)))
    return true;
  return name !== "PostgresError" && typeof message === "string" && SOCKET_FAILURE.test(message);
}

/** A client or a transaction: anything that can run one statement (with its parameters) and answer its rows. */
export interface Queryable {
  // biome-ignore lint/suspicious/noExplicitAny: parameters are serialised as the driver does, rows typed by the RPC catalogue (as postgres.js's Row).
  unsafe(query: string, parameters?: any[]): PromiseLike<readonly Record<string, any>[]>;
}

/**
 * Runs one statement, trying again while the server refuses the connection for lack of slots, and
 * maps the failure onto the error catalogue (databaseError).
 */
export async function withConnectionRetry<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if (attempt < CONNECT_ATTEMPTS && isConnectionSlotShortage(error)) {
        await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
        continue;
      }
      throw databaseError(error);
    }
  }
}

const CONNECT_ATTEMPTS = 12;

/**
 * The server refused the connection for lack of slots (53300) or while starting (57P03): the
 * statement never ran, so trying again is safe. Bursts wider than max_connections queue here
 * instead of failing.
 */
function isConnectionSlotShortage(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "53300" || code === "57P03";
}

function backoffMs(attempt: number): number {
  const ceiling = Math.min(1000, 20 * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * Retry-After of `503 DATABASE_UNAVAILABLE`: nothing says how long an outage lasts, so a short fixed
 * wait; a retry under the same Idempotency-Key is safe, since a request that committed has its answer stored.
 */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * A database failure as the error catalogue names it (a custom SQLSTATE's code, or
 * DATABASE_UNAVAILABLE); anything else unchanged. For errors that reach the edge without `rpc`,
 * such as the first failed statement a rolled-back savepoint rethrows. Anything unmapped stays a 500.
 */
export function databaseError(error: unknown): unknown {
  const state = (error as { code?: unknown })?.code;
  if (typeof state === "string" && state in sqlStateCodes) {
    const detail = (error as { detail?: string }).detail;
    return new ApiError(sqlStateCodes[state], detail ? safeJson(detail) : {});
  }
  if (isUnreachable(error)) return new ApiError("DATABASE_UNAVAILABLE", { retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS });
  return error;
}

function safeJson(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}
