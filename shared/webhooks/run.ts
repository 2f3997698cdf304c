/**
 * One pass of the outbox worker (docs/webhooks.md#delivery): repeat until nothing is due or the
 * time budget is spent — fan new outbox events out into deliveries, claim a batch of due
 * deliveries under a lease, send them in parallel (six at once, three per endpoint), record each
 * result with the claim's lease token.
 *
 * The lease covers the whole pass: it lasts the remaining budget plus one send timeout plus a
 * margin, and no send starts after the budget, so every send ends while its claim is still held.
 * Another pass can therefore only take a delivery over after this one is gone (crashed or killed);
 * it then sends the same event id again as the next attempt, and any late result of the dead pass
 * is refused for its stale token.
 */
import type { Sql } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type { Tenant } from "../kernel/principal";
import { sendWebhook } from "./deliver";
import { checkEndpointUrl } from "./endpoints";
import type { WebhookEnvelope } from "./events";
import { runPooled } from "./pool";
import { nextAttemptAt } from "./retry";
import type { DeliveryScope } from "./rpc";
import { openEndpointSecret } from "./secret-box";

/** Sends in flight at once: Workers queue a seventh outgoing connection, and the queueing would count against the timeout. */
export const DELIVERY_CONCURRENCY = 6;
/** Sends in flight at once to one endpoint. */
export const ENDPOINT_CONCURRENCY = 3;
/** No send starts later than this after the pass began. */
const RUN_BUDGET_MS = 45_000;
/**
 * No send of a quick pass starts later than this after it began: it runs in the waitUntil of the
 * request that wrote the events, which Workers end 30 s after the answer, so the budget plus one
 * send's timeout (15 s at most) stays well inside that.
 */
export const QUICK_PASS_BUDGET_MS = 5_000;
/** The most merchants one quick pass works for (the RPCs' limit); the cron delivers anything beyond. */
const QUICK_PASS_SCOPE = 100;
const CLAIM_BATCH = 500;
const FANOUT_BATCH = 2000;
const LEASE_MARGIN_MS = 15_000;
const RECORD_CHUNK = 100;

export interface RunOptions {
  /** The pass's clock: the cron tick's scheduled time, advancing with real time. */
  clock: () => Date;
  /** WEBHOOK_SECRET_KEY, then WEBHOOK_SECRET_KEY_PREVIOUS when set: the keys that open the endpoints' secrets. */
  keyring: string[];
  timeoutMs: number;
  allowLoopbackHttp: boolean;
  budgetMs?: number;
  /** Only these merchants' events and deliveries (a quick pass); unset, everyone's (the cron). */
  scope?: DeliveryScope[];
  batchSize?: number;
  concurrency?: number;
  perEndpoint?: number;
  fetcher?: typeof fetch;
  random?: () => number;
}

export interface RunSummary {
  fanned_out_events: number;
  deliveries_created: number;
  claimed: number;
  succeeded: number;
  retried: number;
  failed: number;
  released: number;
  /** Results refused because the claim had meanwhile been taken over (this pass outlived its lease). */
  stale: number;
  endpoints_disabled: number;
  batches: number;
  /**
   * What went wrong that the operator must fix, once per endpoint and cause: a signing secret that
   * does not open (the pass stops: it would only repeat), a URL the deployment's policy refuses
   * (loopback http without WEBHOOK_ALLOW_LOOPBACK_HTTP=1: those deliveries fail, the pass goes on),
   * an unexpected failure.
   */
  errors: string[];
  ms: number;
}

interface ClaimedDelivery {
  delivery_id: string;
  lease_token: string;
  attempt: number;
  window_start: string;
  endpoint_id: string;
  event: Omit<WebhookEnvelope, "attempt">;
}

interface ClaimedEndpoint {
  endpoint_id: string;
  url: string;
  sealed_secrets: string[];
}

/** What the delivery log keeps of a sent attempt besides its status: how long it took and what the receiver said. */
interface AttemptTrace {
  latency_ms?: number;
  response_excerpt?: string | null;
}

type Outcome =
  | ({ outcome: "succeeded" | "failed"; status: number | null; error: string | null; attempted_at: string; gone?: boolean } & AttemptTrace)
  | ({ outcome: "retry"; status: number | null; error: string | null; attempted_at: string; next_attempt_at: string } & AttemptTrace)
  | { outcome: "released" };

type RecordedResult = Outcome & { delivery_id: string; lease_token: string };

/**
 * The pass's clock: `start` (the cron tick's scheduled time, or a test's chosen time) advancing with
 * the real time elapsed since the call.
 */
export function passClock(start: Date): () => Date {
  const offset = start.getTime() - Date.now();
  return () => new Date(Date.now() + offset);
}

/** The part of a worker's configuration a pass reads. */
interface PassConfig {
  WEBHOOK_QUICK_PASS?: "0" | "1";
  WEBHOOK_SECRET_KEY?: string;
  WEBHOOK_SECRET_KEY_PREVIOUS?: string;
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_ALLOW_LOOPBACK_HTTP: "0" | "1";
}

