/**
 * A person's devices as they see and manage them: the view of a credential (never its key), the
 * list of an identity's devices, the revocation of one, which takes effect on the next request (an
 * assertion reads the credential in its own transaction), and its name. The function device-manage
 * calls these with the person's first-party session (docs/devices.md, "Managing devices").
 */
import * as v from "valibot";
import type { DeviceBinding } from "../contracts/device";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Environment, UserPrincipal } from "../kernel/principal";
import { jsonObject } from "../kernel/validation";
import { type AttestationVerdict, type DeviceRegisteredVia, deviceBindingOf, deviceIdOf, deviceRef } from "./policy";
import type { DeviceCredentialRow } from "./rpc";

/** A device as answers show it: what it is and proved, and when it was used, never its key or credential id. */
export interface DeviceView {
  device_id: string;
  /** The person's own name for it (device-manage rename), or null. */
  name: string | null;
  registered_via: DeviceRegisteredVia;
  device_binding: DeviceBinding;
  attestation: { format: string; verdict: AttestationVerdict };
  aaguid: string;
  backup_eligible: boolean;
  backup_state: boolean;
  transports: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const iso = (at: string | null) => (at === null ? null : new Date(at).toISOString());

/** The view of a stored credential. */
export function deviceView(row: DeviceCredentialRow): DeviceView {
  return {
    device_id: deviceRef(row.device_id),
    name: row.name ?? null,
    registered_via: row.registered_via ?? "enroll",
    device_binding: deviceBindingOf(row),
    attestation: { format: row.attestation_format, verdict: row.attestation_verdict },
    aaguid: row.aaguid,
    backup_eligible: row.backup_eligible,
    backup_state: row.backup_state,
    transports: row.transports,
    created_at: new Date(row.created_at).toISOString(),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

/** The identity's devices in `environment`, newest first, revoked ones included. */
export async function listDevices(deps: Deps, environment: Environment, identityId: string): Promise<DeviceView[]> {
  const { devices } = await rpc(deps.sql, "device_credentials_list", { environment, identity_id: identityId });
  return devices.map(deviceView);
}

/**
 * Revokes one of the identity's own devices (`dev_…`) from `deps.now`; revoking again keeps the
 * first instant. Null when the name is malformed, unknown, or another person's: the three read alike.
 */
export async function revokeDevice(
  deps: Deps,
  environment: Environment,
  identityId: string,
  deviceRefName: string,
): Promise<DeviceView | null> {
  const deviceId = deviceIdOf(deviceRefName);
  if (!deviceId) return null;
  const { device } = await rpc(deps.sql, "device_credential_revoke", {
    environment,
    now: deps.now.toISOString(),
    identity_id: identityId,
    device_id: deviceId,
  });
  return device ? deviceView(device) : null;
}

// ----------------------------------------------------------------------------
// device-manage: the person's own session
// ----------------------------------------------------------------------------

/** A device's name: 1 to 64 characters once trimmed, no control characters (D-366). */
export const DEVICE_NAME_MAX = 64;

const deviceRefInput = v.pipe(v.string(), v.minLength(1), v.maxLength(64));

/** device-manage/revoke's body. */
export const revokeDeviceSchema = v.pipe(jsonObject, v.strictObject({ device_id: deviceRefInput }));

/** device-manage/rename's body. */
export const renameDeviceSchema = v.pipe(
  jsonObject,
  v.strictObject({
    device_id: deviceRefInput,
    name: v.pipe(
      v.string(),
      v.trim(),
      v.minLength(1),
      v.maxLength(DEVICE_NAME_MAX),
      v.regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "no control characters"),
    ),
  }),
);

/** Who manages: the person of a first-party session, whose session must still be live in the database. */
const personOf = async (deps: Deps, person: UserPrincipal) => ({
  environment: person.environment,
  identity_id: person.identityId,
  now: deps.now.toISOString(),
  session_token_hash: person.sessionTokenHash,
});

/** The person's devices in the session's environment, newest first, revoked ones included. */
export async function listOwnDevices(deps: Deps, person: UserPrincipal): Promise<{ devices: DeviceView[] }> {
  const { devices } = await rpc(deps.sql, "device_credentials_list", await personOf(deps, person));
  return { devices: devices.map(deviceView) };
}

/**
 * Revokes one of the person's own devices from now on: its next assertion is refused
 * (`credential_revoked`), and the merchants holding the person get `device.revoked`. A repeat answers
 * the first revocation with `already_revoked: true`. Another person's, unknown and malformed names
 * are one answer, `404 not_found`.
 */
export async function revokeOwnDevice(deps: Deps, person: UserPrincipal, body: v.InferOutput<typeof revokeDeviceSchema>) {
  const deviceId = deviceIdOf(body.device_id);
  if (!deviceId) throw new ApiError("not_found");
  const { device, already_revoked } = await rpc(deps.sql, "device_credential_revoke", {
    ...(await personOf(deps, person)),
    device_id: deviceId,
  });
  if (!device) throw new ApiError("not_found");
  return { device: deviceView(device), already_revoked };
}

/** Names one of the person's own devices; another person's or unknown `404 not_found`. */
export async function renameOwnDevice(deps: Deps, person: UserPrincipal, body: v.InferOutput<typeof renameDeviceSchema>) {
  const deviceId = deviceIdOf(body.device_id);
  if (!deviceId) throw new ApiError("not_found");
  const { device } = await rpc(deps.sql, "device_credential_rename", {
    ...(await personOf(deps, person)),
    device_id: deviceId,
    name: body.name,
  });
  if (!device) throw new ApiError("not_found");
  return { device: deviceView(device) };
}

const isoTimestamp = v.pipe(v.string(), v.isoTimestamp());

/** A device as device-manage and device-add answer it. */
export const deviceViewSchema = v.object({
  device_id: described(v.pipe(v.string(), v.regex(/^dev_[0-9a-f]{32}$/)), "The device's id (dev_ + 32 hex)."),
  name: described(v.nullable(v.string()), "The person's name for it, or null."),
  registered_via: described(v.picklist(["enroll", "device_approval", "document"]), "How it was registered."),
  device_binding: described(v.picklist(["hardware", "synced"]), "What its signatures give a capture."),
  attestation: v.object({ format: v.string(), verdict: v.picklist(["trusted", "self", "untrusted", "none"]) }),
  aaguid: v.string(),
  backup_eligible: v.boolean(),
  backup_state: v.boolean(),
  transports: v.array(v.string()),
  created_at: isoTimestamp,
  last_used_at: v.nullable(isoTimestamp),
  revoked_at: v.nullable(isoTimestamp),
});

export const deviceListSchema = v.object({ devices: v.array(deviceViewSchema) });
export const revokedDeviceSchema = v.object({
  device: deviceViewSchema,
  already_revoked: described(v.boolean(), "True when it was revoked before this request (revoked_at is the first revocation's)."),
});
export const renamedDeviceSchema = v.object({ device: deviceViewSchema });
