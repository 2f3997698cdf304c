import { connect as netConnect, type Socket } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { pgbouncerBinary, startPgBouncer } from "../../scripts/local/pgbouncer";
import { choosePooler } from "../../scripts/local/pooler";
import { startDatabaseProxy } from "../harness/database-proxy";

/**
 * The local transaction pooler that stands in for Hyperdrive and Supavisor (a private PgBouncer),
 * held to the contract the workers rely on against the real Postgres of DATABASE_URL. Skipped when
 * DATABASE_URL is unset (the embedded PGlite multiplexes in-process and gets no pooler) or when
 * pgbouncer is not installed (`apt-get install -y pgbouncer`; `.ci/run` does).
 */
const realPostgres = Boolean(process.env.DATABASE_URL);
const installed = pgbouncerBinary() !== null;

/** A worker-like client: one connection, no prepared statements, no type fetch. */
const client = (url: string) => postgres(url, { max: 1, prepare: false, fetch_types: false, connect_timeout: 5, onnotice: () => {} });

/** A raw protocol client: startup, then simple queries; `kill()` drops the socket with no Terminate. */
async function rawClient(url: string, applicationName: string) {
  const { hostname, port, username, pathname } = new URL(url);
  const socket: Socket = netConnect({ host: hostname, port: Number(port) });
  let buffer = Buffer.alloc(0);
  const waiters: (() => void)[] = [];
  socket.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (const wake of waiters.splice(0)) wake();
  });
  /** Resolves with the transaction status of the next ReadyForQuery. */
  const readyForQuery = async (): Promise<string> => {
    for (;;) {
      let offset = 0;
      while (buffer.length - offset >= 5) {
        const length = buffer.readInt32BE(offset + 1);
        if (buffer.length - offset < 1 + length) break;
        const type = String.fromCharCode(buffer[offset]);
        const status = String.fromCharCode(buffer[offset + 5]);
        offset += 1 + length;
        if (type === "Z") {
          buffer = buffer.subarray(offset);
          return status;
        }
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const body = Buffer.from(
    `\0\x03\0\0user\0${username}\0database\0${pathname.slice(1)}\0application_name\0${applicationName}\0\0`,
    "latin1",
  );
  const head = Buffer.alloc(4);
  head.writeInt32BE(body.length + 4);
  socket.write(Buffer.concat([head, body]));
  expect(await readyForQuery()).toBe("I");
  return {
    async query(text: string) {
      const q = Buffer.from(`${text}\0`, "utf8");
      const h = Buffer.alloc(5);
      h.write("Q");
      h.writeInt32BE(q.length + 4, 1);
      socket.write(Buffer.concat([h, q]));
      return readyForQuery();
    },
    kill: () => socket.destroy(),
  };
}

/** What the contract needs of a running pooler; `stats` is the pooler's own count of its backends and waiting clients. */
interface Pooler {
  url: string;
  stats(): { backends: number; waiting: number } | Promise<{ backends: number; waiting: number }>;
  stop(): Promise<void>;
  /** The pooler's process, where it is one of its own. */
  pid?: number;
}

/** Where a pooler under test sends its backends (default: the real Postgres) and its log lines. */
interface PoolerStart {
  upstreamUrl?: string;
  log?: (line: string) => void;
}

const poolers: { name: string; available: boolean; start: (size: number, options?: PoolerStart) => Promise<Pooler> }[] = [
  {
    name: "pgbouncer",
    available: installed,
    start: (size, { upstreamUrl = inject("databaseUrl"), log } = {}) => startPgBouncer({ upstreamUrl, size, log }),
  },
];

/** Whether one query through `url` is answered within `ms` (a pooler may hold a client while its server is away). */
async function answered(url: string, ms: number): Promise<boolean> {
  const sql = client(url);
  try {
    return await Promise.race([sql`select 1`.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, ms, false))]);
  } catch {
    return false;
  } finally {
    sql.end({ timeout: 0 }).catch(() => undefined);
  }
}

