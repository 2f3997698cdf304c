/**
 * The account's management on /v1 (docs/management.md; docs/decisions.md, D-445): API keys, webhook
 * endpoints and their delivery log, the account's settings and the audit log. The resource API's
 * conventions hold (bearer secret key, Service-Version, errors, Idempotency-Key on every write,
 * token buckets, cursor pages); a key needs `management.read` to read and `management.write` to
 * change anything (`403 insufficient_scope`), and every route is an adapter over shared/management.
 */
import { type Context, Hono } from "hono";
import { afterAnswer } from "../../shared/edge/after-answer";
import type { AppEnv } from "../../shared/edge/app";
import { depsOf } from "../../shared/edge/app";
import type { KeyAuthenticated } from "../../shared/edge/auth";
import { idempotency } from "../../shared/edge/idempotency";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp } from "../../shared/edge/rate-limit";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { ApiError } from "../../shared/kernel/errors";
import { readAccount, updateAccount, updateAccountSchema } from "../../shared/management/account";
import {
  accountSchema,
  apiKeyListSchema,
  apiKeySchema,
  auditExportAnswerSchema,
  auditListSchema,
  createdEndpointSchema,
  createdInvitationSchema,
  createdKeySchema,
  deliveryListSchema,
  deliverySchema,
  endpointListSchema,
  endpointSchema,
  ownerListSchema,
  removedOwnerSchema,
  replaySchema,
  rolledKeySchema,
  rotatedEndpointSchema,
  testEventSchema,
  usageSchema,
} from "../../shared/management/answers";
import { auditExportSchema, auditPageSchema, exportAudit, pageAudit } from "../../shared/management/audit";
import type { ManagementCaller } from "../../shared/management/caller";
import { publicId } from "../../shared/management/ids";
import { createKey, createKeySchema, listKeys, revokeKey, rollKey, rollKeySchema } from "../../shared/management/keys";
import { inviteOwner, inviteOwnerSchema, listOwners, removeOwner } from "../../shared/management/owners";
import {
  checkTheme,
  draftTheme,
  draftThemeSchema,
  listAssets,
  previewTheme,
  publishTheme,
  readThemes,
  themeAssetListSchema,
  themeAssetSchema,
  themePreviewSchema,
  themeSchema,
  themeValidationSchema,
  uploadAsset,
  uploadAssetSchema,
  validateThemeSchema,
} from "../../shared/management/themes";
import { readUsage, usageQuerySchema } from "../../shared/management/usage";
import {
  createEndpoint,
  createEndpointSchema,
  deliveryPageSchema,
  listEndpoints,
  pageDeliveries,
  readDelivery,
  readEndpoint,
  replayDelivery,
  replayRange,
  replayRangeSchema,
  rotateSecret,
  rotateSecretSchema,
  sendTestEvent,
  setEndpointStatus,
  updateEndpoint,
  updateEndpointSchema,
  type WebhookSettings,
  webhookSettingsOf,
} from "../../shared/management/webhooks";
import { type Surface, surfaces, themeAssetBases } from "../../shared/themes/theme";
import { deliverSoon } from "../../shared/webhooks/run";
import { type KeyScoped, keyPolicy } from "./auth";
import { idempotencyScope } from "./idempotency";

type Env = AppEnv & KeyAuthenticated & KeyScoped;

const reads = () => keyPolicy("management", "management.read");
const writes = () => keyPolicy("management", "management.write");
/** Every write takes an Idempotency-Key; a secret in its answer is never stored for the replay (D-451). */
const keyed = () => idempotency(idempotencyScope, { forget: ["secret"] });

/** The caller of a management operation: the key's tenant, the key as the actor, its scopes. */
function callerOf<E extends Env>(c: Context<E>): ManagementCaller {
  const { merchantId, environment, keyId } = c.var.principal;
  const ip = clientIp(c);
  return {
    merchantId,
    environment,
    scopes: c.var.keyScopes,
    actor: { kind: "api_key", id: publicId("key", keyId), ip: ip === "unknown" ? null : ip },
  };
}

const webhookSettings = <E extends Env>(c: Context<E>): WebhookSettings => webhookSettingsOf(c.var.config);

// ---------------------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------------------
export const apiKeys = new Hono<Env>();

