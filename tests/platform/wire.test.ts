import { connect as netConnect } from "node:net";
import { Duplex } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { pgbouncerBinary, type RunningPgBouncer, startPgBouncer } from "../../scripts/local/pgbouncer";
import { databaseError, requestDatabase } from "../../shared/kernel/db/client";
import { rpc } from "../../shared/kernel/db/rpc";
import { type OpenSocket, WireClient, WireError, wireTarget } from "../../shared/kernel/db/wire";
import { ApiError } from "../../shared/kernel/errors";

/**
 * The wire client a Worker's request runs its statements on (shared/kernel/db/wire.ts, D-505),
 * against the real Postgres of DATABASE_URL, on a Node socket shaped as workerd's (`cloudflare:sockets`:
 * a readable and a writable stream). Every function test runs it in workerd; this file holds what
 * those do not reach: the value types, a failed statement, a refused connection, and the password
 * methods a pooler may ask for (PgBouncer asking for clear text and SCRAM-SHA-256, as Hyperdrive asks
 * a Worker for its connection string's password). MD5 needs workerd's WebCrypto (Node's has no MD5).
 */
const DATABASE_URL = process.env.DATABASE_URL;

/** A Node TCP socket as workerd's Socket: web streams, closed, close. */
const nodeSocket: OpenSocket = (host, port) => {
  const socket = netConnect({ host, port });
  const { readable, writable } = Duplex.toWeb(socket) as { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> };
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return {
    readable,
    writable,
    closed,
    close: async () => {
      socket.destroy();
      await closed;
    },
  };
};

describe.skipIf(!DATABASE_URL)("the wire client", () => {
  const clients: WireClient[] = [];
  const open = (url = DATABASE_URL!) => {
    const client = new WireClient(url, nodeSocket);
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
  });

  it("reads what a connection string names, as postgres.js does", () => {
    expect(wireTarget("postgres://app:p%40ss@db.example:6543/main?sslmode=require&application_name=x")).toEqual({
      host: "db.example",
      port: 6543,
      user: "app",
      password: "p@ss",
      database: "main",
      tls: "require",
      parameters: { application_name: "x" },
    });
    expect(wireTarget("postgres://127.0.0.1/").database).toBe("postgres");
  });

  it("runs statements with text parameters and parses json, jsonb, booleans and small integers", async () => {
    const sql = open();
    const value = { a: [1, "two", null], nested: { ok: true }, text: "ação \u{1F600}" };
    const [row] = await sql.unsafe(
      `select $1::jsonb as j, $1::json as js, $2::int as i, $3::bool as b, $4::text as t, null::text as n, $5::timestamptz as at, 9007199254740993::int8 as big`,
      [value, 42, true, "plain", new Date("2026-11-27T00:00:00Z")],
    );
    expect(row).toEqual({
      j: value,
      js: value,
      i: 42,
      b: true,
      t: "plain",
      n: null,
      at: expect.stringMatching(/^2026-11-27/),
      big: "9007199254740993",
    });
    // one connection per client: the second statement runs on the first's backend
    const [a] = await sql.unsafe("select pg_backend_pid() as pid");
    const [b] = await sql.unsafe("select pg_backend_pid() as pid");
    expect(a.pid).toBe(b.pid);
  });

  it("answers many rows and rows larger than one chunk", async () => {
    const sql = open();
    const rows = await sql.unsafe("select g as i, repeat('x', 100000) as big from generate_series(1, 5) g");
    expect(rows.map((r) => r.i)).toEqual([1, 2, 3, 4, 5]);
    expect(rows.every((r) => (r.big as string).length === 100000)).toBe(true);
  });

  it("reports a failed statement with its SQLSTATE and detail, and the connection goes on", async () => {
    const sql = open();
    const failure = await sql.unsafe("select 1 / 0").then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WireError);
    expect(failure).toMatchObject({ name: "PostgresError", code: "22012" });
    // our SQLSTATEs map to their codes as with postgres.js, the detail as the body's extra
    const raised = await sql
      .unsafe(`do $$ begin raise exception 'taken' using errcode = 'HA001', detail = '{"alias":"x"}'; end $$`)
      .then(() => null, databaseError);
    expect(raised).toBeInstanceOf(ApiError);
    expect((raised as ApiError).code).toBe("ALIAS_TAKEN");
    expect((await sql.unsafe("select 2 as two"))[0].two).toBe(2);
  });

  it("ends after its timeout even when a statement has not answered, as postgres.js's end({timeout}) does", async () => {
    const sql = new WireClient(DATABASE_URL!, nodeSocket);
    await sql.unsafe("select 1");
    const sleeping = sql.unsafe("select pg_sleep(2)").then(
      () => "answered",
      () => "failed",
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await sql.end({ timeout: 0.2 });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(await Promise.race([sleeping, new Promise((resolve) => setTimeout(() => resolve("pending"), 1000))])).not.toBe("answered");
  });

  it("is what a request's database runs its RPCs on: one statement, our errors mapped", async () => {
    const db = requestDatabase(DATABASE_URL!, nodeSocket);
    try {
      const answer = await rpc(db, "circuit_breaker_state", {
        deployment: "wire-test",
        function_name: "wire-test",
        merchant_id: crypto.randomUUID(),
        environment: "test",
        now: new Date().toISOString(),
      });
      expect(answer).toMatchObject({ open: false });
    } finally {
      await db.end();
    }
  });

  it("maps a refused connection to DATABASE_UNAVAILABLE", async () => {
    const db = requestDatabase("postgres://postgres@127.0.0.1:1/none", nodeSocket);
    const failure = await rpc(db, "circuit_breaker_state", {
      deployment: "x",
      function_name: "x",
      merchant_id: crypto.randomUUID(),
      environment: "test",
      now: new Date().toISOString(),
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).code).toBe("DATABASE_UNAVAILABLE");
    await db.end();
  });

  describe.skipIf(pgbouncerBinary() === null)("password methods, through PgBouncer asking for them", () => {
    const bouncers: RunningPgBouncer[] = [];
    afterAll(async () => {
      await Promise.all(bouncers.map((b) => b.stop()));
    });
    const upstream = Object.assign(new URL(DATABASE_URL!), { username: "postgres", password: "wire-secret" }).toString();

    for (const clientAuth of ["plain", "scram-sha-256"] as const) {
      it(`logs in with ${clientAuth}, and a wrong password is refused`, async () => {
        const bouncer = await startPgBouncer({ upstreamUrl: upstream, size: 2, clientAuth });
        bouncers.push(bouncer);
        const withPassword = (password: string) => Object.assign(new URL(bouncer.url), { password }).toString();
        const [row] = await open(withPassword("wire-secret")).unsafe("select $1::jsonb as j", [{ ok: clientAuth }]);
        expect(row.j).toEqual({ ok: clientAuth });
        const refused = await open(withPassword("wrong"))
          .unsafe("select 1")
          .then(
            () => null,
            (error: unknown) => error,
          );
        expect(refused).toMatchObject({ name: "PostgresError", code: "08P01" });
      });
    }
  });
});
