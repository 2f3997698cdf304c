import { call, freshIp } from "./http";
import { boot, screenCall } from "./sessions";

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

/**
 * The hosted screen's endpoints as one person's browser calls them: from a client address of its
 * own (freshIp), since the screen limits its endpoints per client address as well as per session,
 * and every test file calls from the same host.
 */
export function screenClient() {
  const from = freshIp();
  return {
    boot: (token: unknown, options: Omit<Parameters<typeof boot>[1] & object, "headers" | "from"> = {}) =>
      boot(token, { ...options, from }),
    screenCall: (
      route: "complete" | "cancel",
      screenToken: string | null,
      body: unknown,
      options: Omit<Parameters<typeof screenCall>[3] & object, "headers"> & { headers?: Record<string, string> } = {},
    ) => screenCall(route, screenToken, body, { ...options, from }),
  };
}
