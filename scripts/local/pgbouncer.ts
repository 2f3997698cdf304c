import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, rmSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import postgres from "postgres";
import { OutageLog } from "./outage-log";
import { freePort } from "./ports";
import { type PostgresTarget, parsePostgresUrl } from "./postgres-url";

/**
 * A private PgBouncer in transaction mode: the local stand-in for Hyperdrive and Supavisor where
 * Debian's `pgbouncer` is installed (`apt-get install -y pgbouncer`; `.ci/run` installs it).
 *
 * `startPgBouncer` writes a config and an auth file into a fresh temporary directory, starts the
 * binary in the foreground on a free loopback port, waits until it accepts connections, and
 * `stop()` ends that process and removes the directory. It never touches a system-wide service.
 * Clients (the workers, one connection per request) connect to `url` with the upstream's user and
 * database and no password (`auth_type = trust`, loopback only); PgBouncer logs in upstream as that
 * user with its password from the auth file, and keeps at most `size` server connections.
 * Transaction mode means what it means for Supavisor and Hyperdrive: a server connection belongs to
 * a client only for one transaction, so prepared statements stay off (`prepare: false`) and session
 * state does not survive (use `SET LOCAL`).
 */
interface PgBouncerOptions {
  /** postgres://user[:password]@host:port/database of the real server. */
  upstreamUrl: string;
  /** Server connections at most (`default_pool_size`, default 20). */
  size?: number;
  /** Client connections at most (`max_client_conn`, default 2000). */
  maxClients?: number;
  host?: string;
  /** Listening port (default: a free one). */
  port?: number;
  /** The binary (default: `pgbouncerBinary()`). */
  binary?: string;
  /** Receives PgBouncer's warnings and errors; a database outage is two lines (scripts/local/outage-log.ts). */
  log?: (line: string) => void;
  /**
   * How clients log in (`auth_type`, default `trust`): `plain`, `md5` or `scram-sha-256` ask them for the
   * upstream URL's password, as Hyperdrive asks a Worker for its connection string's (the wire client's tests).
   */
  clientAuth?: "trust" | "plain" | "md5" | "scram-sha-256";
  /**
   * TLS for clients, required (`client_tls_sslmode = require`): PEM files of the certificate and its
   * key, as Hyperdrive and hosted poolers serve a Worker (the wire client's tests; tests/fixtures/tls).
   */
  clientTls?: { certFile: string; keyFile: string };
}

interface PgBouncerStats {
  /** Server connections open or opening. */
  backends: number;
  /** Server connections serving a client now. */
  active: number;
  idle: number;
  /** Clients linked to a server connection or waiting for one. */
  clients: number;
  waiting: number;
}

export interface RunningPgBouncer {
  /** The URL clients use: same user and database as upstream, no password. */
  url: string;
  port: number;
  pid: number;
  /** Pool figures from PgBouncer's admin console (`SHOW POOLS`). */
  stats(): Promise<PgBouncerStats>;
  stop(): Promise<void>;
}

/** Where Debian puts the binary; PATH is searched too. */
const DEBIAN_BINARY = "/usr/sbin/pgbouncer";

/** The pgbouncer binary on this machine (`PGBOUNCER`, PATH, /usr/sbin), or null when none is installed. */
export function pgbouncerBinary(env: Record<string, string | undefined> = process.env): string | null {
  const candidates = [
    ...(env.PGBOUNCER ? [env.PGBOUNCER] : []),
    ...(env.PATH ?? "")
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, "pgbouncer")),
    DEBIAN_BINARY,
  ];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/** A value in a PgBouncer connection string: single-quoted, quotes doubled. */
const connValue = (value: string) => `'${value.replace(/'/g, "''")}'`;
/** A name or secret in the auth file: double-quoted, quotes doubled. */
const quoted = (value: string) => `"${value.replace(/"/g, '""')}"`;

