/**
 * The person's devices on their own page (docs/decisions.md, D-472): the passkeys device binding
 * registered for them, listed, named and revoked through the device domain's own RPCs, as
 * device-manage does with a first-party session; a revocation is effective on the device's next
 * assertion and sends `device.revoked` to every merchant holding the person.
 */
import type * as v from "valibot";
import { deviceView, listDevices, type renameDeviceSchema, type revokeDeviceSchema } from "../devices/devices";
import { deviceIdOf } from "../devices/policy";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { PersonSession } from "./session";

const personAt = (deps: Deps, session: PersonSession) => ({
  environment: session.environment,
  identity_id: session.identityId,
  now: deps.now.toISOString(),
});

/** The person's devices in the session's environment, newest first, revoked ones included. */
export async function listPersonDevices(deps: Deps, session: PersonSession) {
  return { devices: await listDevices(deps, session.environment, session.identityId) };
}

/** Revokes one of the person's devices; another person's, unknown and malformed are the same `404 not_found`. */
export async function revokePersonDevice(deps: Deps, session: PersonSession, body: v.InferOutput<typeof revokeDeviceSchema>) {
  const deviceId = deviceIdOf(body.device_id);
  const revoked = deviceId ? await rpc(deps.sql, "device_credential_revoke", { ...personAt(deps, session), device_id: deviceId }) : null;
  if (!revoked?.device) throw new ApiError("not_found");
  return { device: deviceView(revoked.device), already_revoked: revoked.already_revoked };
}

/** Names one of the person's devices; another person's or unknown `404 not_found`. */
export async function renamePersonDevice(deps: Deps, session: PersonSession, body: v.InferOutput<typeof renameDeviceSchema>) {
  const deviceId = deviceIdOf(body.device_id);
  const renamed = deviceId
    ? await rpc(deps.sql, "device_credential_rename", { ...personAt(deps, session), device_id: deviceId, name: body.name })
    : null;
  if (!renamed?.device) throw new ApiError("not_found");
  return { device: deviceView(renamed.device) };
}