apiKeys.get(
  "/",
  documented({
    summary: "List the API keys of this environment",
    success: { status: 200, description: "The keys", schema: apiKeyListSchema },
  }),
  noStore,
  reads(),
  async (c) => c.json(await listKeys(depsOf(c.var), callerOf(c))),
);

apiKeys.post(
  "/",
  documented({
    summary: "Create an API key",
    description:
      "The key is in this answer only (a replay under the same Idempotency-Key answers secret null). Scopes default to the caller's own; a key never gets a scope its creator lacks.",
    success: { status: 201, description: "The key, with the key itself as secret", schema: createdKeySchema },
  }),
  writes(),
  keyed(),
  input("json", createKeySchema),
  async (c) => c.json(await createKey(depsOf(c.var), callerOf(c), c.var.input), 201),
);

apiKeys.post(
  "/:id/roll",
  documented({
    summary: "Roll an API key",
    description:
      "A new key of the same kind and scopes (shown once); the old one keeps working for overlap_seconds (at most 86,400, the default), then stops.",
    success: { status: 200, description: "The new key, and the old one as rolled", schema: rolledKeySchema },
    answers: ["not_found", "KEY_INACTIVE"],
  }),
  writes(),
  keyed(),
  input("json", rollKeySchema),
  async (c) => c.json(await rollKey(depsOf(c.var), callerOf(c), c.req.param("id"), c.var.input)),
);

apiKeys.post(
  "/:id/revoke",
  documented({
    summary: "Revoke an API key",
    description: "It stops authenticating at once; a repeat answers the same.",
    success: { status: 200, description: "The key, revoked", schema: apiKeySchema },
    answers: ["not_found"],
  }),
  writes(),
  keyed(),
  async (c) => c.json(await revokeKey(depsOf(c.var), callerOf(c), c.req.param("id"))),
);

// ---------------------------------------------------------------------------------------------
// Webhook endpoints
// ---------------------------------------------------------------------------------------------
export const webhookEndpoints = new Hono<Env>();

webhookEndpoints.get(
  "/",
  documented({
    summary: "List the webhook endpoints of this environment",
    success: { status: 200, description: "The endpoints (secret hints only)", schema: endpointListSchema },
  }),
  noStore,
  reads(),
  async (c) => c.json(await listEndpoints(depsOf(c.var), callerOf(c))),
);

webhookEndpoints.post(
  "/",
  documented({
    summary: "Register a webhook endpoint",
    description:
      "https only. event_types null or absent: every type, later ones included. The whsec_ secret is in this answer only. At most 16 active endpoints per environment.",
    success: { status: 201, description: "The endpoint, with its secret", schema: createdEndpointSchema },
    answers: ["WEBHOOK_ENDPOINT_LIMIT"],
  }),
  writes(),
  keyed(),
  input("json", createEndpointSchema),
  async (c) => c.json(await createEndpoint(depsOf(c.var), callerOf(c), webhookSettings(c), c.var.input), 201),
);

webhookEndpoints.get(
  "/:id",
  documented({
    summary: "Read a webhook endpoint",
    success: { status: 200, description: "The endpoint", schema: endpointSchema },
    answers: ["not_found"],
  }),
  noStore,
  reads(),
  async (c) => c.json(await readEndpoint(depsOf(c.var), callerOf(c), c.req.param("id"))),
);

webhookEndpoints.post(
  "/:id",
  documented({
    summary: "Update a webhook endpoint's URL or event types",
    success: { status: 200, description: "The endpoint", schema: endpointSchema },
    answers: ["not_found"],
  }),
  writes(),
  keyed(),
  input("json", updateEndpointSchema),
  async (c) => c.json(await updateEndpoint(depsOf(c.var), callerOf(c), webhookSettings(c), c.req.param("id"), c.var.input)),
);

webhookEndpoints.post(
  "/:id/disable",
  documented({
    summary: "Disable a webhook endpoint",
    description: "Nothing more is sent; its pending deliveries fail (replayable). A repeat answers the same.",
    success: { status: 200, description: "The endpoint", schema: endpointSchema },
    answers: ["not_found"],
  }),
  writes(),
  keyed(),
  async (c) => c.json(await setEndpointStatus(depsOf(c.var), callerOf(c), c.req.param("id"), "disabled")),
);