function config(
  upstream: PostgresTarget,
  dir: string,
  port: number,
  host: string,
  size: number,
  maxClients: number,
  clientAuth: NonNullable<PgBouncerOptions["clientAuth"]>,
  clientTls: PgBouncerOptions["clientTls"],
): string {
  return [
    "[databases]",
    `${upstream.database} = host=${connValue(upstream.host)} port=${upstream.port} dbname=${connValue(upstream.database)} user=${connValue(upstream.user)}`,
    "",
    "[pgbouncer]",
    `listen_addr = ${host}`,
    `listen_port = ${port}`,
    // no Unix socket: nothing of this instance outside its own directory
    "unix_socket_dir =",
    // the loopback stand-in answers clients itself, as Hyperdrive does; upstream logins use
    // the auth file's password (any method the server asks for, SCRAM included)
    `auth_type = ${clientAuth}`,
    `auth_file = ${join(dir, "userlist.txt")}`,
    `admin_users = ${upstream.user}`,
    "pool_mode = transaction",
    `default_pool_size = ${size}`,
    "reserve_pool_size = 0",
    `max_client_conn = ${maxClients}`,
    // postgres.js sends user, database, client_encoding and application_name, which PgBouncer
    // tracks; other drivers (JDBC, some psql builds) add extra_float_digits
    "ignore_startup_parameters = extra_float_digits",
    // a failed upstream login is retried after 1 s, not the default 15 s
    "server_login_retry = 1",
    ...(upstream.sslmode ? [`server_tls_sslmode = ${upstream.sslmode}`] : []),
    ...(clientTls
      ? ["client_tls_sslmode = require", `client_tls_cert_file = ${clientTls.certFile}`, `client_tls_key_file = ${clientTls.keyFile}`]
      : []),
    "log_connections = 0",
    "log_disconnections = 0",
    "log_stats = 0",
    "",
  ].join("\n");
}

/**
 * PgBouncer's warning for each client it turns away while logins to the server fail (the server is
 * down), with the instant it was written (PgBouncer runs with TZ=UTC).
 */
const SERVER_LOGIN_FAILING = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) UTC .*pooler error: (server login has been failing.*)$/;

/** Whether a query through `url` is answered within two seconds (PgBouncer holds a client while logins fail). */
async function answers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, prepare: false, fetch_types: false, connect_timeout: 2, onnotice: () => {} });
  const giveUp = new Promise<boolean>((resolve) => setTimeout(resolve, 2000, false).unref());
  try {
    return await Promise.race([sql`select 1`.then(() => true), giveUp]);
  } catch {
    return false;
  } finally {
    sql.end({ timeout: 0 }).catch(() => undefined);
  }
}

