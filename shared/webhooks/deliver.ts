/**
 * One attempt: POST the signed envelope to the endpoint and classify the answer. 2xx is success;
 * everything else is a failure, including a redirect (never followed: `redirect: "manual"`), a
 * timeout and a connection error. 410 Gone also tells the worker to disable the endpoint, and a
 * `Retry-After` on a failure is returned as an absolute time.
 */
import type { WebhookEnvelope } from "./events";
import { parseRetryAfter } from "./retry";
import { SIGNATURE_HEADER, signWebhook } from "./signature";

const USER_AGENT = "HumanAuthorisation-Webhooks/1.0";

interface AttemptResult {
  ok: boolean;
  /** HTTP status, or null when no response came. */
  status: number | null;
  /** Why it failed (null on success). */
  error: string | null;
  /** The receiver's Retry-After, absolute; null when absent or not in the future. */
  retryAfter: Date | null;
  /** 410 Gone: the receiver asks never to be called again. */
  gone: boolean;
  /** When the request was sent (the signature's `t`). */
  sentAt: Date;
  /** When the answer (or the failure) came. */
  finishedAt: Date;
  /** The first characters of the answer's body (at most RESPONSE_EXCERPT_LENGTH), for the delivery log; null when none came. */
  excerpt: string | null;
}

/** How much of a receiver's answer the delivery log keeps (docs/management.md, "Deliveries"). */
export const RESPONSE_EXCERPT_LENGTH = 256;
/** The most bytes read of an answer to find its first characters; the rest is never read. */
const EXCERPT_BYTES = 1024;

/** The first characters of a body: at most EXCERPT_BYTES are read, then the stream is cancelled. */
async function excerptOf(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // a body that breaks off keeps what came
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(0, EXCERPT_BYTES)).slice(0, RESPONSE_EXCERPT_LENGTH);
}

interface SendOptions {
  /** The worker's clock. */
  clock: () => Date;
  timeoutMs: number;
  fetcher?: typeof fetch;
}

/**
 * Sends `envelope` to `url`, signed with every secret in `secrets` (one `v1` each).
 *
 * @example const result = await sendWebhook(endpoint.url, envelope, secrets, { clock, timeoutMs: 15_000 });
 */
export async function sendWebhook(
  url: string,
  envelope: WebhookEnvelope,
  secrets: readonly string[],
  { clock, timeoutMs, fetcher = fetch }: SendOptions,
): Promise<AttemptResult> {
  const body = JSON.stringify(envelope);
  const sentAt = clock();
  const signature = await signWebhook(body, secrets, Math.floor(sentAt.getTime() / 1000));
  const failure = (status: number | null, error: string, extra: Partial<AttemptResult> = {}): AttemptResult => ({
    ok: false,
    status,
    error,
    retryAfter: null,
    gone: false,
    sentAt,
    finishedAt: clock(),
    excerpt: null,
    ...extra,
  });
  let response: Response;
  try {
    response = await fetcher(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        [SIGNATURE_HEADER]: signature,
        "service-event-id": envelope.id,
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const { name, message } = (error ?? {}) as { name?: string; message?: string };
    if (name === "TimeoutError" || name === "AbortError") return failure(null, `timeout: no response within ${timeoutMs} ms`);
    return failure(null, `connection failed: ${message ?? String(error)}`);
  }
  // only the status counts; the body's first bytes are kept for the delivery log, the rest never read
  const excerpt = await excerptOf(response);
  const status = response.status;
  if (status >= 200 && status < 300)
    return { ok: true, status, error: null, retryAfter: null, gone: false, sentAt, finishedAt: clock(), excerpt };
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"), clock());
  if (status === 410) return failure(status, "410 Gone: endpoint disabled", { gone: true, excerpt });
  if (status >= 300 && status < 400) return failure(status, `redirect ${status} not followed`, { retryAfter, excerpt });
  return failure(status, `status ${status}`, { retryAfter, excerpt });
}
