/**
 * A request's statements on the PostgreSQL wire protocol, straight on the runtime's TCP socket
 * (docs/decisions.md, D-505). A Worker opens one connection per request (D-006), and what that
 * connection costs in the isolate is what a decision costs at the edge: postgres.js spent about three
 * quarters of the worker's CPU on it, most in the Node compatibility its Cloudflare build runs on
 * (an EventEmitter socket that copies every chunk into a Buffer) and in a driver built for long-lived
 * pools. This client does only what a request does: open, authenticate (trust, clear text, MD5,
 * SCRAM-SHA-256, over TLS when the URL asks for it), run statements one after another with text
 * parameters (unnamed extended protocol: no prepared statement survives, so any transaction pooler
 * and Hyperdrive work unchanged), parse json, jsonb, booleans and small integers, and close.
 * Transactions stay postgres.js's (shared/kernel/db/client.ts, requestDatabase).
 */

import { md5 } from "./md5";

/** The duplex stream a socket is: `cloudflare:sockets`' Socket, or a test's own. */
export interface WireSocket {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
  closed: Promise<void>;
  close(): Promise<void>;
  /** Upgrades the connection to TLS (cloudflare:sockets' `startTls`, for a socket opened with `secureTransport: "starttls"`). */
  startTls?(options?: { expectedServerHostname?: string }): WireSocket;
}

/** Opens a TCP connection; `tls` when the connection will be upgraded after PostgreSQL's SSLRequest. */
export type OpenSocket = (host: string, port: number, tls: boolean) => WireSocket | Promise<WireSocket>;

/** A failed statement or startup as PostgreSQL reported it; named as postgres.js names its errors, which the error mapping reads. */
export class WireError extends Error {
  override name = "PostgresError";
  constructor(
    message: string,
    readonly code: string,
    readonly detail?: string,
    readonly severity?: string,
  ) {
    super(message);
  }
}

/** The runtime's socket: `cloudflare:sockets` in workerd (imported when first used, so Node can load this module). */
export const workerdSocket: OpenSocket = async (host, port, tls) => {
  const { connect } = await import("cloudflare:sockets");
  return connect({ hostname: host, port }, tls ? { secureTransport: "starttls", allowHalfOpen: false } : { allowHalfOpen: false });
};

/** What a connection string names, as postgres.js reads it (user, password, database, host, port, sslmode; other query parameters are startup parameters). */
export interface WireTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  tls: "disable" | "prefer" | "require";
  parameters: Record<string, string>;
}

export function wireTarget(url: string): WireTarget {
  const u = new URL(url);
  const user = decodeURIComponent(u.username) || "postgres";
  const parameters: Record<string, string> = {};
  let tls: WireTarget["tls"] = "disable";
  for (const [name, value] of u.searchParams) {
    if (name === "sslmode" || name === "ssl")
      tls = value === "prefer" ? "prefer" : ["disable", "false", "allow"].includes(value) ? "disable" : "require";
    else parameters[name] = value;
  }
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: Number(u.port || 5432),
    user,
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.slice(1)) || user,
    tls,
    parameters,
  };
}

/** A row as postgres.js answers one: column name to value. */
export type WireRow = Record<string, unknown>;

const CONNECT_TIMEOUT_MS = 5000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Type oids whose text the client parses: json, jsonb, bool, int2, int4, oid. Anything else is its text. */
const JSON_TYPES = new Set([114, 3802]);
const INT_TYPES = new Set([21, 23, 26]);
const BOOL_TYPE = 16;

/**
 * One connection, opened by the first statement and closed by `end`. Statements run one at a time
 * in the order they were asked for (each is Parse, Bind, Describe, Execute, Sync in one write).
 */
export class WireClient {
  private readonly target: WireTarget;
  private connection: Promise<Connection> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** Statements asked for and not yet answered: `end` needs no timer when there are none. */
  private pending = 0;
  private ended = false;

  constructor(
    url: string,
    private readonly open: OpenSocket = workerdSocket,
  ) {
    this.target = wireTarget(url);
  }

  /** Runs one statement with text parameters (objects as JSON, dates as ISO text); its rows. */
  unsafe(query: string, parameters: readonly unknown[] = []): Promise<WireRow[]> {
    this.pending++;
    const run = this.queue.then(async () => {
      if (this.ended) throw new WireError("The connection was ended", "CONNECTION_ENDED");
      this.connection ??= Connection.open(this.target, this.open);
      let connection: Connection;
      try {
        connection = await this.connection;
      } catch (error) {
        this.connection = null;
        throw error;
      }
      return connection.query(query, parameters);
    });
    this.queue = run.then(
      () => void this.pending--,
      () => void this.pending--,
    );
    return run;
  }

