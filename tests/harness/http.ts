import { randomHex } from "../../shared/lib/crypto";
import { expectDocumented } from "./contract";
import { serviceUnderTest } from "./service";

/**
 * A caller IP of its own (IPv6 documentation range), for CF-Connecting-IP: rate-limit buckets keyed
 * by client address never mix across tests or runs.
 */
export function freshIp(): string {
  return `2001:db8:${randomHex(2)}:${randomHex(2)}::${randomHex(2)}`;
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
  return resultOf<T>(await fetch(url, { method, headers, body }), method);
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
