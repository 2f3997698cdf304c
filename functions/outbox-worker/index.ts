/**
 * The outbox worker (cron, every minute): each tick runs one pass of shared/webhooks/run.ts at the
 * tick's scheduled time: fan new outbox events out into deliveries, claim the due ones, send them
 * signed, record the results (docs/webhooks.md).
 *
 * It serves no HTTP, with one exception that exists only where TEST_CLOCK=1 (the test harness):
 * POST /run runs one pass at the request clock (`x-test-now`), optionally for one merchant, and
 * answers the pass's summary.
 */
import * as v from "valibot";
import { cronWorker } from "../../shared/platform/cron";
import { ApiError } from "../../shared/platform/errors";
import { readJsonBody } from "../../shared/platform/input";
import { parseWith } from "../../shared/platform/validation";
import { passClock, passOptions, runOutbox } from "../../shared/webhooks/run";

const runSchema = v.object({ merchant_id: v.optional(v.pipe(v.string(), v.uuid())) });

export default cronWorker(
  "outbox-worker",
  async (sql, config, at) => {
    const summary = await runOutbox(sql, passOptions(config, passClock(at)));
    return summary.claimed || summary.fanned_out_events || summary.errors.length ? { ...summary } : null;
  },
  (app) =>
    app.post("/run", async (c) => {
      if (c.var.config.TEST_CLOCK !== "1") throw new ApiError("FUNCTION_NOT_FOUND");
      const { merchant_id } = parseWith(runSchema, await readJsonBody(c.req.raw));
      return c.json(await runOutbox(c.var.db(), passOptions(c.var.config, passClock(c.var.now), merchant_id)));
    }),
);
