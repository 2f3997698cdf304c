import { createHash, randomBytes } from "node:crypto";
import { type AddressInfo, createServer, connect as netConnect, type Socket } from "node:net";
import { OutageLog } from "./outage-log";
import { type PostgresTarget, parsePostgresUrl } from "./postgres-url";

/**
 * A small transaction-mode Postgres pooler: the local stand-in for Hyperdrive and Supavisor where
 * PgBouncer is not installed (`DB_POOLER=builtin`, or the default without the binary; see
 * scripts/local/pooler.ts), so `npm start` against a DATABASE_URL needs nothing else.
 *
 * Clients (the workers, one connection per request) connect to `url`; the pooler answers their
 * startup itself (no authentication, no TLS) and keeps up to `size` warm backend connections to
 * `upstreamUrl`. A client holds a backend only while it has work in flight: it leases one with its
 * first message (FIFO queue when none is free), and gives it back when the backend reports
 * ReadyForQuery idle ('I') with no query of the client still pending. A backend inside a
 * transaction block ('T', 'E') stays with its client until the block ends, so `BEGIN … COMMIT`
 * works. A client that leaves while holding a backend takes that backend down with it (it is never
 * returned dirty); a backend that dies fails its client with an ErrorResponse and a close.
 * No session state survives a lease: prepared statements must stay off (`prepare: false`), and a
 * session-level `SET` is not reset (use `SET LOCAL`).
 */
interface PoolerOptions {
  /** postgres://user[:password]@host:port/database of the real server (trust, cleartext or md5). */
  upstreamUrl: string;
  /** Backend connections at most (default 20). */
  size?: number;
  host?: string;
  port?: number;
  /** application_name of the backends (default `hauth-pooler`). */
  applicationName?: string;
  log?: (line: string) => void;
}

export interface RunningPooler {
  /** The URL clients use: same user and database as upstream, no password. */
  url: string;
  port: number;
  stats(): { backends: number; idle: number; connecting: number; waiting: number; clients: number };
  stop(): Promise<void>;
}

const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
/** ParameterStatus values copied from a real backend into every client's startup. */
const REPORTED_PARAMETERS = [
  "server_version",
  "server_encoding",
  "client_encoding",
  "DateStyle",
  "integer_datetimes",
  "standard_conforming_strings",
  "TimeZone",
  "IntervalStyle",
  "application_name",
  "is_superuser",
  "session_authorization",
];

// ---------------------------------------------------------------------------------------------
// Wire helpers
// ---------------------------------------------------------------------------------------------

