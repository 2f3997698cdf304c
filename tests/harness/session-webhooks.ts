/**
 * The webhook side of the session tests (hosted-session-events, v1-session-events): a merchant
 * with an endpoint on a fresh loopback receiver of the file's own service, and the envelopes delivered.
 */
import type { OwnServiceFixture } from "./own-service";
import type { Receiver } from "./webhook-receiver";

/** A merchant with a webhook endpoint on a fresh loopback receiver of `service` (closed after the test). */
export async function merchantWithEndpoint(service: OwnServiceFixture) {
  const { merchant, receiver, endpoint } = await service.subscribed();
  return { merchant, key: merchant.keys.sk_test, receiver, secret: endpoint.secret };
}

/** The delivered envelopes of one type, by the id in their data. */
export function delivered(receiver: Receiver, type: string) {
  const envelopes = [...receiver.processed().values()].map((r) => r.envelope).filter((e) => e.type === type);
  return new Map(envelopes.map((e) => [e.data.id as string, e]));
}
