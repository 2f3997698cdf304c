/**
 * The outbox worker (cron, every minute; scripts/lib/functions.ts#cronSchedules): each tick runs one
 * pass of shared/webhooks/run.ts at the tick's scheduled time: fan new outbox events out into
 * deliveries, claim the due ones, send them signed, record the results (docs/webhooks.md).
 *
 * It serves no HTTP: every request is answered as if no function of this name existed. The one
 * exception exists only where TEST_CLOCK=1 (the test harness): POST /run runs one pass at the
 * request clock (`x-test-now`), optionally for one merchant, and answers the pass's summary.
 */
import * as v from "valibot";
import { createFunctionApp } from "../../shared/app";
import { readConfig, type Bindings } from "../../shared/config";
import { connect } from "../../shared/db";
import { ApiError } from "../../shared/errors";
import { validJson } from "../../shared/validation";
import { passClock, passOptions, runOutbox } from "../../shared/webhooks/run";

const app = createFunctionApp("outbox-worker");

const runSchema = v.object({ merchant_id: v.optional(v.pipe(v.string(), v.uuid())) });

app.post("/run", async (c) => {
  if (c.var.config.TEST_CLOCK !== "1") throw new ApiError("FUNCTION_NOT_FOUND");
  const { merchant_id } = await validJson(c, runSchema);
  return c.json(await runOutbox(c.var.db(), passOptions(c.var.config, passClock(c.var.now), merchant_id)));
});

app.all("*", () => {
  throw new ApiError("FUNCTION_NOT_FOUND");
});

/** The parts of workerd's ScheduledController and ExecutionContext this worker uses. */
interface ScheduledEvent {
  scheduledTime: number;
  cron: string;
}
interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** One pass at the tick's scheduled time. A failure is logged and thrown, so the platform records the failed run. */
async function scheduled(event: ScheduledEvent, env: Bindings, _ctx: WaitUntil): Promise<void> {
  const config = readConfig(env);
  const sql = connect(config.DATABASE_URL);
  try {
    const summary = await runOutbox(sql, passOptions(config, passClock(new Date(event.scheduledTime))));
    if (summary.claimed || summary.fanned_out_events || summary.errors.length) {
      console.log(JSON.stringify({ function: "outbox-worker", cron: event.cron, ...summary }));
    }
  } catch (error) {
    console.error(JSON.stringify({ function: "outbox-worker", cron: event.cron, error: String((error as Error)?.stack ?? error) }));
    throw error;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export default { fetch: app.fetch, scheduled };
