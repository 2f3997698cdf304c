import { type CallResult, resultOf } from "./http";
import { serviceUnderTest } from "./service";

export interface ResourceCallOptions {
  method?: string;
  /** The secret key sent as `Authorization: Bearer`; null sends none. */
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  idempotencyKey?: string;
  /** Sets the server clock for this request (the service honours it only in test mode). */
  now?: Date;
}

/** One HTTP call to the resource API, `/v1<path>`, on the service under test. */
export async function v1<T = any>(path: string, options: ResourceCallOptions = {}): Promise<CallResult<T>> {
  const url = new URL(`${serviceUnderTest().baseUrl}/v1${path}`);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
  if (options.now) headers["x-test-now"] = options.now.toISOString();
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] ??= "application/json";
  return resultOf<T>(await fetch(url, { method: options.method ?? (body === undefined ? "GET" : "POST"), headers, body }));
}
