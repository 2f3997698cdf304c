import { request } from "node:http";
import { expectDocumented } from "./contract";
import { serviceUnderTest } from "./service";

/**
 * A client address of its own to send from (`from`), so that rate-limit buckets keyed by client
 * address never mix across tests or runs: a random address of 127.0.0.0/8 other than 127.0.0.x,
 * which Linux's loopback accepts as a source. The service reads the address from the connection, as
 * the edge does (scripts/local/client-address.ts): a header the client sends is never believed.
 */
export function freshIp(): string {
  const octet = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1));
  return `127.${octet(1, 254)}.${octet(0, 255)}.${octet(1, 254)}`;
}

/**
 * fetch, sent from the local address `from` (the harness's own HTTP/1.1 client: fetch cannot choose
 * its source address). The answer is read whole.
 */
export function fetchFrom(
  from: string,
  url: URL | string,
  init: { method: string; headers?: Record<string, string>; body?: string | Uint8Array },
) {
  const target = new URL(url);
  return new Promise<Response>((resolve, reject) => {
    // Content-Length as fetch sends it: Node's client frames no body of its own on DELETE or OPTIONS,
    // and an unframed body is the next request's bytes to the server (a 400 that is no answer of ours).
    const length = init.body === undefined ? undefined : String(Buffer.byteLength(init.body));
    const headers = { accept: "*/*", ...(length === undefined ? {} : { "content-length": length }), ...init.headers };
    const sent = request(target, { method: init.method, headers, localAddress: from }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("error", reject);
      answer.on("end", () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(answer.headers)) for (const one of [value ?? []].flat()) headers.append(name, one);
        const status = answer.statusCode ?? 0;
        const body = status === 204 || status === 304 || init.method === "HEAD" ? null : Buffer.concat(chunks);
        const response = new Response(body, { status, headers });
        Object.defineProperty(response, "url", { value: target.href });
        resolve(response);
      });
    });
    sent.on("error", reject);
    sent.setTimeout(60_000, () => sent.destroy(new Error("no answer in 60 s")));
    sent.end(init.body);
  });
}

export interface CallOptions {
  method?: string;
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** Sets the server clock for this request (the service honours it only in test mode). */
  now?: Date;
  /** The client address to send from (freshIp): per-IP limits count it. */
  from?: string;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One HTTP call to `/functions/v1/<name>` on the service under test (./service.ts). */
export async function call<T = any>(name: string, options: CallOptions = {}): Promise<CallResult<T>> {
  const url = new URL(`${serviceUnderTest().baseUrl}/functions/v1/${name}`);
  for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers["x-service-api-key"] = options.key;
  if (options.now) headers["x-test-now"] = options.now.toISOString();
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const method = options.method ?? (body === undefined ? "GET" : "POST");
  const response = options.from
    ? await fetchFrom(options.from, url, { method, headers, body })
    : await fetch(url, { method, headers, body });
  return resultOf<T>(response, method);
}

/**
 * A response read whole: status, headers, the body parsed as JSON where it is JSON, and its text;
 * checked against its surface's OpenAPI document (./contract.ts) as the answer to `method`.
 */
export async function resultOf<T = any>(response: Response, method: string): Promise<CallResult<T>> {
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // non-JSON bodies stay text
  }
  const result = { status: response.status, headers: response.headers, body: parsed as T, text };
  await expectDocumented(method, response.url, result);
  return result;
}

/** Asserts nothing; returns the `{error, code}` pair of an error response for compact expectations. */
export function errorOf(result: CallResult): { status: number; code: string } {
  return { status: result.status, code: (result.body as { code?: string })?.code ?? "" };
}

/** Fresh replay-guard headers (spec 4.1) for a request at `now`. */
export function replayHeaders(now: Date = new Date()): Record<string, string> {
  return {
    "x-service-timestamp": String(Math.floor(now.getTime() / 1000)),
    "x-service-nonce": `n-${crypto.randomUUID()}`,
  };
}

/**
 * The limiters count in minute windows of the real clock (Upstash reads its own; no test header
 * reaches it), and a burst that straddles two windows is weighed by the sliding window, so its
 * count is exact only inside one window. A test that spends a large budget starts with `seconds`
 * left in the current window: when fewer are left, it waits for the next window to open (at most
 * `seconds`). The wait is only where the test starts; no expectation depends on time passing.
 */
export async function inOneWindow(seconds: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