describe("DB_POOLER", () => {
  it("picks PgBouncer or none, and PgBouncer by default where installed", () => {
    expect(choosePooler({ DB_POOLER: "pgbouncer" })).toBe("pgbouncer");
    expect(choosePooler({ DB_POOLER: "0" })).toBe("direct");
    expect(choosePooler({})).toBe(installed ? "pgbouncer" : "direct");
    expect(choosePooler({ DB_POOLER: "1" })).toBe(installed ? "pgbouncer" : "direct");
    expect(() => choosePooler({ DB_POOLER: "builtin" })).toThrow(/DB_POOLER=builtin/);
    expect(() => choosePooler({ DB_POOLER: "supavisor" })).toThrow(/DB_POOLER=supavisor/);
  });
});

describe.skipIf(!realPostgres || !installed || process.env.DB_POOLER)("the service under test", () => {
  it("reaches DATABASE_URL through PgBouncer when it is installed and DB_POOLER is unset", async () => {
    // only PgBouncer answers its admin console, the pseudo-database `pgbouncer`
    const admin = client(Object.assign(new URL(inject("serverBindings").DATABASE_URL), { pathname: "/pgbouncer" }).toString());
    try {
      const rows = await admin.unsafe("show version").simple();
      expect(JSON.stringify(rows)).toMatch(/PgBouncer/);
    } finally {
      await admin.end();
    }
  });
});

