/**
 * /functions/v1/device-manage (issue 27; docs/devices.md, "Managing devices"): a person's own
 * devices, with their first-party session JWT in `Authorization: Bearer` (a merchant key is
 * `401 USER_TOKEN_REQUIRED`; a session revoked or expired in the database `403 ACCESS_REVOKED`).
 * - `GET /`: the devices of the session's environment, newest first, revoked ones included;
 * - `POST /revoke` `{device_id}`: revoked from now on, effective on the device's next request;
 *   `device.revoked` to the merchants holding the person;
 * - `POST /rename` `{device_id, name}`: the person's own name for it.
 * Rate limited per person (D-366); every answer is `cache-control: no-store`.
 */
import {
  deviceListSchema,
  listOwnDevices,
  renameDeviceSchema,
  renamedDeviceSchema,
  renameOwnDevice,
  revokeDeviceSchema,
  revokedDeviceSchema,
  revokeOwnDevice,
} from "../../shared/devices/devices";
import { afterAnswer } from "../../shared/edge/after-answer";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { type UserAuthenticated, userTokenAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { type RateLimitRule, rateLimit } from "../../shared/edge/rate-limit";
import { personDeliveryScope } from "../../shared/persons/consents";
import { deliverSoon } from "../../shared/webhooks/run";

/** Per person and environment (D-366): a device page reads now and then; a change is rarer still. */
const limits = {
  list: { name: "device-manage-list", limit: 120, windowSeconds: 60 },
  change: { name: "device-manage-change", limit: 30, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;
const perPerson = (rule: RateLimitRule) =>
  rateLimit<AppEnv & UserAuthenticated>((c) => ({
    rule,
    identifier: `person:${c.var.principal.identityId}:${c.var.principal.environment}`,
  }));

const app = createFunctionApp("device-manage");

app.use(noStore);

app.get(
  "/",
  documented({
    summary: "A person's devices",
    success: { status: 200, description: "The devices, newest first, revoked ones included", schema: deviceListSchema },
    answers: ["ACCESS_REVOKED"],
  }),
  userTokenAuth(),
  perPerson(limits.list),
  async (c) => c.json(await listOwnDevices(depsOf(c.var), c.var.principal)),
);

app.post(
  "/revoke",
  documented({
    summary: "Revoke one of the person's devices",
    success: { status: 200, description: "Revoked, or already so", schema: revokedDeviceSchema },
    answers: ["ACCESS_REVOKED", "not_found"],
  }),
  userTokenAuth(),
  perPerson(limits.change),
  input("json", revokeDeviceSchema),
  async (c) => {
    const revoked = await revokeOwnDevice(depsOf(c.var), c.var.principal, c.var.input);
    const person = c.var.principal;
    afterAnswer(
      c,
      "webhooks",
      deliverSoon((sql) => personDeliveryScope(sql, person)),
    );
    return c.json(revoked);
  },
);

app.post(
  "/rename",
  documented({
    summary: "Name one of the person's devices",
    success: { status: 200, description: "Renamed", schema: renamedDeviceSchema },
    answers: ["ACCESS_REVOKED", "not_found"],
  }),
  userTokenAuth(),
  perPerson(limits.change),
  input("json", renameDeviceSchema),
  async (c) => c.json(await renameOwnDevice(depsOf(c.var), c.var.principal, c.var.input)),
);

export default app;
