import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgbouncerBinary, type RunningPgBouncer, startPgBouncer } from "../../scripts/local/pgbouncer";
import { databaseError, requestDatabase } from "../../shared/kernel/db/client";
import { rpc } from "../../shared/kernel/db/rpc";
import { type OpenSocket, WireClient, WireError, type WireSocket, wireTarget } from "../../shared/kernel/db/wire";
import { ApiError } from "../../shared/kernel/errors";

/**
 * The wire client a Worker's request runs its statements on (shared/kernel/db/wire.ts, D-505),
 * against the real Postgres of DATABASE_URL, on a Node socket shaped as workerd's (`cloudflare:sockets`:
 * a readable and a writable stream). Every function test runs it in workerd; this file holds what
 * those do not reach: the value types, a failed statement, a refused connection, the password
 * methods a pooler may ask for (PgBouncer asking for clear text, MD5 and SCRAM-SHA-256, as Hyperdrive
 * asks a Worker for its connection string's password), and TLS (PgBouncer requiring it, with the
 * test CA's certificate for 127.0.0.1, tests/fixtures/tls).
 */
const DATABASE_URL = process.env.DATABASE_URL;
const TLS_FIXTURES = join(import.meta.dirname, "../fixtures/tls");
const TEST_CA = readFileSync(join(TLS_FIXTURES, "ca.pem"), "utf8");

/**
 * A Node socket as workerd's Socket: web streams, closed, close, and startTls, which runs Node's TLS
 * over the same connection, trusting `ca` (the test CA by default) and checking the server's name.
 */
function socketOf(socket: Socket, ca: string | undefined, upgrades: string[]): WireSocket {
  let detach = () => {};
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      const data = (chunk: Buffer) => controller.enqueue(new Uint8Array(chunk));
      const end = () => controller.close();
      const error = (e: Error) => controller.error(e);
      socket.on("data", data).once("end", end).once("error", error);
      detach = () => socket.off("data", data).off("end", end).off("error", error);
    },
  });
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) => new Promise<void>((resolve, reject) => socket.write(chunk, (error) => (error ? reject(error) : resolve()))),
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return {
    readable,
    writable,
    closed,
    close: async () => {
      socket.destroy();
      await closed;
    },
    startTls: ({ expectedServerHostname } = {}) => {
      // Nothing follows the server's "S" until the handshake, so the plain reader has nothing left to read.
      detach();
      upgrades.push(expectedServerHostname ?? "");
      return socketOf(tlsConnect({ socket, host: expectedServerHostname, ca }), ca, upgrades);
    },
  };
}

/** Every startTls the test sockets ran, by the host name they checked. */
const tlsUpgrades: string[] = [];
const socketTrusting =
  (ca: string | undefined): OpenSocket =>
  (host, port) =>
    socketOf(netConnect({ host, port }), ca, tlsUpgrades);
const nodeSocket = socketTrusting(TEST_CA);

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

    for (const clientAuth of ["plain", "md5", "scram-sha-256"] as const) {
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

  describe.skipIf(pgbouncerBinary() === null)("TLS, through PgBouncer requiring it", () => {
    let bouncer: RunningPgBouncer;
    const upstream = Object.assign(new URL(DATABASE_URL!), { username: "postgres", password: "wire-secret" }).toString();
    beforeAll(async () => {
      bouncer = await startPgBouncer({
        upstreamUrl: upstream,
        size: 2,
        clientAuth: "scram-sha-256",
        clientTls: { certFile: join(TLS_FIXTURES, "localhost.pem"), keyFile: join(TLS_FIXTURES, "localhost.key") },
      });
    });
    afterAll(async () => {
      await bouncer?.stop();
    });
    const withSslMode = (url: string, sslmode: string, password?: string) => {
      const u = new URL(url);
      if (password) u.password = password;
      u.searchParams.set("sslmode", sslmode);
      return u.toString();
    };

    it("logs in and runs statements over TLS when the URL asks for it, checking the server's name", async () => {
      const upgrades = tlsUpgrades.length;
      const sql = open(withSslMode(bouncer.url, "require", "wire-secret"));
      const [row] = await sql.unsafe("select $1::jsonb as j", [{ over: "tls" }]);
      expect(row.j).toEqual({ over: "tls" });
      const rows = await sql.unsafe("select g as i, repeat('x', 50000) as big from generate_series(1, 3) g");
      expect(rows.map((r) => [r.i, (r.big as string).length])).toEqual([
        [1, 50000],
        [2, 50000],
        [3, 50000],
      ]);
      expect(tlsUpgrades.slice(upgrades)).toEqual(["127.0.0.1"]);
    });

    it("is refused by a pooler that requires TLS when the URL does not ask for it", async () => {
      const refused = await open(withSslMode(bouncer.url, "disable", "wire-secret"))
        .unsafe("select 1")
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(refused).toMatchObject({ name: "PostgresError", code: "08P01" });
    });

    it("fails on a certificate it does not trust, before sending the password", async () => {
      const sql = new WireClient(withSslMode(bouncer.url, "require", "wire-secret"), socketTrusting(undefined));
      clients.push(sql);
      const failure = await sql.unsafe("select 1").then(
        () => null,
        (error: unknown) => error,
      );
      expect(String(failure)).toMatch(/certificate/i);
    });

    it("says when the server has no TLS: an error when the URL requires it, a plain connection when it prefers it", async () => {
      const upgrades = tlsUpgrades.length;
      const refused = await open(withSslMode(DATABASE_URL!, "require"))
        .unsafe("select 1")
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(refused).toMatchObject({ code: "TLS_REFUSED" });
      const [row] = await open(withSslMode(DATABASE_URL!, "prefer")).unsafe("select 2 as two");
      expect(row.two).toBe(2);
      expect(tlsUpgrades.length).toBe(upgrades);
    });
  });
});