  /**
   * Sends Terminate and closes the socket, after the statements asked for so far, or after
   * `timeout` seconds even if one of them has not answered (as postgres.js's `end({timeout})`).
   */
  async end({ timeout }: { timeout?: number } = {}): Promise<void> {
    this.ended = true;
    if (this.pending > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = timeout === undefined ? null : new Promise<void>((resolve) => (timer = setTimeout(resolve, timeout * 1000)));
      await (expired ? Promise.race([this.queue, expired]) : this.queue);
      clearTimeout(timer);
    }
    const connection = await this.connection?.catch(() => null);
    await connection?.close();
  }
}

/** Bytes arrive in chunks; messages are cut from them without copying unless one spans two chunks. */
class Connection {
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private writer: WritableStreamDefaultWriter<Uint8Array>;
  private buffer: Uint8Array = new Uint8Array(0);
  private offset = 0;

  private constructor(private socket: WireSocket) {
    this.reader = socket.readable.getReader();
    this.writer = socket.writable.getWriter();
  }

  static async open(target: WireTarget, open: OpenSocket): Promise<Connection> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new WireError(`connect to ${target.host}:${target.port} timed out`, "CONNECT_TIMEOUT")),
        CONNECT_TIMEOUT_MS,
      );
    });
    let socket: WireSocket | undefined;
    try {
      return await Promise.race([
        (async () => {
          socket = await open(target.host, target.port, target.tls !== "disable");
          const connection = new Connection(socket);
          if (target.tls !== "disable") await connection.startTls(target);
          await connection.startup(target);
          return connection;
        })(),
        timeout,
      ]);
    } catch (error) {
      await socket?.close().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SSLRequest, then TLS on the same socket; a server that refuses is an error unless TLS was only preferred. */
  private async startTls(target: WireTarget): Promise<void> {
    await this.writer.write(message(null, int32(80877103)));
    const answer = await this.readBytes(1);
    if (answer === 78 /* N */) {
      if (target.tls === "require") throw new WireError("The server does not accept TLS connections", "TLS_REFUSED");
      return;
    }
    if (!this.socket.startTls) throw new WireError("This socket cannot start TLS", "TLS_UNSUPPORTED");
    this.reader.releaseLock();
    this.writer.releaseLock();
    this.socket = this.socket.startTls({ expectedServerHostname: target.host });
    this.reader = this.socket.readable.getReader();
    this.writer = this.socket.writable.getWriter();
  }

  /** The startup message, the server's authentication request answered, then everything up to ReadyForQuery. */
  private async startup(target: WireTarget): Promise<void> {
    const parameters = { user: target.user, database: target.database, client_encoding: "UTF8", ...target.parameters };
    const pairs = Object.entries(parameters).flatMap(([name, value]) => [cstring(name), cstring(value)]);
    await this.writer.write(message(null, int32(196608), ...pairs, new Uint8Array(1)));
    let scram: Scram | null = null;
    for (;;) {
      const { type, body } = await this.next();
      if (type === 90 /* Z */) return;
      if (type === 69 /* E */) throw errorOf(body);
      if (type !== 82 /* R */) continue; // ParameterStatus, BackendKeyData, notices
      const kind = readInt32(body, 0);
      if (kind === 0) continue;
      if (kind === 3) await this.writer.write(message(112, cstring(target.password)));
      else if (kind === 5) await this.writer.write(message(112, cstring(md5Password(target, body.subarray(4, 8)))));
      else if (kind === 10) {
        if (!decoder.decode(body.subarray(4)).split("\0").includes("SCRAM-SHA-256"))
          throw new WireError("The server offers no SASL mechanism this client speaks", "SASL_UNSUPPORTED");
        scram = new Scram(target.password);
        const first = encoder.encode(scram.clientFirst());
        await this.writer.write(message(112, cstring("SCRAM-SHA-256"), int32(first.length), first));
      } else if (kind === 11 && scram)
        await this.writer.write(message(112, encoder.encode(await scram.clientFinal(decoder.decode(body.subarray(4))))));
      else if (kind === 12 && scram) scram.verify(decoder.decode(body.subarray(4)));
      else throw new WireError(`Authentication method ${kind} is not supported`, "AUTH_TYPE_NOT_IMPLEMENTED");
    }
  }

  async query(text: string, parameters: readonly unknown[]): Promise<WireRow[]> {
    await this.writer.write(statementMessages(text, parameters.map(serialise)));
    const rows: WireRow[] = [];
    let columns: { name: string; type: number }[] = [];
    let failure: WireError | null = null;
    for (;;) {
      const { type, body } = await this.next();
      if (type === 68 /* D */ && !failure) rows.push(rowOf(body, columns));
      else if (type === 84 /* T */) columns = columnsOf(body);
      else if (type === 69 /* E */) failure = errorOf(body);
      else if (type === 90 /* Z */) {
        if (failure) throw failure;
        return rows;
      }
    }
  }

  /**
   * Closes the socket without a Terminate message: a server that reads the end of the stream
   * between transactions ends the session as Terminate would (PostgreSQL logs it only at DEBUG1;
   * PgBouncer and Hyperdrive release the client), and the write was a sixth of the client's CPU
   * per request (docs/benchmarks.md).
   */
  async close(): Promise<void> {
    await this.socket.close().catch(() => undefined);
  }

  /** The next message: its type byte and its body (a view into the received bytes). */
  private async next(): Promise<{ type: number; body: Uint8Array }> {
    for (;;) {
      const available = this.buffer.length - this.offset;
      if (available >= 5) {
        const length = readInt32(this.buffer, this.offset + 1);
        if (available >= length + 1) {
          const type = this.buffer[this.offset];
          const body = this.buffer.subarray(this.offset + 5, this.offset + 1 + length);
          this.offset += length + 1;
          return { type, body };
        }
      }
      await this.fill();
    }
  }

  private async readBytes(count: number): Promise<number> {
    while (this.buffer.length - this.offset < count) await this.fill();
    const first = this.buffer[this.offset];
    this.offset += count;
    return first;
  }

  private async fill(): Promise<void> {
    const { done, value } = await this.reader.read();
    if (done || !value) throw new WireError("The server closed the connection", "CONNECTION_CLOSED");
    const rest = this.buffer.length - this.offset;
    if (rest === 0) this.buffer = value;
    else {
      const joined = new Uint8Array(rest + value.length);
      joined.set(this.buffer.subarray(this.offset));
      joined.set(value, rest);
      this.buffer = joined;
    }
    this.offset = 0;
  }
}