for (const { name, available, start } of poolers) {
  describe.skipIf(!realPostgres || !available)(`${name} (transaction mode, against the real Postgres)`, () => {
    let pooler: Pooler;
    let single: Pooler;
    let direct: postgres.Sql;

    beforeAll(async () => {
      direct = client(inject("databaseUrl"));
      [pooler, single] = await Promise.all([start(4), start(1)]);
    });

    afterAll(async () => {
      await pooler?.stop();
      await single?.stop();
      await direct?.end();
    });
    it("serves 300 concurrent clients on 4 backends", async () => {
      const results = await Promise.all(
        Array.from({ length: 300 }, async (_, i) => {
          const sql = client(pooler.url);
          try {
            const [row] = await sql.unsafe("select $1::int + 1 as n, pg_backend_pid() as pid", [i]);
            return { n: row.n as number, pid: row.pid as number };
          } finally {
            await sql.end();
          }
        }),
      );
      expect(results.map((r) => r.n)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      expect(new Set(results.map((r) => r.pid)).size).toBeLessThanOrEqual(4);
      const stats = await pooler.stats();
      expect(stats.backends).toBeGreaterThan(0);
      expect(stats.backends).toBeLessThanOrEqual(4);
      const pids = [...new Set(results.map((r) => r.pid))];
      const [{ count }] =
        await direct`select count(*)::int as count from pg_stat_activity where pid = any(string_to_array(${pids.join(",")}, ',')::int[])`;
      expect(count).toBe(stats.backends);
    });

    it("keeps a backend with its transaction until commit; set local does not leak, other clients wait", async () => {
      const a = client(single.url);
      const b = client(single.url);
      try {
        const order: string[] = [];
        let bQuery: Promise<unknown> | undefined;
        const pids = await a.begin(async (tx) => {
          const [first] = await tx`select pg_backend_pid() as pid`;
          await tx`set local statement_timeout = '1234ms'`;
          // b asks while a's transaction holds the only backend: it must wait for the commit.
          bQuery = b`select 1`.then(() => order.push("b"));
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect((await single.stats()).waiting).toBe(1);
          const [second] = await tx`select pg_backend_pid() as pid, current_setting('statement_timeout') as timeout`;
          order.push("a");
          return [first.pid, second.pid, second.timeout];
        });
        await bQuery;
        expect(pids[0]).toBe(pids[1]);
        expect(pids[2]).toBe("1234ms");
        expect(order).toEqual(["a", "b"]);
        const [next] = await b`select pg_backend_pid() as pid, current_setting('statement_timeout') as timeout`;
        expect(next.pid).toBe(pids[0]);
        expect(next.timeout).not.toBe("1234ms");
      } finally {
        await a.end();
        await b.end();
      }
    });

    it("closes a backend whose client died mid-transaction; the next client starts clean", async () => {
      const raw = await rawClient(single.url, `${name.replace(/\W/g, "-")}-dirty`);
      // The dirty transaction's now() is at least 300 ms old when the next client arrives.
      expect(await raw.query("begin; select txid_current(); select pg_sleep(0.3)")).toBe("T");
      const [{ pid: dirtyPid }] =
        await direct`select pid from pg_stat_activity where query like '%pg_sleep(0.3)%' and state = 'idle in transaction' and pid <> pg_backend_pid()`;
      raw.kill();
      const sql = client(single.url);
      try {
        const [row] =
          await sql`select txid_current_if_assigned() as xid, pg_backend_pid() as pid, now() > clock_timestamp() - interval '200 milliseconds' as fresh`;
        expect(row.xid).toBeNull();
        expect(row.fresh).toBe(true);
        expect(row.pid).not.toBe(dirtyPid);
        await expect
          .poll(async () => (await direct`select count(*)::int as n from pg_stat_activity where pid = ${dirtyPid}`)[0].n, { timeout: 5000 })
          .toBe(0);
      } finally {
        await sql.end();
      }
    });

    it("forwards errors and reuses the backend afterwards", async () => {
      const sql = client(single.url);
      try {
        const [{ pid }] = await sql`select pg_backend_pid() as pid`;
        await expect(sql`select 1/0`).rejects.toMatchObject({ code: "22012" });
        await expect(sql.begin((tx) => tx`select 1/0`)).rejects.toMatchObject({ code: "22012" });
        await expect(sql`select public.no_such_function()`).rejects.toMatchObject({ code: "42883" });
        const [after] = await sql`select pg_backend_pid() as pid, txid_current_if_assigned() as xid`;
        expect(after.pid).toBe(pid);
        expect(after.xid).toBeNull();
        expect((await single.stats()).backends).toBe(1);
      } finally {
        await sql.end();
      }
    });

    it("fails a client cleanly when its backend dies, and serves the next one", async () => {
      const sql = client(single.url);
      try {
        await expect(sql`select pg_terminate_backend(pg_backend_pid())`).rejects.toBeTruthy();
      } finally {
        await sql.end({ timeout: 0 });
      }
      const again = client(single.url);
      try {
        const [row] = await again`select 1 as one`;
        expect(row.one).toBe(1);
      } finally {
        await again.end();
      }
    });

    it("logs a database outage as two lines, however many connections it refuses: unreachable, then reachable again", {
      timeout: 120_000,
    }, async () => {
      const proxy = await startDatabaseProxy(inject("databaseUrl"));
      const lines: string[] = [];
      const behind = await start(2, { upstreamUrl: proxy.url, log: (line) => lines.push(line) });
      /** An outage under load: 30 clients refused (or held and given up), then the database back and a query answered. */
      const outage = async () => {
        proxy.refuse();
        for (let i = 0; i < 5; i++) expect(await answered(behind.url, 1000)).toBe(false);
        const burst = await Promise.all(Array.from({ length: 25 }, () => answered(behind.url, 1000)));
        expect(burst.filter(Boolean)).toEqual([]);
        await proxy.accept();
        await expect.poll(() => answered(behind.url, 5000), { timeout: 30_000, interval: 100 }).toBe(true);
      };
      /** The lines so far, each as what it says of the database, or the whole line when it is something else. */
      const said = () => lines.map((line) => /is (unreachable|reachable again)/.exec(line)?.[1] ?? line);
      try {
        expect(await answered(behind.url, 5000)).toBe(true);
        await outage();
        await expect.poll(said, { timeout: 10_000, interval: 100 }).toEqual(["unreachable", "reachable again"]);
        const target = new URL(proxy.url).host;
        expect(lines[0]).toContain(`the database at ${target} is unreachable (`);
        const [, refused] = /is reachable again after [\d.]+ s \((\d+) connections refused\)$/.exec(lines[1]) ?? [];
        expect(lines[1]).toContain(`the database at ${target} is reachable again`);
        expect(Number(refused)).toBeGreaterThan(0);
        // The next outage is two more lines.
        await outage();
        await expect
          .poll(said, { timeout: 10_000, interval: 100 })
          .toEqual(["unreachable", "reachable again", "unreachable", "reachable again"]);
      } finally {
        await behind.stop();
        await proxy.stop();
      }
    });

    it("stops: the process ends and its port is closed", async () => {
      const spare = await start(1);
      const sql = client(spare.url);
      expect((await sql`select 1 as one`)[0].one).toBe(1);
      await sql.end();
      await spare.stop();
      if (spare.pid !== undefined) expect(() => process.kill(spare.pid!, 0)).toThrow();
      const after = client(spare.url);
      try {
        await expect(after`select 1`).rejects.toMatchObject({ code: "ECONNREFUSED" });
      } finally {
        await after.end({ timeout: 0 });
      }
    });
  });
}
