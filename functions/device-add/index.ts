/**
 * /functions/v1/device-add (issue 27; docs/devices.md, "Adding a device"; D-370, D-371): a person's
 * new device, by the approval of a registered one or by re-proof with their passport.
 * - `POST /options` (publishable or secret key) `{challenge, descriptor_digest?}`: the options of
 *   navigator.credentials.create for an open add_device challenge (device-challenge issued it), whose
 *   user handle is recorded with the challenge;
 * - `POST /request` (the same keys, replay headers) `{challenge, registration, ttl_seconds?}`: the
 *   new device's registration, verified and pending; 201 with the approval code, its page's URL and
 *   that URL as a QR code;
 * - `GET /status?addition_id=` (the same keys): pending, approved (with the device) or expired;
 * - `GET /approve`: the approval page the QR code opens on the registered device (first-party: the
 *   service's origin, its RP ID), and `GET /approve.js`, its script;
 * - `POST /lookup` and `POST /approve` (no key: the approval code, then the registered device's
 *   signature, are the credentials; per client address): what the addition is, with an add_device
 *   challenge; the approval;
 * - `POST /passport` (the same keys, replay headers) `{challenge, face_template, document, registration}`:
 *   re-proof with a live capture and the passport on record, registering the new device at once.
 * Every answer is `cache-control: no-store`.
 */
import {
  additionCodes,
  additionLookupSchema,
  additionOptions,
  additionOptionsAnswerSchema,
  additionOptionsSchema,
  additionSchema,
  additionStatus,
  additionStatusSchema,
  approveAddition,
  approveAdditionSchema,
  approvedAdditionSchema,
  lookupAddition,
  lookupAdditionSchema,
  requestAddition,
  requestAdditionSchema,
  requestedAdditionSchema,
} from "../../shared/devices/additions";
import { relyingPartyOf } from "../../shared/devices/ceremony";
import { renamedDeviceSchema } from "../../shared/devices/devices";
import { afterAnswer } from "../../shared/edge/after-answer";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth, type KeyAuthenticated } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp, type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { reproofCodes, reproofSchema, reproveDevice } from "../../shared/identity/device-reproof";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { keyMaterialOf } from "../../shared/kernel/keys";
import { deliverSoon } from "../../shared/webhooks/run";
import { APPROVAL_PAGE, APPROVAL_SCRIPT, approvalPageHeaders } from "./page";

/** D-370: an addition is rarer than a capture; the keyless routes count per client address, as a handoff's claim. */
const limits = {
  merchant: { name: "device-add", limit: 60, windowSeconds: 60 },
  status: { name: "device-add-status", limit: 600, windowSeconds: 60 },
  approverIp: { name: "device-add-approve-ip", limit: 60, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;
const perMerchant = (rule: RateLimitRule) =>
  rateLimit<AppEnv & KeyAuthenticated>((c) => ({ rule, identifier: tenantBudget(c.var.principal) }));
const perAddress = rateLimit<AppEnv>((c) => ({ rule: limits.approverIp, identifier: clientIp(c) }));

const app = createFunctionApp("device-add");

app.use(noStore);

const rpOf = (c: { var: AppEnv["Variables"]; req: { url: string } }) => relyingPartyOf(c.var.config, c.req.url);

app.post(
  "/options",
  documented({
    summary: "Registration options for a new device",
    success: { status: 200, description: "The options of navigator.credentials.create", schema: additionOptionsAnswerSchema },
    answers: ["UNAUTHORIZED_DEVICE"],
  }),
  apiKeyAuth("publishable"),
  perMerchant(limits.merchant),
  input("json", additionOptionsSchema),
  async (c) => c.json(await additionOptions(depsOf(c.var), c.var.principal, rpOf(c), c.var.input)),
);

app.post(
  "/request",
  documented({
    summary: "Ask for a new device to be approved by a registered one",
    success: { status: 201, description: "The pending addition, its approval code, URL and QR code", schema: requestedAdditionSchema },
    answers: ["UNAUTHORIZED_DEVICE"],
  }),
  apiKeyAuth("publishable", { replay: true }),
  perMerchant(limits.merchant),
  input("json", requestAdditionSchema),
  async (c) => {
    const baseUrl = serviceBaseUrl(c.var.config, c.req.url);
    return c.json(
      await requestAddition(depsOf(c.var), c.var.principal, relyingPartyOf(c.var.config, c.req.url), baseUrl, c.var.input),
      201,
    );
  },
);

app.get(
  "/status",
  documented({
    summary: "A device addition's state",
    success: { status: 200, description: "The addition", schema: additionSchema },
    answers: ["not_found"],
  }),
  apiKeyAuth("publishable"),
  perMerchant(limits.status),
  input("query", additionStatusSchema),
  async (c) => c.json(await additionStatus(depsOf(c.var), c.var.principal, c.var.input.addition_id)),
);

app.get(
  "/approve",
  documented({
    summary: "The approval page (the approval code in the fragment)",
    success: { status: 200, description: "The page", contentType: "text/html" },
  }),
  (c) => c.body(APPROVAL_PAGE, 200, approvalPageHeaders("text/html; charset=utf-8")),
);
app.get(
  "/approve.js",
  documented({
    summary: "The approval page's script",
    success: { status: 200, description: "The script", contentType: "text/javascript" },
  }),
  (c) => c.body(APPROVAL_SCRIPT, 200, approvalPageHeaders("text/javascript; charset=utf-8")),
);

app.post(
  "/lookup",
  documented({
    summary: "What an approval code names, with a challenge to sign",
    success: { status: 200, description: "The pending addition and the assertion options", schema: additionLookupSchema },
    answers: ["DEVICE_ADDITION_INVALID"],
  }),
  perAddress,
  input("json", lookupAdditionSchema),
  async (c) => c.json(await lookupAddition(depsOf(c.var), rpOf(c), c.var.input)),
);

app.post(
  "/approve",
  documented({
    summary: "Approve a new device with a registered one's signature",
    success: { status: 200, description: "Approved: the new device is the person's", schema: approvedAdditionSchema },
    answers: additionCodes,
  }),
  perAddress,
  input("json", approveAdditionSchema),
  async (c) => c.json(await approveAddition(depsOf(c.var), rpOf(c), c.var.input)),
);

app.post(
  "/passport",
  documented({
    summary: "Add a device by re-proof with a live capture and the passport on record",
    success: { status: 201, description: "The device registered", schema: renamedDeviceSchema },
    answers: reproofCodes,
  }),
  apiKeyAuth("publishable", { replay: true }),
  perMerchant(limits.merchant),
  input("json", reproofSchema),
  async (c) => {
    const { templates } = await keyMaterialOf(c.var);
    const registered = await reproveDevice(depsOf(c.var), templates, c.var.principal, rpOf(c), c.var.input);
    // device.registered: the calling merchant at once, any other merchant holding the person at the cron's tick
    afterAnswer(c, "webhooks", deliverSoon(c.var.principal));
    return c.json(registered, 201);
  },
);

export default app;
