/**
 * The account's webhook endpoints and their delivery log (docs/management.md, "Webhooks"): create
 * (the `whsec_` secret shown once), list, read, update the URL and event types, disable and enable,
 * rotate the secret (both valid for at most 24 hours), send a test event, page the deliveries with
 * every attempt, replay one delivery or a time range. Secrets are minted and sealed here
 * (shared/webhooks/endpoints.ts), so the database only receives them encrypted.
 */
import * as v from "valibot";
import type { Config } from "../kernel/config";
import { decodeCursor, nextCursor } from "../kernel/cursor";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { canonicalUuid } from "../lib/uuid";
import { checkEndpointUrl, checkEventTypes, ROTATION_OVERLAP_SECONDS } from "../webhooks/endpoints";
import type { EndpointView } from "../webhooks/rpc";
import { mintEndpointSecret, sealEndpointSecret, secretHint } from "../webhooks/secret-box";
import type { ManagementCaller } from "./caller";
import { scopeOf, writeOf } from "./caller";
import { publicId, uuidOf } from "./ids";
import type {} from "./rpc";

/** What the deployment allows and seals with: plain values from its configuration. */
export interface WebhookSettings {
  secretKey: string;
  allowLoopbackHttp: boolean;
}

/** The settings of a deployment's configuration; it must hold WEBHOOK_SECRET_KEY to seal secrets. */
export function webhookSettingsOf(config: Pick<Config, "WEBHOOK_SECRET_KEY" | "WEBHOOK_ALLOW_LOOPBACK_HTTP">): WebhookSettings {
  const secretKey = config.WEBHOOK_SECRET_KEY;
  if (!secretKey) throw new Error("WEBHOOK_SECRET_KEY is not configured");
  return { secretKey, allowLoopbackHttp: config.WEBHOOK_ALLOW_LOOPBACK_HTTP === "1" };
}

const eventTypesField = v.nullable(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(64))), v.maxLength(64)));

export const createEndpointSchema = v.pipe(
  v.strictObject({
    url: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(2048)),
    event_types: v.optional(eventTypesField),
  }),
  v.examples([{ url: "https://example.com/hooks", event_types: ["mandate.consumed", "mandate.revoked"] }]),
);

export const updateEndpointSchema = v.pipe(
  v.strictObject({
    url: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(2048))),
    event_types: v.optional(eventTypesField),
  }),
  v.examples([{ event_types: null }]),
);

export const rotateSecretSchema = v.pipe(
  v.strictObject({
    overlap_seconds: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(ROTATION_OVERLAP_SECONDS)),
      ROTATION_OVERLAP_SECONDS,
    ),
  }),
  v.examples([{ overlap_seconds: 86_400 }]),
);

export const deliveryStates = ["pending", "delivering", "succeeded", "failed"] as const;

export const PAGE_SIZE = { min: 1, max: 100, default: 25 } as const;

/** `limit` of a page query: a whole number from 1 to 100 (25). */
export const pageLimit = v.optional(
  v.pipe(v.string(), v.regex(/^\d{1,3}$/), v.transform(Number), v.integer(), v.minValue(PAGE_SIZE.min), v.maxValue(PAGE_SIZE.max)),
  String(PAGE_SIZE.default),
);

export const deliveryPageSchema = v.strictObject({
  endpoint_id: v.optional(v.pipe(v.string(), v.maxLength(64))),
  event_id: v.optional(v.pipe(v.string(), v.maxLength(64))),
  state: v.optional(v.picklist(deliveryStates)),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  limit: pageLimit,
});

const instantField = v.pipe(v.string(), v.isoTimestamp());

export const replayRangeSchema = v.pipe(
  v.strictObject({
    from: instantField,
    to: instantField,
    endpoint_id: v.optional(v.pipe(v.string(), v.maxLength(64))),
  }),
  v.forward(
    v.partialCheck([["from"], ["to"]], (range) => Date.parse(range.from) < Date.parse(range.to), "from must be earlier than to"),
    ["to"],
  ),
  v.examples([{ from: "2026-11-20T00:00:00.000Z", to: "2026-11-21T00:00:00.000Z" }]),
);

/** The endpoint as the API shows it: its public id, never a secret (only hints). */
export function endpointObject(view: EndpointView) {
  const { endpoint_id, merchant_id: _merchant, ...rest } = view;
  return { id: publicId("endpoint", endpoint_id), object: "webhook_endpoint" as const, ...rest };
}

function invalid(field: string, problem: string): never {
  throw new ApiError("INVALID_INPUT", { fields: [field] }, `${field}: ${problem}`);
}

function endpointUuid(id: string): string {
  const uuid = uuidOf("endpoint", id);
  if (!uuid) throw new ApiError("not_found");
  return uuid;
}

function checkSubscription(settings: WebhookSettings, input: { url?: string; event_types?: string[] | null }) {
  const urlProblem = input.url === undefined ? null : checkEndpointUrl(input.url, settings);
  if (urlProblem) invalid("url", urlProblem);
  const typesProblem = checkEventTypes(input.event_types);
  if (typesProblem) invalid("event_types", typesProblem);
}

/** Registers an endpoint of the caller's environment; its secret is in this answer only. */
export async function createEndpoint(
  deps: Deps,
  caller: ManagementCaller,
  settings: WebhookSettings,
  input: v.InferOutput<typeof createEndpointSchema>,
) {
  checkSubscription(settings, input);
  const endpointId = crypto.randomUUID();
  const secret = mintEndpointSecret();
  const view = await rpc(deps.sql, "management_endpoint_create", {
    ...writeOf(caller, deps.now),
    endpoint_id: endpointId,
    url: input.url,
    event_types: input.event_types ? [...new Set(input.event_types)] : null,
    sealed_secret: await sealEndpointSecret(settings.secretKey, endpointId, secret),
    secret_hint: secretHint(secret),
  });
  return { ...endpointObject(view), secret };
}