/** The options a pass takes from the worker's configuration. */
export function passOptions(config: PassConfig, clock: () => Date): RunOptions {
  if (!config.WEBHOOK_SECRET_KEY) throw new Error("missing secret binding WEBHOOK_SECRET_KEY");
  return {
    clock,
    keyring: config.WEBHOOK_SECRET_KEY_PREVIOUS
      ? [config.WEBHOOK_SECRET_KEY, config.WEBHOOK_SECRET_KEY_PREVIOUS]
      : [config.WEBHOOK_SECRET_KEY],
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowLoopbackHttp: config.WEBHOOK_ALLOW_LOOPBACK_HTTP === "1",
  };
}

/**
 * The quick pass a request whose change wrote events a merchant waits for (a revocation, a hosted
 * session's end, a test event, a replay) starts after its answer, in its own Worker's waitUntil
 * (shared/edge/after-answer.ts; D-660): a pass of the same worker code, at the request's clock, for
 * these merchants only and for QUICK_PASS_BUDGET_MS, claiming under the same lease as the cron, so
 * the two never send one delivery twice. The cron stays the guarantee: retries, and whatever a quick
 * pass missed (it failed, or the Worker was gone). Does nothing when this Worker has no
 * WEBHOOK_SECRET_KEY or WEBHOOK_QUICK_PASS is "0": the cron delivers within the minute. Its
 * summary, or null when idle.
 *
 * @example afterAnswer(c, "webhooks", deliverSoon(c.var.principal)); // the caller's merchant and environment
 */
export function deliverSoon(scope: DeliveryScope[] | Tenant | ((sql: Sql) => Promise<DeliveryScope[]>)) {
  return async (sql: Sql, config: PassConfig, at: Date): Promise<Record<string, unknown> | null> => {
    if (!config.WEBHOOK_SECRET_KEY || config.WEBHOOK_QUICK_PASS === "0") return null;
    // a scope to look up (the merchants that hold a person) is read here, after the answer
    const entries =
      typeof scope === "function"
        ? await scope(sql)
        : Array.isArray(scope)
          ? scope
          : [{ merchant_id: scope.merchantId, environment: scope.environment }];
    const merchants = [...new Map(entries.map((entry) => [`${entry.merchant_id}/${entry.environment ?? ""}`, entry])).values()];
    if (merchants.length === 0) return null;
    const summary = await runOutbox(sql, {
      ...passOptions(config, passClock(at)),
      budgetMs: QUICK_PASS_BUDGET_MS,
      scope: merchants.slice(0, QUICK_PASS_SCOPE),
    });
    const busy = summary.claimed || summary.fanned_out_events || summary.errors.length;
    return busy ? { quick_pass: merchants.length, ...summary } : null;
  };
}

/**
 * Runs one pass and reports what it did.
 *
 * @example const summary = await runOutbox(sql, { clock, keyring: [secretKey], timeoutMs: 15_000, allowLoopbackHttp: false });
 */
export async function runOutbox(sql: Sql, options: RunOptions): Promise<RunSummary> {
  const { clock, timeoutMs, budgetMs = RUN_BUDGET_MS, batchSize = CLAIM_BATCH } = options;
  const startedAt = clock().getTime();
  const deadline = startedAt + budgetMs;
  const stop = () => clock().getTime() >= deadline;
  const summary: RunSummary = {
    fanned_out_events: 0,
    deliveries_created: 0,
    claimed: 0,
    succeeded: 0,
    retried: 0,
    failed: 0,
    released: 0,
    stale: 0,
    endpoints_disabled: 0,
    batches: 0,
    errors: [],
    ms: 0,
  };

  while (!stop()) {
    const fanned = await rpc(sql, "webhook_fanout", {
      now: clock().toISOString(),
      limit: FANOUT_BATCH,
      scope: options.scope,
    });
    summary.fanned_out_events += fanned.events;
    summary.deliveries_created += fanned.deliveries;
    const leaseSeconds = Math.ceil((deadline - clock().getTime() + timeoutMs + LEASE_MARGIN_MS) / 1000);
    const claim = await rpc(sql, "webhook_deliveries_claim", {
      now: clock().toISOString(),
      limit: batchSize,
      lease_seconds: leaseSeconds,
      scope: options.scope,
    });
    if (claim.deliveries.length === 0) {
      if (fanned.events < FANOUT_BATCH) break;
      continue;
    }
    summary.batches += 1;
    summary.claimed += claim.deliveries.length;
    const halted = await deliverBatch(sql, claim, options, stop, summary);
    // a configuration problem (a secret that does not open) would only repeat on the next batch
    if (halted) break;
  }
  summary.ms = clock().getTime() - startedAt;
  return summary;
}