/**
 * Parse, Bind, Describe, Execute and Sync of one statement, written into one buffer: the unnamed
 * statement and portal, text parameters and text results.
 */
function statementMessages(text: string, values: readonly (Uint8Array | null)[]): Uint8Array {
  const query = encoder.encode(text);
  const parseLength = 4 + 1 + query.length + 1 + 2;
  let bindLength = 4 + 2 + 2 + 2 + 2;
  for (const value of values) bindLength += 4 + (value?.length ?? 0);
  const out = new Uint8Array(1 + parseLength + 1 + bindLength + 7 + 10 + 5);
  const view = new DataView(out.buffer);
  let at = 0;
  const head = (type: number, length: number) => {
    out[at] = type;
    view.setInt32(at + 1, length);
    at += 5;
  };
  head(80 /* P */, parseLength);
  out.set(query, at + 1); // after the statement's empty name
  at += 1 + query.length + 1 + 2; // the query's terminator, no parameter types
  head(66 /* B */, bindLength);
  at += 2; // the portal's and the statement's empty names
  at += 2; // no parameter formats: all text
  view.setInt16(at, values.length);
  at += 2;
  for (const value of values) {
    view.setInt32(at, value === null ? -1 : value.length);
    at += 4;
    if (value !== null) {
      out.set(value, at);
      at += value.length;
    }
  }
  at += 2; // no result formats: all text
  head(68 /* D */, 6);
  out[at] = 80; // the portal
  at += 2;
  head(69 /* E */, 9);
  at += 5; // the portal's empty name, no row limit
  head(83 /* S */, 4);
  return out;
}

function serialise(value: unknown): Uint8Array | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return encoder.encode(value);
  if (value instanceof Date) return encoder.encode(value.toISOString());
  if (typeof value === "object") return encoder.encode(JSON.stringify(value));
  return encoder.encode(String(value));
}