export async function listEndpoints(deps: Deps, caller: ManagementCaller) {
  const { endpoints } = await rpc(deps.sql, "webhook_endpoint_list", {
    merchant_id: caller.merchantId,
    environment: caller.environment,
    now: deps.now.toISOString(),
  });
  return { object: "list" as const, data: endpoints.map(endpointObject), next_cursor: null };
}

export async function readEndpoint(deps: Deps, caller: ManagementCaller, id: string) {
  return endpointObject(await rpc(deps.sql, "management_endpoint_get", { ...scopeOf(caller, deps.now), endpoint_id: endpointUuid(id) }));
}

export async function updateEndpoint(
  deps: Deps,
  caller: ManagementCaller,
  settings: WebhookSettings,
  id: string,
  input: v.InferOutput<typeof updateEndpointSchema>,
) {
  checkSubscription(settings, input);
  const view = await rpc(deps.sql, "management_endpoint_update", {
    ...writeOf(caller, deps.now),
    endpoint_id: endpointUuid(id),
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.event_types !== undefined ? { event_types: input.event_types ? [...new Set(input.event_types)] : null } : {}),
  });
  return endpointObject(view);
}

/** Disables (pending deliveries fail, replayable) or enables an endpoint; a repeat answers the same. */
export async function setEndpointStatus(deps: Deps, caller: ManagementCaller, id: string, status: "active" | "disabled") {
  const view = await rpc(deps.sql, "management_endpoint_set_status", {
    ...writeOf(caller, deps.now),
    endpoint_id: endpointUuid(id),
    status,
  });
  return endpointObject(view);
}

/** A new secret (in this answer only); the earlier ones keep signing beside it for the overlap (at most 24 hours). */
export async function rotateSecret(
  deps: Deps,
  caller: ManagementCaller,
  settings: WebhookSettings,
  id: string,
  input: v.InferOutput<typeof rotateSecretSchema>,
) {
  const endpointId = endpointUuid(id);
  const secret = mintEndpointSecret();
  const rotated = await rpc(deps.sql, "management_endpoint_rotate", {
    ...writeOf(caller, deps.now),
    endpoint_id: endpointId,
    sealed_secret: await sealEndpointSecret(settings.secretKey, endpointId, secret),
    secret_hint: secretHint(secret),
    overlap_seconds: input.overlap_seconds,
  });
  const { previous_valid_until, ...view } = rotated;
  return { ...endpointObject(view), secret, previous_valid_until };
}

/** Queues a `webhook.test` event to this endpoint alone; the worker sends it on its next pass. */
export async function sendTestEvent(deps: Deps, caller: ManagementCaller, id: string) {
  const queued = await rpc(deps.sql, "management_endpoint_test", { ...writeOf(caller, deps.now), endpoint_id: endpointUuid(id) });
  return { object: "webhook_test" as const, ...queued };
}

/** A page of the caller's deliveries, newest first, each with its event and attempts. */
export async function pageDeliveries(deps: Deps, caller: ManagementCaller, query: v.InferOutput<typeof deliveryPageSchema>) {
  const endpointId = query.endpoint_id === undefined ? undefined : uuidOf("endpoint", query.endpoint_id);
  const eventId = query.event_id === undefined ? undefined : canonicalUuid(query.event_id);
  if (endpointId === null) invalid("endpoint_id", "not an endpoint id");
  if (eventId === null) invalid("event_id", "not an event id");
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const page = await rpc(deps.sql, "management_deliveries_page", {
    merchant_id: caller.merchantId,
    environment: caller.environment,
    limit: query.limit,
    ...(endpointId ? { endpoint_id: endpointId } : {}),
    ...(eventId ? { event_id: eventId } : {}),
    ...(query.state ? { state: query.state } : {}),
    ...(after ? { after } : {}),
  });
  return {
    object: "list" as const,
    data: page.data,
    next_cursor: nextCursor(page),
  };
}

/** One delivery with its attempts. */
export async function readDelivery(deps: Deps, caller: ManagementCaller, id: string) {
  const deliveryId = uuidOf("delivery", id);
  const page = deliveryId
    ? await rpc(deps.sql, "management_deliveries_page", {
        merchant_id: caller.merchantId,
        environment: caller.environment,
        limit: 1,
        delivery_id: deliveryId,
      })
    : null;
  const delivery = page?.data[0];
  if (!delivery) throw new ApiError("not_found");
  return delivery;
}

/** The delivery's event again, to its endpoint: a new delivery (attempt 1, a fresh 72-hour window). */
export async function replayDelivery(deps: Deps, caller: ManagementCaller, id: string) {
  const deliveryId = uuidOf("delivery", id);
  if (!deliveryId) throw new ApiError("not_found");
  const replayed = await rpc(deps.sql, "management_delivery_replay", { ...writeOf(caller, deps.now), delivery_id: deliveryId });
  return { object: "webhook_replay" as const, ...replayed };
}

/** Every event of [from, to) again (at most 10,000), to the subscribed active endpoints or to one. */
export async function replayRange(deps: Deps, caller: ManagementCaller, input: v.InferOutput<typeof replayRangeSchema>) {
  const endpointId = input.endpoint_id === undefined ? undefined : endpointUuid(input.endpoint_id);
  const replayed = await rpc(deps.sql, "management_events_replay", {
    ...writeOf(caller, deps.now),
    from: new Date(input.from).toISOString(),
    to: new Date(input.to).toISOString(),
    ...(endpointId ? { endpoint_id: endpointId } : {}),
  });
  return { object: "webhook_replay" as const, ...replayed };
}
