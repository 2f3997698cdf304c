/**
 * The webhook side of the session tests (hosted-session-events, v1-session-events): a merchant
 * with an endpoint on a fresh loopback receiver of its own service, and the envelopes delivered.
 */
import { createEndpoint } from "../../shared/webhooks/endpoints";
import { merchantFactory, testDb } from "./factories";
import type { OwnService } from "./own-service";
import { type Receiver, startReceiver } from "./webhook-receiver";

/** A merchant with a webhook endpoint on a fresh loopback receiver (kept in `receivers`, for closing after the test). */
export async function merchantWithEndpoint(own: OwnService, receivers: Receiver[]) {
  const merchant = await merchantFactory();
  const receiver = await startReceiver();
  receivers.push(receiver);
  const endpoint = await createEndpoint(testDb(), own.server.bindings.WEBHOOK_SECRET_KEY, {
    merchantId: merchant.merchant_id,
    environment: "test",
    url: receiver.url,
    allowLoopbackHttp: true,
    now: new Date(),
  });
  return { merchant, key: merchant.keys.sk_test, receiver, secret: endpoint.secret };
}

/** The delivered envelopes of one type, by the id in their data. */
export function delivered(receiver: Receiver, type: string) {
  const envelopes = [...receiver.processed().values()].map((r) => r.envelope).filter((e) => e.type === type);
  return new Map(envelopes.map((e) => [e.data.id as string, e]));
}
