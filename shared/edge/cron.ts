import { type Bindings, type Config, readConfig } from "../kernel/config";
import { connect, type Sql } from "../kernel/db/client";
import { errorResponse } from "../kernel/errors";

/** One pass of a cron worker at the tick's time; a summary to log, or null when there was nothing to do. */
export type CronPass = (sql: Sql, config: Config, at: Date) => Promise<Record<string, unknown> | null>;

/** The parts of workerd's ScheduledController and ExecutionContext a cron worker uses. */
interface ScheduledEvent {
  scheduledTime: number;
  cron: string;
}
interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * A worker driven by a cron trigger (scripts/local/functions.ts#cronSchedules). Each tick runs one
 * pass at the tick's scheduled time, logs its summary, and throws on failure so the platform
 * records a failed run. It serves no HTTP: every request, whatever its method or path, answers as
 * if no function of this name existed (404 FUNCTION_NOT_FOUND). Tests run its ticks through Miniflare's scheduled-event API at
 * a time they choose, as the platform's cron does.
 *
 * @example export default cronWorker("receipt-anchor", (sql, _config, at) => anchorPendingReceipts(sql, sink, at));
 */
export function cronWorker(name: string, pass: CronPass) {
  async function scheduled(event: ScheduledEvent, env: Bindings, _ctx: WaitUntil): Promise<void> {
    const config = readConfig(env);
    const sql = connect(config.DATABASE_URL);
    const startedAt = Date.now();
    try {
      const summary = await pass(sql, config, new Date(event.scheduledTime));
      if (summary) console.log(JSON.stringify({ function: name, cron: event.cron, ms: Date.now() - startedAt, ...summary }));
    } catch (error) {
      console.error(JSON.stringify({ function: name, cron: event.cron, error: String((error as Error)?.stack ?? error) }));
      throw error;
    } finally {
      await sql.end({ timeout: 1 });
    }
  }

  return { fetch: answerAsUnknown, scheduled };
}

/**
 * Every HTTP request, a CORS preflight included, answered exactly as a name that is no function is
 * (scripts/local/router.ts): nothing says a worker of this name exists. The body is read first:
 * workerd drops the client's connection when a response goes out before it (see app.ts).
 */
async function answerAsUnknown(request: Request): Promise<Response> {
  if (request.body && !request.bodyUsed) await request.arrayBuffer().catch(() => undefined);
  return errorResponse("FUNCTION_NOT_FOUND");
}