webhookEndpoints.post(
  "/:id/enable",
  documented({
    summary: "Enable a disabled webhook endpoint",
    description: "Events written from now on are sent to it again; replay what it missed. Counts against the 16 active endpoints.",
    success: { status: 200, description: "The endpoint", schema: endpointSchema },
    answers: ["not_found", "WEBHOOK_ENDPOINT_LIMIT"],
  }),
  writes(),
  keyed(),
  async (c) => c.json(await setEndpointStatus(depsOf(c.var), callerOf(c), c.req.param("id"), "active")),
);

webhookEndpoints.post(
  "/:id/rotate_secret",
  documented({
    summary: "Rotate a webhook endpoint's secret",
    description:
      "A new secret (in this answer only); the earlier ones keep signing beside it for overlap_seconds (at most and by default 86,400; 0 cuts a leaked one off now).",
    success: { status: 200, description: "The endpoint, with its new secret", schema: rotatedEndpointSchema },
    answers: ["not_found"],
  }),
  writes(),
  keyed(),
  input("json", rotateSecretSchema),
  async (c) => c.json(await rotateSecret(depsOf(c.var), callerOf(c), webhookSettings(c), c.req.param("id"), c.var.input)),
);

webhookEndpoints.post(
  "/:id/test",
  documented({
    summary: "Send a test event to a webhook endpoint",
    description:
      "A webhook.test event to this endpoint alone, sent right after this answer (the worker's next pass retries it); follow delivery_id.",
    success: { status: 202, description: "The event queued", schema: testEventSchema },
    answers: ["not_found", "ENDPOINT_DISABLED"],
  }),
  writes(),
  keyed(),
  async (c) => {
    const queued = await sendTestEvent(depsOf(c.var), callerOf(c), c.req.param("id"));
    afterAnswer(c, "webhooks", deliverSoon(c.var.principal));
    return c.json(queued, 202);
  },
);

// ---------------------------------------------------------------------------------------------
// Deliveries and replays
// ---------------------------------------------------------------------------------------------
export const webhookDeliveries = new Hono<Env>();

webhookDeliveries.get(
  "/",
  documented({
    summary: "List webhook deliveries, newest first",
    description: "Filter by endpoint_id, event_id and state; limit 1 to 100 (25). Each delivery carries its event and every attempt.",
    success: { status: 200, description: "A page of deliveries", schema: deliveryListSchema },
  }),
  noStore,
  reads(),
  input("query", deliveryPageSchema),
  async (c) => c.json(await pageDeliveries(depsOf(c.var), callerOf(c), c.var.input)),
);

webhookDeliveries.get(
  "/:id",
  documented({
    summary: "Read a webhook delivery with its attempts",
    success: { status: 200, description: "The delivery", schema: deliverySchema },
    answers: ["not_found"],
  }),
  noStore,
  reads(),
  async (c) => c.json(await readDelivery(depsOf(c.var), callerOf(c), c.req.param("id"))),
);

webhookDeliveries.post(
  "/:id/replay",
  documented({
    summary: "Replay one delivery",
    description: "Its event again (same id), as a new delivery to the same endpoint: attempt 1, a fresh 72-hour window.",
    success: { status: 202, description: "What was queued", schema: replaySchema },
    answers: ["not_found"],
  }),
  writes(),
  keyed(),
  async (c) => {
    const queued = await replayDelivery(depsOf(c.var), callerOf(c), c.req.param("id"));
    afterAnswer(c, "webhooks", deliverSoon(c.var.principal));
    return c.json(queued, 202);
  },
);

export const webhookEvents = new Hono<Env>();

webhookEvents.post(
  "/replay",
  documented({
    summary: "Replay the events of a time range",
    description:
      "Every event with created_at in [from, to) (at most 10,000) again, to the subscribed active endpoints, or to endpoint_id only.",
    success: { status: 202, description: "What was queued", schema: replaySchema },
    answers: ["not_found"],
  }),
  writes(),
  keyed(),
  input("json", replayRangeSchema),
  async (c) => {
    const queued = await replayRange(depsOf(c.var), callerOf(c), c.var.input);
    afterAnswer(c, "webhooks", deliverSoon(c.var.principal));
    return c.json(queued, 202);
  },
);

// ---------------------------------------------------------------------------------------------
// The audit log and the account
// ---------------------------------------------------------------------------------------------
export const auditEvents = new Hono<Env>();

