/**
 * What the local poolers log while the database refuses them: one line when it starts refusing and
 * one when it is reachable again, however many connections were refused in between (a stopped
 * server under load refuses thousands a second, and a line for each buries everything else).
 *
 * @example
 * const outage = new OutageLog(log, "pooler", "127.0.0.1:5432");
 * backendOpened.then(() => outage.reached(), (error) => outage.refused(error.message));
 */
export class OutageLog {
  private since: number | null = null;
  private ended: number | null = null;
  private refusals = 0;
  private probing: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly log: (line: string) => void,
    /** Who is refused, as the line's prefix (`pooler`, `pgbouncer`). */
    private readonly source: string,
    /** Where the database is (host:port; never a URL, which may hold a password). */
    private readonly target: string,
    private readonly options: {
      /**
       * For a source that says when it is refused but not when it gets through again (PgBouncer):
       * tried every `probeIntervalMs` while the database is away; the first success ends the outage.
       */
      probe?: () => Promise<boolean>;
      probeIntervalMs?: number;
      clock?: () => number;
    } = {},
  ) {}

  /**
   * The database refused a connection at `at` (now by default; a source that reports late says
   * when). `reason` is said once, for the first refusal of an outage; a refusal from before the
   * last outage ended is a late report of that one.
   */
  refused(reason: string, at = this.now()): void {
    if (this.since === null && this.ended !== null && at <= this.ended) return;
    this.refusals++;
    if (this.since !== null) return;
    this.since = at;
    this.log(
      `${this.source}: the database at ${this.target} is unreachable (${reason}); refused connections are not logged until it is reachable again`,
    );
    if (this.options.probe) this.startProbing(this.options.probe);
  }

  /** A connection to the database succeeded. */
  reached(): void {
    if (this.since === null) return;
    const seconds = ((this.now() - this.since) / 1000).toFixed(1);
    this.log(`${this.source}: the database at ${this.target} is reachable again after ${seconds} s (${this.refusals} connections refused)`);
    this.since = null;
    this.ended = this.now();
    this.refusals = 0;
    this.stopProbing();
  }

  /** Stops probing (when the source stops). */
  stop(): void {
    this.stopProbing();
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  private startProbing(probe: () => Promise<boolean>) {
    let running = false;
    this.probing = setInterval(async () => {
      if (running) return;
      running = true;
      try {
        if (await probe().catch(() => false)) this.reached();
      } finally {
        running = false;
      }
    }, this.options.probeIntervalMs ?? 1000);
    this.probing.unref();
  }

  private stopProbing() {
    if (this.probing) clearInterval(this.probing);
    this.probing = null;
  }
}