function columnsOf(body: Uint8Array): { name: string; type: number }[] {
  const count = readInt16(body, 0);
  const columns: { name: string; type: number }[] = [];
  let at = 2;
  for (let i = 0; i < count; i++) {
    const end = body.indexOf(0, at);
    const name = decoder.decode(body.subarray(at, end));
    columns.push({ name, type: readInt32(body, end + 7) });
    at = end + 19;
  }
  return columns;
}

function rowOf(body: Uint8Array, columns: { name: string; type: number }[]): WireRow {
  const row: WireRow = {};
  let at = 2;
  for (const column of columns) {
    const length = readInt32(body, at);
    at += 4;
    if (length < 0) {
      row[column.name] = null;
      continue;
    }
    const text = decoder.decode(body.subarray(at, at + length));
    at += length;
    row[column.name] = JSON_TYPES.has(column.type)
      ? JSON.parse(text)
      : column.type === BOOL_TYPE
        ? text === "t"
        : INT_TYPES.has(column.type)
          ? Number(text)
          : text;
  }
  return row;
}

/** ErrorResponse's fields (S severity, C code, M message, D detail) as an error. */
function errorOf(body: Uint8Array): WireError {
  const fields: Record<string, string> = {};
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const end = body.indexOf(0, at + 1);
    fields[String.fromCharCode(body[at])] = decoder.decode(body.subarray(at + 1, end));
    at = end + 1;
  }
  return new WireError(fields.M ?? "unknown error", fields.C ?? "XX000", fields.D, fields.S);
}

function message(type: number | null, ...parts: Uint8Array[]): Uint8Array {
  const length = 4 + parts.reduce((n, part) => n + part.length, 0);
  const head = type === null ? 0 : 1;
  const out = new Uint8Array(head + length);
  if (type !== null) out[0] = type;
  new DataView(out.buffer).setInt32(head, length);
  let at = head + 4;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function cstring(text: string): Uint8Array {
  const bytes = encoder.encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

function int32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, n);
  return out;
}

function readInt32(bytes: Uint8Array, at: number): number {
  return (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3] | 0;
}

function readInt16(bytes: Uint8Array, at: number): number {
  return (bytes[at] << 8) | bytes[at + 1];
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** `md5` + md5(md5(password + user) + salt), as PostgreSQL's MD5 method asks (md5.ts: Node's WebCrypto has none). */
function md5Password(target: WireTarget, salt: Uint8Array): string {
  const inner = hex(md5(encoder.encode(target.password + target.user)));
  return `md5${hex(md5(Uint8Array.from([...encoder.encode(inner), ...salt])))}`;
}

const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unbase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

async function hmac(key: Uint8Array<ArrayBuffer>, text: string): Promise<Uint8Array<ArrayBuffer>> {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, encoder.encode(text)));
}

/** SCRAM-SHA-256 (RFC 7677) without channel binding, as PostgreSQL runs it. */
class Scram {
  private readonly nonce = base64(crypto.getRandomValues(new Uint8Array(18)));
  private serverSignature = "";

  constructor(private readonly password: string) {}

  clientFirst(): string {
    return `n,,n=*,r=${this.nonce}`;
  }

  async clientFinal(serverFirst: string): Promise<string> {
    const fields = Object.fromEntries(serverFirst.split(",").map((part) => [part[0], part.slice(2)]));
    if (!fields.r?.startsWith(this.nonce)) throw new WireError("The server's SCRAM nonce is not ours", "SASL_SIGNATURE_MISMATCH");
    const key = await crypto.subtle.importKey("raw", encoder.encode(this.password), "PBKDF2", false, ["deriveBits"]);
    const salted = new Uint8Array(
      await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: unbase64(fields.s), iterations: Number(fields.i) }, key, 256),
    );
    const clientKey = await hmac(salted, "Client Key");
    const storedKey = new Uint8Array(await crypto.subtle.digest("SHA-256", clientKey));
    const withoutProof = `c=biws,r=${fields.r}`;
    const auth = `n=*,r=${this.nonce},${serverFirst},${withoutProof}`;
    const signature = await hmac(storedKey, auth);
    const proof = clientKey.map((byte, i) => byte ^ signature[i]);
    this.serverSignature = base64(await hmac(await hmac(salted, "Server Key"), auth));
    return `${withoutProof},p=${base64(proof)}`;
  }

  verify(serverFinal: string): void {
    if (serverFinal.split(",")[0] !== `v=${this.serverSignature}`)
      throw new WireError("The server did not return the correct signature", "SASL_SIGNATURE_MISMATCH");
  }
}
