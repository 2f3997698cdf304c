import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InProcessRateLimiter, type RateLimitRule } from "../../shared/edge/rate-limit";

export interface RunningRateLimitServer {
  /** The URL the workers post to (LOCAL_RATE_LIMIT_URL); its path is a random secret. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The rate-limit counters of one local run, shared by every worker: each function runs in its own
 * workerd isolate, so an in-isolate limiter would give every function (and every isolate of a
 * deployment) a budget of its own. One InProcessRateLimiter lives here, in the Node process that
 * runs them all, and the workers ask it over loopback HTTP (`POST {rule, identifier}` → the
 * decision), one request at a time on Node's single thread, so concurrent requests are counted
 * exactly. Used when no Upstash is configured; deployed, the same counters are Upstash's.
 */
export async function startRateLimitServer({ host = "127.0.0.1" }: { host?: string } = {}): Promise<RunningRateLimitServer> {
  const limiter = new InProcessRateLimiter();
  const path = `/${randomBytes(16).toString("hex")}`;
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => reply(res, 500, { error: String((error as Error).message) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "POST" || req.url !== path) return reply(res, 404, { error: "not found" });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { rule?: RateLimitRule; identifier?: unknown };
    const { rule, identifier } = body;
    if (
      !rule ||
      typeof rule.name !== "string" ||
      !Number.isInteger(rule.limit) ||
      !Number.isInteger(rule.windowSeconds) ||
      rule.windowSeconds <= 0 ||
      (rule.burst !== undefined && !(Number.isInteger(rule.burst) && rule.burst > 0)) ||
      typeof identifier !== "string"
    ) {
      return reply(res, 400, { error: "expected {rule: {name, limit, windowSeconds, burst?}, identifier}" });
    }
    const { name, limit, windowSeconds, burst } = rule;
    return reply(res, 200, await limiter.limit({ name, limit, windowSeconds, ...(burst ? { burst } : {}) }, identifier));
  }

  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}${path}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function reply(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