auditEvents.get(
  "/",
  documented({
    summary: "List the audit log, newest first",
    description: "Every management action of this environment: filter by action and [from, to); limit 1 to 100 (25).",
    success: { status: 200, description: "A page of audit events", schema: auditListSchema },
  }),
  noStore,
  reads(),
  input("query", auditPageSchema),
  async (c) => c.json(await pageAudit(depsOf(c.var), callerOf(c), c.var.input)),
);

auditEvents.get(
  "/export",
  documented({
    summary: "Export the audit log",
    description:
      "The events of [from, to) (and action), newest first, at most 10,000 in one answer (truncated says when there are more), as a download.",
    success: { status: 200, description: "The events", schema: auditExportAnswerSchema },
  }),
  noStore,
  reads(),
  input("query", auditExportSchema),
  async (c) => {
    const exported = await exportAudit(depsOf(c.var), callerOf(c), c.var.input);
    c.header("content-disposition", `attachment; filename="audit-${c.var.principal.environment}.json"`);
    return c.json(exported);
  },
);

export const account = new Hono<Env>();

account.get(
  "/",
  documented({ summary: "Read the account's settings", success: { status: 200, description: "The account", schema: accountSchema } }),
  noStore,
  reads(),
  async (c) => c.json(await readAccount(depsOf(c.var), callerOf(c))),
);

account.post(
  "/",
  documented({
    summary: "Change the account's settings",
    description:
      "at_limit_threshold_percent (0 to 99): mandate.at_limit fires when a consumption leaves at most this share of the ceiling.",
    success: { status: 200, description: "The account", schema: accountSchema },
  }),
  writes(),
  keyed(),
  input("json", updateAccountSchema),
  async (c) => c.json(await updateAccount(depsOf(c.var), callerOf(c), c.var.input)),
);

// ---------------------------------------------------------------------------------------------
// Owners and usage
// ---------------------------------------------------------------------------------------------
export const owners = new Hono<Env>();

owners.get(
  "/",
  documented({
    summary: "List the owners of this environment and their invitations",
    success: { status: 200, description: "The owners", schema: ownerListSchema },
  }),
  noStore,
  reads(),
  async (c) => c.json(await listOwners(depsOf(c.var), callerOf(c))),
);

owners.post(
  "/",
  documented({
    summary: "Invite a person to own the account",
    description:
      "A person the merchant holds in this environment, by subject_ref. They accept by proving presence at url (a recognise session, 30 minutes, single use): its approved outcome makes them an owner. The url is in this answer only.",
    success: { status: 201, description: "The invitation, with the url the person accepts at", schema: createdInvitationSchema },
    answers: ["not_found", "ALREADY_OWNER", "INVALID_RETURN_URL"],
  }),
  writes(),
  idempotency(idempotencyScope, { forget: ["url"] }),
  input("json", inviteOwnerSchema),
  async (c) => {
    const base = serviceBaseUrl(c.var.config, c.req.url);
    return c.json(await inviteOwner(depsOf(c.var), callerOf(c), c.var.input, base), 201);
  },
);

owners.post(
  "/:subject_ref/remove",
  documented({
    summary: "Remove an owner",
    description: "The person stops owning the account (their agents lose it at their next call); the last owner is never removed.",
    success: { status: 200, description: "The owner removed", schema: removedOwnerSchema },
    answers: ["not_found", "LAST_OWNER"],
  }),
  writes(),
  keyed(),
  async (c) => c.json(await removeOwner(depsOf(c.var), callerOf(c), c.req.param("subject_ref"))),
);

export const usage = new Hono<Env>();

usage.get(
  "/",
  documented({
    summary: "Read this environment's usage and allowance",
    description: "Billed claims in the month (default: this month, UTC), persons billed for life, the allowance and what is left.",
    success: { status: 200, description: "The usage", schema: usageSchema },
  }),
  noStore,
  reads(),
  input("query", usageQuerySchema),
  async (c) => c.json(await readUsage(depsOf(c.var), callerOf(c), c.var.input)),
);

// ---------------------------------------------------------------------------------------------
// Themes and their assets (D-525, D-526)
// ---------------------------------------------------------------------------------------------
export const themes = new Hono<Env>();

/** The surface named in the path (`404 not_found` for any other). */
function surfaceOf<E extends Env>(c: Context<E>): Surface {
  const surface = c.req.param("surface");
  if (!(surfaces as readonly string[]).includes(surface ?? "")) throw new ApiError("not_found");
  return surface as Surface;
}

