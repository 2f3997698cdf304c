/**
 * The local server's front door: what the edge does before a request reaches a Worker, for the one
 * header the service trusts from it. Cloudflare sets `CF-Connecting-IP` to the address the
 * connection came from, whatever the client sent; Miniflare's entry only fills it in when the
 * client sent none, so a client could pick its own address and escape every per-IP limit. This
 * front listens where the service is reached, sets the header from the socket (and drops
 * Miniflare's internal `MF-*` headers a client could also send), and passes the request on to
 * Miniflare, streaming both ways.
 */
import { Agent, createServer, request as forward, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

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
  const server: Server = createServer({ maxHeaderSize: MAX_HEAD_BYTES }, (incoming, outgoing) => {
    const proxied = forward(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: forwardedHeaders(incoming.headers, incoming.socket.remoteAddress),
      },
      (answer) => {
        const headers: IncomingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
        outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
        answer.pipe(outgoing);
      },
    );
    proxied.on("error", () => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end("the local runtime did not answer");
    });
    incoming.pipe(proxied);
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