/** Resolves once `host:port` accepts a TCP connection; rejects when `exited()` says the process is gone. */
async function listening(host: string, port: number, exited: () => string | null, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = exited();
    if (why) throw new Error(why);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = netConnect({ host, port });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${host}:${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Starts a private PgBouncer (transaction mode) in front of `upstreamUrl`.
 *
 * @example
 * const bouncer = await startPgBouncer({ upstreamUrl: process.env.DATABASE_URL!, size: 20 });
 * const sql = postgres(bouncer.url, { prepare: false });
 * await bouncer.stop();
 */
export async function startPgBouncer({
  upstreamUrl,
  size = 20,
  maxClients = 2000,
  host = "127.0.0.1",
  port,
  binary = pgbouncerBinary() ?? undefined,
  log = () => {},
  clientAuth = "trust",
  clientTls,
}: PgBouncerOptions): Promise<RunningPgBouncer> {
  if (!binary) throw new Error("pgbouncer is not installed (apt-get install -y pgbouncer), or use DB_POOLER=0");
  const upstream = parsePostgresUrl(upstreamUrl);
  // PgBouncer's ini format (up to 1.18 at least) takes no quoted [databases] keys
  if (!/^[A-Za-z0-9_.-]+$/.test(upstream.database))
    throw new Error(`database name ${JSON.stringify(upstream.database)} is not one PgBouncer's config can hold; use DB_POOLER=0`);
  // PgBouncer warns once per client it turns away and never says when logins work again: one line
  // per outage instead, and a query through PgBouncer once a second to say when it ends (when it
  // logs in again; a refusal it wrote before that belongs to the outage that ended).
  let clientUrl: string | null = null;
  const outage = new OutageLog(log, "pgbouncer", `${upstream.host}:${upstream.port}`, {
    probe: async () => clientUrl !== null && (await answers(clientUrl)),
  });
  const dir = await mkdtemp(join(tmpdir(), "hauth-pgbouncer-"));
  await writeFile(join(dir, "userlist.txt"), `${quoted(upstream.user)} ${quoted(upstream.password)}\n`, { mode: 0o600 });

  // A free port can be taken between the probe and the bind: try a few.
  for (let attempt = 1; ; attempt++) {
    const listenPort = port ?? (await freePort());
    const configPath = join(dir, "pgbouncer.ini");
    await writeFile(configPath, config(upstream, dir, listenPort, host, size, maxClients, clientAuth, clientTls), { mode: 0o600 });
    // PgBouncer refuses to run as root: it reads its files first, then drops to `nobody`.
    const args = process.getuid?.() === 0 ? ["-u", "nobody", configPath] : [configPath];
    const child: ChildProcess = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, TZ: "UTC" } });
    // It never keeps this process alive by itself: the exit hook below ends it with this process.
    child.unref();
    (child.stderr as unknown as { unref(): void }).unref();
    const tail: string[] = [];
    let exit: string | null = null;
    child.stderr!.setEncoding("utf8");
    let partial = "";
    child.stderr!.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        const refusal = SERVER_LOGIN_FAILING.exec(line);
        if (refusal) outage.refused(refusal[3], Date.parse(`${refusal[1]}T${refusal[2]}Z`));
        else if (/ (WARNING|ERROR|FATAL) /.test(line)) log(`pgbouncer: ${line}`);
      }
    });
    const exited = new Promise<void>((resolve) => {
      child.once("error", (error) => {
        exit = `pgbouncer could not start: ${error.message}`;
        resolve();
      });
      child.once("exit", (code, signal) => {
        exit = `pgbouncer exited (${signal ?? code}): ${tail.slice(-3).join(" | ")}`;
        resolve();
      });
    });
    // Never leave it behind if this process ends without stop().
    const onExit = () => {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    };
    process.once("exit", onExit);

    try {
      await listening(host, listenPort, () => exit);
    } catch (error) {
      process.removeListener("exit", onExit);
      if (exit === null) child.kill("SIGKILL");
      await exited;
      const inUse = tail.some((line) => /address already in use/i.test(line));
      if (inUse && port === undefined && attempt < 5) continue;
      rmSync(dir, { recursive: true, force: true });
      outage.stop();
      throw error;
    }

    const url = `postgres://${encodeURIComponent(upstream.user)}@${host}:${listenPort}/${encodeURIComponent(upstream.database)}`;
    clientUrl = url;
    const adminUrl = `postgres://${encodeURIComponent(upstream.user)}@${host}:${listenPort}/pgbouncer`;
    return {
      url,
      port: listenPort,
      pid: child.pid!,
      async stats() {
        const admin = postgres(adminUrl, { max: 1, prepare: false, fetch_types: false, connect_timeout: 5, onnotice: () => {} });
        try {
          const rows = await admin.unsafe("show pools").simple();
          const pool = rows.find((row) => row.database === upstream.database);
          const n = (key: string) => Number(pool?.[key] ?? 0);
          return {
            backends: n("sv_active") + n("sv_idle") + n("sv_used") + n("sv_tested") + n("sv_login"),
            active: n("sv_active"),
            idle: n("sv_idle") + n("sv_used"),
            clients: n("cl_active") + n("cl_waiting"),
            waiting: n("cl_waiting"),
          };
        } finally {
          await admin.end();
        }
      },
      async stop() {
        outage.stop();
        process.removeListener("exit", onExit);
        if (exit === null) {
          // SIGTERM: an immediate shutdown in PgBouncer up to 1.22, a wait for clients to leave from
          // 1.23 on; either way it is gone within a few seconds
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
          await exited;
          clearTimeout(timer);
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
