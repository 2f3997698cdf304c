import { type AddressInfo, createServer, connect as netConnect, type Server, type Socket } from "node:net";

const READY_FOR_QUERY = "Z".charCodeAt(0);
const PARSE = "P".charCodeAt(0);
const QUERY = "Q".charCodeAt(0);

/** The NUL-terminated string of `message` at `at`. */
function cString(message: Buffer, at: number): string {
  return message.subarray(at, message.indexOf(0, at)).toString("utf8");
}

export interface DatabaseProxy {
  /** `upstreamUrl` with the proxy's host and port. */
  url: string;
  /** Drops every open connection and stops listening (connecting is refused), as a stopped server does. */
  refuse(): void;
  /** Listens on the same port again. */
  accept(): Promise<void>;
  /**
   * Lets the connection that sends a statement containing `text` have its answer, then refuses
   * (as `refuse()`) from that connection's next message on: the database goes away right after
   * that statement committed.
   */
  refuseAfter(text: string): void;
  /**
   * The statements clients sent since the last call, in order: the text of each Parse and simple
   * Query message (one per round trip for the service's clients, which write a statement's
   * Parse to Sync at once), so a test can count a request's round trips on the wire.
   */
  takeStatements(): string[];
  stop(): Promise<void>;
}

/**
 * A TCP proxy on loopback in front of the Postgres server of `upstreamUrl`, for tests of what the
 * service and the local poolers do while the database is away and once it is back: real
 * connections to a real server that stop being served on the test's word, never a mocked driver.
 */
export async function startDatabaseProxy(upstreamUrl: string): Promise<DatabaseProxy> {
  const upstream = new URL(upstreamUrl);
  const connections = new Set<() => void>();
  let trigger: string | null = null;
  let statements: string[] = [];
  let listening: Server | null = null;
  let port = 0;

  const refuse = () => {
    listening?.close();
    listening = null;
    for (const close of [...connections]) close();
  };

  function proxied(client: Socket) {
    const backend = netConnect({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    const close = () => {
      connections.delete(close);
      client.destroy();
      backend.destroy();
    };
    connections.add(close);
    // The statement named by refuseAfter: seen from the client, then answered, then the next message refused.
    let stage: "none" | "sent" | "answered" = "none";
    let tail = "";
    // The client's messages, framed to read each statement's text: the first (startup or SSLRequest) has no type byte.
    let sent = Buffer.alloc(0);
    let typed = false;
    const readStatements = (chunk: Buffer) => {
      sent = Buffer.concat([sent, chunk]);
      for (;;) {
        const header = typed ? 5 : 4;
        if (sent.length < header) return;
        const length = sent.readInt32BE(typed ? 1 : 0) + (typed ? 1 : 0);
        if (sent.length < length) return;
        const message = sent.subarray(0, length);
        sent = sent.subarray(length);
        // A startup message goes on to typed messages; an SSLRequest (80877103) is followed by another startup.
        if (!typed) typed = message.length < 8 || message.readInt32BE(4) !== 80877103;
        else if (message[0] === PARSE) statements.push(cString(message, message.indexOf(0, 5) + 1));
        else if (message[0] === QUERY) statements.push(cString(message, 5));
      }
    };
    client.on("data", (chunk: Buffer) => {
      readStatements(chunk);
      if (stage === "answered") return refuse();
      const text = tail + chunk.toString("latin1");
      tail = text.slice(-200);
      if (trigger && text.includes(trigger)) {
        trigger = null;
        stage = "sent";
      }
      backend.write(chunk);
    });
    // The server's messages, framed (type byte, int32 length) to see the statement's ReadyForQuery.
    let pending = Buffer.alloc(0);
    backend.on("data", (chunk: Buffer) => {
      client.write(chunk);
      if (stage !== "sent") return;
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
        if (pending[0] === READY_FOR_QUERY) stage = "answered";
        pending = pending.subarray(1 + pending.readInt32BE(1));
      }
    });
    for (const socket of [client, backend]) {
      socket.on("error", close);
      socket.on("close", close);
    }
  }

  async function accept() {
    if (listening) return;
    const server = createServer(proxied);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    port = (server.address() as AddressInfo).port;
    listening = server;
  }

  await accept();
  const url = new URL(upstreamUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    refuse,
    accept,
    refuseAfter: (text) => {
      trigger = text;
    },
    takeStatements: () => {
      const taken = statements;
      statements = [];
      return taken;
    },
    async stop() {
      refuse();
    },
  };
}
