import { call } from "./http";

interface CardCallOptions {
  now?: Date;
  locale?: string;
  headers?: Record<string, string>;
}

function headersOf(bearer: string | null, options: CardCallOptions): Record<string, string> {
  return {
    ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    ...(options.locale ? { "accept-language": options.locale } : {}),
    ...options.headers,
  };
}

/** agent-verification-request with a first-party session token (or none). */
export function requestCard(bearer: string | null, body: unknown, options: CardCallOptions = {}) {
  return call("agent-verification-request", { body, headers: headersOf(bearer, options), now: options.now });
}

/** agent-verification-result with a first-party session token (or none). */
export function cardResult(bearer: string | null, verificationId: string, options: CardCallOptions = {}) {
  return call("agent-verification-result", {
    query: { verification_id: verificationId },
    headers: headersOf(bearer, options),
    now: options.now,
  });
}

/** The single-use session token a card's url carries in its fragment. */
export function tokenOfCard(url: string): string {
  return new URL(url).hash.slice(1);
}
