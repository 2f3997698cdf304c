import type { Context } from "hono";
import { connect } from "../kernel/db/client";
import type { AppEnv } from "./app";
import type { CronPass } from "./cron";

/**
 * Runs `pass` after the answer has gone out, in the request's `waitUntil`: the quick webhook pass
 * a request whose change wrote events a merchant waits for starts here (shared/webhooks/run.ts
 * `deliverSoon`, D-660), the one place every surface triggers it. The pass has the shape of a cron
 * worker's, at the request's clock (the controlled clock in tests), on a database client of its
 * own: the request's clients are closed when the answer is done. It never fails the request: an
 * error is logged as a cron pass's is, and the cron does the work at its next tick. Outside a
 * Worker (no execution context) nothing runs.
 *
 * @example afterAnswer(c, "webhooks", deliverSoon([{ merchant_id: c.var.principal.merchantId, environment: c.var.principal.environment }]));
 */
export function afterAnswer<E extends AppEnv>(c: Context<E>, name: string, pass: CronPass): void {
  let waitUntil: (promise: Promise<unknown>) => void;
  try {
    const context = c.executionCtx;
    waitUntil = (promise) => context.waitUntil(promise);
  } catch {
    return;
  }
  const { config, now, requestId } = c.var as AppEnv["Variables"];
  const run = async () => {
    const sql = connect(config.DATABASE_URL);
    const startedAt = Date.now();
    try {
      const summary = await pass(sql, config, now);
      if (summary) console.log(JSON.stringify({ after: name, request_id: requestId, ms: Date.now() - startedAt, ...summary }));
    } catch (error) {
      console.error(JSON.stringify({ after: name, request_id: requestId, error: String((error as Error)?.stack ?? error) }));
    } finally {
      await sql.end({ timeout: 1 });
    }
  };
  waitUntil(run());
}
