/**
 * The local server's front door: what the edge does before a request reaches a Worker, for the one
 * header the service trusts from it. Cloudflare sets `CF-Connecting-IP` to the address the
 * connection came from, whatever the client sent; Miniflare's entry only fills it in when the
 * client sent none, so a client could pick its own address and escape every per-IP limit. This
 * front listens where the service is reached, sets the header from the socket (and drops
 * Miniflare's internal `MF-*` headers a client could also send), and passes the request on to
 * Miniflare, streaming both ways.
 */
import { Agent, createServer, request as forward, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiError } from "../../shared/kernel/errors";

/** Headers of one connection, not of the request: never forwarded (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "upgrade", "te", "trailer"]);

/** The socket's address as the edge writes it: IPv4 plainly, not as an IPv4-mapped IPv6 address. */
export function connectingIp(remoteAddress: string | undefined): string {
  const address = remoteAddress ?? "";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/** The request's headers as the Worker may see them: the client's, without spoofable ones, with the socket's address. */
function forwardedHeaders(headers: IncomingHttpHeaders, remoteAddress: string | undefined): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (HOP_BY_HOP.has(name) || name === "cf-connecting-ip" || name.startsWith("mf-")) continue;
    kept[name] = value;
  }
  kept["cf-connecting-ip"] = connectingIp(remoteAddress);
  return kept;
}

/** The most bytes of request line and headers the front reads: as much as the service's largest body. */
const MAX_HEAD_BYTES = 256 * 1024;

/**
 * The largest request body the front reads and passes on: far above the service's own limit (256
 * KiB), so that every function answers its own `413 PAYLOAD_TOO_LARGE` (with its CORS headers and
 * request id) to any body a client plausibly sends; a larger one is answered here, in the same shape.
 */
const MAX_FORWARDED_BODY_BYTES = 16 * 1024 * 1024;

/** The request's body, read whole; null once it passed `MAX_FORWARDED_BODY_BYTES` (the rest is read and dropped). */
function wholeBody(incoming: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    incoming.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length <= MAX_FORWARDED_BODY_BYTES) chunks.push(chunk);
      else chunks.length = 0;
    });
    incoming.on("end", () => resolve(length <= MAX_FORWARDED_BODY_BYTES ? Buffer.concat(chunks, length) : null));
    incoming.on("error", reject);
  });
}

export interface ClientAddressFront {
  url: string;
  stop(): Promise<void>;
}

/** Starts the front on `host:port` (0: any free port), forwarding to `target` (Miniflare's own URL). */
export async function startClientAddressFront({ host, port, target }: { host: string; port: number; target: string }) {
  const upstream = new URL(target);
  // A connection per request, never a kept-alive one: a kept socket that workerd closes while idle
  // is found closed only when the next request is written to it, which then fails as a 502 ("the
  // local runtime did not answer"), seen under load. A loopback connect costs well under a millisecond.
  const agent = new Agent({ keepAlive: false });
  // Node's default (16 KiB of request line and headers) is far below workerd's, which answered
  // every request the front now takes first: a long query string must reach the Worker's own answer.
  const server: Server = createServer({ maxHeaderSize: MAX_HEAD_BYTES }, async (incoming, outgoing) => {
    // The body is read whole before the request goes on, and sent in one write. A function may
    // answer without reading the body (a CORS preflight, a refusal by declared length); workerd then
    // reads what has arrived and closes the connection, and a body still trickling in from here is
    // reset, with the answer unread: a 502 for one OPTIONS with a 300 KB body in four, seen. A
    // client writing straight to workerd sends its body at once and never saw it.
    const body = await wholeBody(incoming).catch(() => undefined);
    if (body === undefined) return void outgoing.destroy();
    if (body === null) {
      const tooLarge = new ApiError("PAYLOAD_TOO_LARGE");
      outgoing.writeHead(tooLarge.status, { "content-type": "application/json" });
      return void outgoing.end(JSON.stringify(tooLarge.body()));
    }
    const headers = forwardedHeaders(incoming.headers, incoming.socket.remoteAddress);
    if (headers["transfer-encoding"] !== undefined || headers["content-length"] !== undefined) {
      delete headers["transfer-encoding"];
      headers["content-length"] = String(body.length);
    }
    const proxied = forward(
      { agent, host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        const headers: IncomingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
        outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
        answer.pipe(outgoing);
      },
    );
    proxied.on("error", () => {
      // Once the answer has begun, a fault can only cut it short: the client sees a truncated answer.
      if (outgoing.headersSent) return void outgoing.destroy();
      outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end("the local runtime did not answer");
    });
    proxied.end(body);
  });
  // A request the front cannot parse (a request line and headers over MAX_HEAD_BYTES, say) is
  // answered as the runtime answers it (docs/functions.md, "Every function": 431, or 400, no JSON),
  // and the rest of what the client sends is read and dropped: closing at once would reset a client
  // still writing, which then never sees the answer.
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    const status = error.code === "HPE_HEADER_OVERFLOW" ? "431 Request Header Fields Too Large" : "400 Bad Request";
    socket.on("data", () => {});
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  const shownHost = reachable.includes(":") ? `[${reachable}]` : reachable;
  return {
    url: `http://${shownHost}:${bound.port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  } satisfies ClientAddressFront;
}