function assetBases<E extends Env>(c: Context<E>) {
  return themeAssetBases(c.var.config.THEME_ASSETS_BASE_URL, serviceBaseUrl(c.var.config, c.req.url));
}

themes.get(
  "/:surface",
  documented({
    summary: "Read a surface's draft and published theme",
    description:
      "surface is capture or mandate. Each stage as stored (uploaded assets by id), with valid and the problems that keep it from being served. Themes are the merchant's: both environments' keys see and change the same ones.",
    success: { status: 200, description: "The theme", schema: themeSchema },
    answers: ["not_found"],
  }),
  noStore,
  reads(),
  async (c) => c.json(await readThemes(depsOf(c.var), callerOf(c), surfaceOf(c))),
);

themes.post(
  "/:surface/draft",
  documented({
    summary: "Write a surface's draft theme",
    description:
      "Replaces the draft whole; it may be incomplete, but every token it holds must be valid, and a URL token must name an uploaded asset of the right kind (ta_…; a logo for logo_*, a font for font_*_url) or an https URL. Never served until published.",
    success: { status: 200, description: "The theme, with its new draft", schema: themeSchema },
    answers: ["not_found", "THEME_INVALID"],
  }),
  writes(),
  keyed(),
  input("json", draftThemeSchema),
  async (c) => c.json(await draftTheme(depsOf(c.var), callerOf(c), surfaceOf(c), c.var.input)),
);

themes.post(
  "/:surface/validate",
  documented({
    summary: "Check a theme without storing it",
    description: "Whether the theme is complete and every token valid for the surface, and each problem by token.",
    success: { status: 200, description: "The verdict", schema: themeValidationSchema },
    answers: ["not_found"],
  }),
  noStore,
  reads(),
  input("json", validateThemeSchema),
  async (c) => c.json(checkTheme(surfaceOf(c), c.var.input.theme)),
);

themes.get(
  "/:surface/preview",
  documented({
    summary: "Preview the draft as the hosted screen would receive it",
    description:
      "The draft resolved as merchant-theme-get would serve it once published: assets as the service's URLs, or the default theme (customized false) while the draft is incomplete or invalid.",
    success: { status: 200, description: "The preview", schema: themePreviewSchema },
    answers: ["not_found"],
  }),
  noStore,
  reads(),
  async (c) => c.json(await previewTheme(depsOf(c.var), callerOf(c), surfaceOf(c), assetBases(c))),
);

themes.post(
  "/:surface/publish",
  documented({
    summary: "Publish the draft theme",
    description:
      "Only a complete, valid draft (422 theme_invalid lists what is missing); the hosted screens show it at once. 409 theme_draft_changed when another draft was written while publishing.",
    success: { status: 200, description: "The theme, with its new published stage", schema: themeSchema },
    answers: ["not_found", "THEME_INVALID", "THEME_DRAFT_CHANGED"],
  }),
  writes(),
  keyed(),
  async (c) => c.json(await publishTheme(depsOf(c.var), callerOf(c), surfaceOf(c))),
);

export const themeAssets = new Hono<Env>();

themeAssets.get(
  "/",
  documented({
    summary: "List the uploaded logos and fonts",
    success: { status: 200, description: "The newest 100", schema: themeAssetListSchema },
  }),
  noStore,
  reads(),
  async (c) => c.json(await listAssets(depsOf(c.var), callerOf(c), assetBases(c).uploads)),
);

themeAssets.post(
  "/",
  documented({
    summary: "Upload a logo or a font",
    description:
      "The file as base64. Its type is read from its bytes and must be the declared one: a logo PNG, JPEG, WebP or SVG (at most 128 KiB; an SVG with anything but drawing, such as a script, an event attribute or an outside reference, is refused), a font WOFF2 or WOFF (at most 160 KiB, with its family name). The service stores it and serves it from its own origin, immutable; name it in a theme by its id.",
    success: { status: 201, description: "The asset", schema: themeAssetSchema },
    answers: ["ASSET_INVALID"],
  }),
  writes(),
  keyed(),
  input("json", uploadAssetSchema),
  async (c) => c.json(await uploadAsset(depsOf(c.var), callerOf(c), c.var.input, assetBases(c).uploads), 201),
);
