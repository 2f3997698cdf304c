/**
 * The receipt anchoring worker (cron, every minute; scripts/lib/functions.ts#cronSchedules): each
 * tick anchors the live receipts issued so far (anchor.ts). It serves no HTTP: every request is
 * answered as if no function of this name existed, so the public surface stays the spec's.
 */
import { createFunctionApp } from "../../shared/app";
import { readConfig, type Bindings } from "../../shared/config";
import { connect } from "../../shared/db";
import { ApiError } from "../../shared/errors";
import { anchorPendingReceipts, LocalAnchorSink } from "./anchor";

const app = createFunctionApp("receipt-anchor");

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

/** One anchoring pass at the tick's scheduled time. A failure is logged and thrown, so the platform records the failed run. */
async function scheduled(event: ScheduledEvent, env: Bindings, _ctx: WaitUntil): Promise<void> {
  const config = readConfig(env);
  const sql = connect(config.DATABASE_URL);
  const startedAt = Date.now();
  try {
    const result = await anchorPendingReceipts(sql, new LocalAnchorSink(), new Date(event.scheduledTime));
    const receipts = result.anchors.reduce((n, anchor) => n + anchor.leaf_count, 0);
    if (result.anchors.length || result.contended) {
      console.log(JSON.stringify({ function: "receipt-anchor", cron: event.cron, anchors: result.anchors.length, receipts, contended: result.contended, ms: Date.now() - startedAt }));
    }
  } catch (error) {
    console.error(JSON.stringify({ function: "receipt-anchor", cron: event.cron, error: String((error as Error)?.stack ?? error) }));
    throw error;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export default { fetch: app.fetch, scheduled };
