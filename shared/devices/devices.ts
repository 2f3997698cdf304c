/**
 * A person's devices as they see and manage them: the view of a credential (never its key), the
 * list of an identity's devices and the revocation of one, which takes effect on the next request
 * (an assertion reads the credential in its own transaction).
 */
import type { DeviceBinding } from "../contracts/device";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import type { Environment } from "../kernel/principal";
import { type AttestationVerdict, deviceBindingOf, deviceIdOf, deviceRef } from "./policy";
import type { DeviceCredentialRow } from "./rpc";

/** A device as answers show it: what it is and proved, and when it was used, never its key or credential id. */
export interface DeviceView {
  device_id: string;
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