async function deliverBatch(
  sql: Sql,
  claim: { deliveries: ClaimedDelivery[]; endpoints: ClaimedEndpoint[] },
  options: RunOptions,
  stop: () => boolean,
  summary: RunSummary,
): Promise<boolean> {
  let halted = false;
  const note = (message: string) => {
    if (!summary.errors.includes(message)) summary.errors.push(message);
  };
  const endpoints = new Map(claim.endpoints.map((endpoint) => [endpoint.endpoint_id, endpoint]));
  const secrets = new Map<string, Promise<string[]>>();
  const openSecrets = (endpoint: ClaimedEndpoint) => {
    let opened = secrets.get(endpoint.endpoint_id);
    if (!opened) {
      opened = Promise.all(endpoint.sealed_secrets.map((sealed) => openEndpointSecret(options.keyring, endpoint.endpoint_id, sealed)));
      secrets.set(endpoint.endpoint_id, opened);
    }
    return opened;
  };

  const pending: RecordedResult[] = [];
  let recording: Promise<void> = Promise.resolve();
  const flush = (all: boolean) => {
    if (pending.length === 0 || (!all && pending.length < RECORD_CHUNK)) return;
    const chunk = pending.splice(0);
    recording = recording.then(() => record(sql, chunk, options.clock, summary));
  };

  const attempt = async (delivery: ClaimedDelivery): Promise<Outcome> => {
    const endpoint = endpoints.get(delivery.endpoint_id)!;
    const refused = checkEndpointUrl(endpoint.url, options);
    if (refused) {
      note(`endpoint ${endpoint.endpoint_id}: not sent, its URL is refused by this deployment: ${refused}`);
      return { outcome: "failed", status: null, error: `url not allowed: ${refused}`, attempted_at: options.clock().toISOString() };
    }
    let keys: string[];
    try {
      keys = await openSecrets(endpoint);
      if (keys.length === 0) throw new Error("no valid secret");
    } catch (error) {
      const message = `endpoint ${endpoint.endpoint_id}: cannot open its signing secret (${(error as Error).message}); check WEBHOOK_SECRET_KEY (and WEBHOOK_SECRET_KEY_PREVIOUS during a key rotation)`;
      note(message);
      halted = true;
      return { outcome: "released" };
    }
    const { id, type, created_at, api_version, data } = delivery.event;
    const envelope: WebhookEnvelope = { id, type, created_at, api_version, attempt: delivery.attempt, data };
    const result = await sendWebhook(endpoint.url, envelope, keys, {
      clock: options.clock,
      timeoutMs: options.timeoutMs,
      fetcher: options.fetcher,
    });
    const attempted_at = result.sentAt.toISOString();
    const trace: AttemptTrace = {
      latency_ms: Math.max(0, result.finishedAt.getTime() - result.sentAt.getTime()),
      response_excerpt: result.excerpt,
    };
    if (result.ok) return { outcome: "succeeded", status: result.status, error: null, attempted_at, ...trace };
    const next = result.gone
      ? null
      : nextAttemptAt({
          attempt: delivery.attempt,
          windowStart: new Date(delivery.window_start),
          failedAt: result.finishedAt,
          retryAfter: result.retryAfter,
          random: options.random,
        });
    if (!next) return { outcome: "failed", status: result.status, error: result.error, attempted_at, gone: result.gone, ...trace };
    return { outcome: "retry", status: result.status, error: result.error, attempted_at, next_attempt_at: next.toISOString(), ...trace };
  };

  const unstarted = await runPooled(
    claim.deliveries,
    (delivery) => delivery.endpoint_id,
    async (delivery) => {
      const outcome = await attempt(delivery).catch((error): Outcome => {
        summary.errors.push(`delivery ${delivery.delivery_id}: ${String((error as Error)?.message ?? error)}`);
        halted = true;
        return { outcome: "released" };
      });
      pending.push({ ...outcome, delivery_id: delivery.delivery_id, lease_token: delivery.lease_token });
      flush(false);
    },
    { total: options.concurrency ?? DELIVERY_CONCURRENCY, perKey: options.perEndpoint ?? ENDPOINT_CONCURRENCY, stop },
  );
  for (const delivery of unstarted)
    pending.push({ outcome: "released", delivery_id: delivery.delivery_id, lease_token: delivery.lease_token });
  flush(true);
  await recording;
  return halted;
}

async function record(sql: Sql, results: RecordedResult[], clock: () => Date, summary: RunSummary): Promise<void> {
  const recorded = await rpc(sql, "webhook_deliveries_record", {
    now: clock().toISOString(),
    results,
  });
  for (const result of results) {
    if (result.outcome === "succeeded") summary.succeeded += 1;
    else if (result.outcome === "retry") summary.retried += 1;
    else if (result.outcome === "failed") summary.failed += 1;
    else summary.released += 1;
  }
  summary.stale += recorded.stale;
  summary.endpoints_disabled += recorded.endpoints_disabled;
}