function message(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstring = (s: string) => Buffer.from(`${s}\0`, "utf8");

function errorResponse(code: string, text: string, severity = "FATAL"): Buffer {
  return message(
    "E",
    Buffer.concat([cstring(`S${severity}`), cstring(`V${severity}`), cstring(`C${code}`), cstring(`M${text}`), Buffer.from([0])]),
  );
}

function parameterStatus(name: string, value: string): Buffer {
  return message("S", Buffer.concat([cstring(name), cstring(value)]));
}

/** Fields of an ErrorResponse / NoticeResponse body, by field code. */
function errorFields(body: Buffer): Record<string, string> {
  const fields: Record<string, string> = {};
  let i = 0;
  while (i < body.length && body[i] !== 0) {
    const end = body.indexOf(0, i + 1);
    fields[String.fromCharCode(body[i])] = body.toString("utf8", i + 1, end);
    i = end + 1;
  }
  return fields;
}

interface Message {
  type: string;
  /** The whole message, type byte included. */
  start: number;
  end: number;
}

/** Accumulates a byte stream and cuts it into typed messages (type byte + int32 length). */
class MessageReader {
  private buffer: Buffer = Buffer.alloc(0);

  /** Appends `chunk`; returns the buffer holding the complete messages found and their bounds. */
  push(chunk: Buffer): { data: Buffer; messages: Message[] } {
    const data = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const messages: Message[] = [];
    let offset = 0;
    while (data.length - offset >= 5) {
      const length = data.readInt32BE(offset + 1);
      if (length < 4) throw new Error("malformed message length");
      if (data.length - offset < 1 + length) break;
      messages.push({ type: String.fromCharCode(data[offset]), start: offset, end: offset + 1 + length });
      offset += 1 + length;
    }
    this.buffer = offset === data.length ? Buffer.alloc(0) : data.subarray(offset);
    return { data, messages };
  }
}

class UpstreamError extends Error {
  constructor(
    message: string,
    /** The ErrorResponse to forward to the client (the server's own when it sent one). */
    readonly response: Buffer,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// Backends
// ---------------------------------------------------------------------------------------------

interface Upstream extends PostgresTarget {
  applicationName: string;
}

function parseUpstream(url: string, applicationName: string): Upstream {
  const target = parsePostgresUrl(url);
  if (target.sslmode && !["disable", "allow", "prefer"].includes(target.sslmode))
    throw new Error(`the local pooler does not speak TLS to the upstream (sslmode=${target.sslmode})`);
  return { ...target, applicationName };
}

class Backend {
  client: Client | null = null;
  /** Transaction status of the last ReadyForQuery. */
  status = "I";
  readonly parameters = new Map<string, string>();
  private reader = new MessageReader();
  closed = false;
  onClose: () => void = () => {};

  private constructor(readonly socket: Socket) {}

  /** Connects, authenticates and waits for the first ReadyForQuery. */
  static open(upstream: Upstream): Promise<Backend> {
    return new Promise((resolve, reject) => {
      const socket = netConnect({ host: upstream.host, port: upstream.port, noDelay: true });
      const backend = new Backend(socket);
      let ready = false;
      const fail = (error: UpstreamError) => {
        if (ready) return;
        ready = true;
        socket.destroy();
        reject(error);
      };
      socket.setTimeout(10_000, () =>
        fail(new UpstreamError("upstream connect timeout", errorResponse("08001", "pooler: upstream connect timeout"))),
      );
      socket.once("error", (error) =>
        fail(new UpstreamError(`upstream: ${error.message}`, errorResponse("08001", `pooler: upstream unreachable: ${error.message}`))),
      );
      socket.once("close", () =>
        fail(new UpstreamError("upstream closed during startup", errorResponse("08006", "pooler: upstream closed during startup"))),
      );
      socket.on("connect", () => {
        const params = Buffer.concat([
          Buffer.from([0, 3, 0, 0]),
          cstring("user"),
          cstring(upstream.user),
          cstring("database"),
          cstring(upstream.database),
          cstring("application_name"),
          cstring(upstream.applicationName),
          cstring("client_encoding"),
          cstring("UTF8"),
          Buffer.from([0]),
        ]);
        const head = Buffer.alloc(4);
        head.writeInt32BE(params.length + 4);
        socket.write(Buffer.concat([head, params]));
      });
      const onStartupData = (chunk: Buffer) => {
        let parsed: ReturnType<MessageReader["push"]>;
        try {
          parsed = backend.reader.push(chunk);
        } catch (error) {
          return fail(new UpstreamError(String(error), errorResponse("08P01", "pooler: malformed upstream message")));
        }
        const { data, messages } = parsed;
        for (const m of messages) {
          const body = data.subarray(m.start + 5, m.end);
          if (m.type === "R") {
            const kind = body.readInt32BE(0);
            if (kind === 0) continue;
            if (kind === 3) socket.write(message("p", cstring(upstream.password)));
            else if (kind === 5) {
              const inner = createHash("md5")
                .update(upstream.password + upstream.user)
                .digest("hex");
              const outer = createHash("md5").update(inner).update(body.subarray(4, 8)).digest("hex");
              socket.write(message("p", cstring(`md5${outer}`)));
            } else {
              const text =
                kind === 10
                  ? "SCRAM authentication is not supported by the local pooler (use trust, password or md5, or DB_POOLER=0)"
                  : `unsupported authentication request ${kind}`;
              return fail(new UpstreamError(text, errorResponse("28000", `pooler: ${text}`)));
            }
          } else if (m.type === "S") {
            const nul = body.indexOf(0);
            backend.parameters.set(body.toString("utf8", 0, nul), body.toString("utf8", nul + 1, body.length - 1));
          } else if (m.type === "E") {
            const fields = errorFields(body);
            return fail(new UpstreamError(`upstream: ${fields.M} (${fields.C})`, Buffer.from(data.subarray(m.start, m.end))));
          } else if (m.type === "Z") {
            ready = true;
            socket.setTimeout(0);
            socket.removeAllListeners("data");
            socket.removeAllListeners("error");
            socket.removeAllListeners("close");
            socket.on("data", (c: Buffer) => backend.onData(c));
            socket.on("error", () => backend.destroy());
            socket.on("close", () => backend.destroy());
            socket.setKeepAlive(true, 30_000);
            return resolve(backend);
          }
          // BackendKeyData, NoticeResponse: nothing to do.
        }
      };
      socket.on("data", onStartupData);
    });
  }

  /** Backend → client, whole messages only; hands the backend back when its client is done. */
  private onData(chunk: Buffer) {
    let parsed: ReturnType<MessageReader["push"]>;
    try {
      parsed = this.reader.push(chunk);
    } catch {
      return this.destroy();
    }
    const { data, messages } = parsed;
    let from = messages.length ? messages[0].start : 0;
    for (const m of messages) {
      if (m.type !== "Z") continue;
      this.status = String.fromCharCode(data[m.start + 5]);
      const client = this.client;
      if (!client) continue;
      client.pendingSyncs = Math.max(0, client.pendingSyncs - 1);
      if (this.status === "I" && client.pendingSyncs === 0 && !client.unsynced) {
        client.socket.write(data.subarray(from, m.end));
        from = m.end;
        client.releaseBackend();
      }
    }
    const rest = messages.length ? messages[messages.length - 1].end : 0;
    if (this.client && rest > from) this.client.socket.write(data.subarray(from, rest));
    // Messages arriving with no client (asynchronous notices) are dropped.
  }

  write(data: Buffer) {
    this.socket.write(data);
  }

  /** Closes the connection for good (Terminate first when it is still writable). */
  destroy() {
    if (this.closed) return;
    this.closed = true;
    if (!this.socket.destroyed && this.socket.writable) this.socket.end(message("X"));
    this.socket.destroy();
    const client = this.client;
    this.client = null;
    client?.backendLost();
    this.onClose();
  }
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

class Client {
  backend: Backend | null = null;
  /** Sync, Query and FunctionCall messages sent to the backend and not yet answered with ReadyForQuery. */
  pendingSyncs = 0;
  /** Messages sent since the last Sync or Query (an extended-protocol batch still open). */
  unsynced = false;
  waiting = false;
  closed = false;
  private started = false;
  private queued: Buffer[] = [];
  private startupBuffer: Buffer = Buffer.alloc(0);
  private reader = new MessageReader();

  constructor(
    readonly socket: Socket,
    private readonly pool: Pool,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => (this.started ? this.onMessages(chunk) : this.onStartup(chunk)));
    socket.on("error", () => this.close());
    socket.on("close", () => this.close());
  }

  private onStartup(chunk: Buffer) {
    this.startupBuffer = Buffer.concat([this.startupBuffer, chunk]);
    while (!this.started && this.startupBuffer.length >= 8) {
      const length = this.startupBuffer.readInt32BE(0);
      if (length < 8 || length > 10_000) return this.fail(errorResponse("08P01", "pooler: invalid startup packet"));
      if (this.startupBuffer.length < length) return;
      const code = this.startupBuffer.readInt32BE(4);
      const rest = this.startupBuffer.subarray(length);
      this.startupBuffer = rest;
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) this.socket.write("N");
      else if (code === CANCEL_REQUEST) return this.close();
      else if (code === PROTOCOL_3) {
        this.started = true;
        const key = randomBytes(8);
        this.socket.write(
          Buffer.concat([
            message("R", Buffer.from([0, 0, 0, 0])),
            ...this.pool.reportedParameters(),
            message("K", key),
            message("Z", Buffer.from("I")),
          ]),
        );
        if (rest.length) this.onMessages(rest);
      } else return this.fail(errorResponse("0A000", `pooler: unsupported protocol ${code >> 16}.${code & 0xffff}`));
    }
  }

  /** Client → backend, whole messages only; leases a backend for the first message of a transaction. */
  private onMessages(chunk: Buffer) {
    let parsed: ReturnType<MessageReader["push"]>;
    try {
      parsed = this.reader.push(chunk);
    } catch {
      return this.fail(errorResponse("08P01", "pooler: malformed message"));
    }
    const { data, messages } = parsed;
    if (!messages.length) return;
    let end = messages[messages.length - 1].end;
    for (const m of messages) {
      if (m.type === "X") {
        end = m.start;
        break;
      }
      if (m.type === "S" || m.type === "Q" || m.type === "F") {
        this.pendingSyncs++;
        this.unsynced = false;
      } else this.unsynced = true;
    }
    const terminate = end !== messages[messages.length - 1].end;
    const start = messages[0].start;
    if (end > start) {
      const out = data.subarray(start, end);
      if (this.backend) this.backend.write(out);
      else {
        this.queued.push(Buffer.from(out));
        if (!this.waiting) {
          this.waiting = true;
          this.pool.acquire(this);
        }
      }
    }
    if (terminate) this.close();
  }

  /** The pool hands this client a backend. */
  lease(backend: Backend) {
    this.waiting = false;
    this.backend = backend;
    backend.client = this;
    const queued = this.queued;
    this.queued = [];
    backend.write(queued.length === 1 ? queued[0] : Buffer.concat(queued));
  }

  /** Called by the backend on ReadyForQuery idle with nothing pending. */
  releaseBackend() {
    const backend = this.backend;
    this.backend = null;
    if (backend) {
      backend.client = null;
      this.pool.release(backend);
    }
  }

  /** No backend could be had (the server refused the connection: its error goes to the client). */
  fail(response: Buffer) {
    this.waiting = false;
    if (this.closed || this.socket.destroyed) return this.close();
    // Flush the error before closing; the peer closes in turn, or the timer does it.
    this.socket.end(response);
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.close(false);
  }

  /** Its backend died under it. */
  backendLost() {
    this.backend = null;
    this.fail(errorResponse("08006", "pooler: the server connection was lost"));
  }

  close(destroySocket = true) {
    if (destroySocket) this.socket.destroy();
    if (this.closed) return;
    this.closed = true;
    this.pool.clientGone(this);
    const backend = this.backend;
    this.backend = null;
    if (backend) {
      // Mid-transaction or mid-query: never hand this backend to anyone else.
      backend.client = null;
      backend.destroy();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------------

class Pool {
  readonly backends = new Set<Backend>();
  readonly idle: Backend[] = [];
  readonly waiters: Client[] = [];
  readonly clients = new Set<Client>();
  connecting = 0;
  stopped = false;
  private parameters: Buffer[] = [];
  /** Refused backend connections are logged once per outage, not once each. */
  private readonly outage: OutageLog;

  constructor(
    private readonly upstream: Upstream,
    private readonly size: number,
    log: (line: string) => void,
  ) {
    this.outage = new OutageLog(log, "pooler", `${upstream.host}:${upstream.port}`);
  }

  /** Opens the first backend, which also supplies the parameters reported to clients. */
  async warm() {
    const backend = await this.open();
    this.parameters = REPORTED_PARAMETERS.filter((name) => backend.parameters.has(name)).map((name) =>
      parameterStatus(name, name === "application_name" ? "" : backend.parameters.get(name)!),
    );
    this.release(backend);
  }

  reportedParameters() {
    return this.parameters;
  }

  private async open(): Promise<Backend> {
    this.connecting++;
    try {
      const backend = await Backend.open(this.upstream);
      this.outage.reached();
      this.backends.add(backend);
      backend.onClose = () => {
        this.backends.delete(backend);
        const i = this.idle.indexOf(backend);
        if (i >= 0) this.idle.splice(i, 1);
        this.dispatch();
      };
      return backend;
    } finally {
      this.connecting--;
    }
  }

  acquire(client: Client) {
    this.waiters.push(client);
    this.dispatch();
  }

  release(backend: Backend) {
    if (backend.closed) return;
    if (this.stopped || backend.status !== "I") return backend.destroy();
    this.idle.push(backend);
    this.dispatch();
  }

  clientGone(client: Client) {
    this.clients.delete(client);
    const i = this.waiters.indexOf(client);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  /** Hands free backends to waiting clients in arrival order; opens more while under `size`. */
  private dispatch() {
    while (this.waiters.length && !this.stopped) {
      const backend = this.idle.pop();
      if (backend) {
        this.waiters.shift()!.lease(backend);
        continue;
      }
      if (this.backends.size + this.connecting >= this.size) return;
      const client = this.waiters.shift()!;
      this.open().then(
        (opened) => {
          if (client.closed || this.stopped) this.release(opened);
          else client.lease(opened);
        },
        (error: UpstreamError) => {
          this.outage.refused(error.message);
          client.fail(error.response ?? errorResponse("08001", `pooler: ${error.message}`));
          this.dispatch();
        },
      );
    }
  }

  stop() {
    this.stopped = true;
    this.outage.stop();
    for (const client of [...this.clients]) client.close();
    for (const backend of [...this.backends]) backend.destroy();
  }
}

/** Starts the pooler on `host:port` (a free port by default) in front of `upstreamUrl`. */
export async function startPgPooler({
  upstreamUrl,
  size = 20,
  host = "127.0.0.1",
  port = 0,
  applicationName = "hauth-pooler",
  log = () => {},
}: PoolerOptions): Promise<RunningPooler> {
  if (!(size >= 1)) throw new Error(`pooler size must be at least 1 (got ${size})`);
  const upstream = parseUpstream(upstreamUrl, applicationName);
  const pool = new Pool(upstream, size, log);
  await pool.warm();
  const server = createServer((socket) => {
    if (pool.stopped) return socket.destroy();
    pool.clients.add(new Client(socket, pool));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const url = `postgres://${encodeURIComponent(upstream.user)}@${host}:${bound}/${encodeURIComponent(upstream.database)}`;
  return {
    url,
    port: bound,
    stats: () => ({
      backends: pool.backends.size,
      idle: pool.idle.length,
      connecting: pool.connecting,
      waiting: pool.waiters.length,
      clients: pool.clients.size,
    }),
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      pool.stop();
      await closed;
    },
  };
}
