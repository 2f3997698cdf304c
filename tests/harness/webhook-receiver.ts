import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import type { WebhookEnvelope } from "../../shared/webhooks/events";
import { verifyWebhook } from "../../shared/webhooks/signature";
import { expectDocumentedEvent } from "./contract";

interface Received {
  /** Path and query the request was sent to. */
  path: string;
  rawBody: string;
  headers: IncomingHttpHeaders;
  envelope: WebhookEnvelope;
  /** Requests of this receiver in flight when this one arrived (itself included). */
  inFlight: number;
  /** Real time (ms) the request arrived and was answered (null while unanswered). */
  arrivedAt: number;
  answeredAt: number | null;
}

/** How to answer one request; `hang` never answers (until the receiver closes). */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  delayMs?: number;
  hang?: boolean;
}

export type Responder = (request: Received, index: number) => Answer | undefined;

export interface Receiver {
  url: string;
  /** Every request, in arrival order (duplicates included). */
  received: Received[];
  /** The first request of each event id: what a receiver that deduplicates on `id` processes. */
  processed(): Map<string, Received>;
  /** Most requests ever in flight at once. */
  maxInFlight: number;
  respond: Responder;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real HTTP webhook receiver on 127.0.0.1 (node:http): records every request with its raw body
 * and answers as `respond` says (200 by default; replaceable at any time).
 */
export async function startReceiver(respond: Responder = () => undefined): Promise<Receiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  let inFlight = 0;
  const receiver: Receiver = {
    url: "",
    received: [],
    maxInFlight: 0,
    respond,
    processed() {
      const seen = new Map<string, Received>();
      for (const request of receiver.received) if (!seen.has(request.envelope.id)) seen.set(request.envelope.id, request);
      return seen;
    },
    waitFor(count) {
      if (receiver.received.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      inFlight += 1;
      receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const request: Received = {
        path: req.url ?? "/",
        rawBody,
        headers: req.headers,
        envelope: JSON.parse(rawBody),
        inFlight,
        arrivedAt: Date.now(),
        answeredAt: null,
      };
      const index = receiver.received.push(request) - 1;
      for (const waiter of waiters.splice(0)) {
        if (receiver.received.length >= waiter.count) waiter.resolve();
        else waiters.push(waiter);
      }
      const answer = receiver.respond(request, index) ?? {};
      if (answer.hang) return;
      const finish = () => {
        inFlight -= 1;
        request.answeredAt = Date.now();
        reply(res, answer);
      };
      if (answer.delayMs) setTimeout(finish, answer.delayMs);
      else finish();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** The most requests of `requests` that were in flight at the same moment. */
export function maxOverlap(requests: readonly Received[]): number {
  const edges = requests.flatMap((r) => [
    { at: r.arrivedAt, delta: 1 },
    { at: r.answeredAt ?? Infinity, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.delta));
  return most;
}

function reply(res: ServerResponse, { status = 200, headers = {} }: Answer) {
  res.writeHead(status, { "content-type": "text/plain", ...headers });
  res.end(status >= 200 && status < 300 ? "ok" : "no");
}

/**
 * Asserts that `request` is signed by every one of `signers` and by nothing else, twice: with the
 * project's helper (`verifyWebhook`) and independently, recomputing each HMAC with node:crypto.
 * `now` is the clock of the pass that sent it.
 */
export async function expectSignedBy(request: Received, signers: string[], now: Date) {
  await expectDocumentedEvent(request.rawBody);
  const header = request.headers["service-signature"] as string;
  expect(header).toMatch(/^t=\d+(,v1=[0-9a-f]{64})+$/);
  for (const secret of signers) {
    expect(await verifyWebhook(request.rawBody, header, [secret], { now })).toMatchObject({ ok: true });
  }

  const [t, ...macs] = header.split(",");
  const timestamp = Number(t.slice(2));
  expect(Math.abs(timestamp - now.getTime() / 1000)).toBeLessThan(300);
  const given = macs.map((mac) => Buffer.from(mac.slice(3), "hex"));
  expect(given).toHaveLength(signers.length);
  for (const secret of signers) {
    const expected = createHmac("sha256", secret).update(`${timestamp}.${request.rawBody}`, "utf8").digest();
    expect(given.some((mac) => timingSafeEqual(mac, expected))).toBe(true);
  }
}
