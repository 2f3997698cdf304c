import type { Config } from "../kernel/config";

/** Header through which tests set the server clock; honoured only when the TEST_CLOCK binding is "1". */
const TEST_CLOCK_HEADER = "x-test-now";

/**
 * The server clock for one request. Time-dependent rules (expiry, periods, TTLs) read the clock
 * from here and pass it into the database, so tests control time by header instead of sleeping.
 * In any deployment without TEST_CLOCK=1 the header is ignored.
 */
export function requestClock(config: Config, headers: Headers): Date {
  const override = config.TEST_CLOCK === "1" ? headers.get(TEST_CLOCK_HEADER) : null;
  if (override) {
    const at = new Date(/^\d+$/.test(override) ? Number(override) : override);
    if (!Number.isNaN(at.getTime())) return at;
  }
  return new Date();
}
