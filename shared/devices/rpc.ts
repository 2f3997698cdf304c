/**
 * The devices' slice of the RPC catalogue (shared/kernel/db/rpc.ts): a person's WebAuthn credentials
 * (register, look up, record a use, list, revoke, rename), the device challenges (issue, consume) and
 * the additions of a new device approved by a registered one (create, read, approve).
 */

import type { DeviceBinding } from "../contracts/device";
import type { Environment } from "../kernel/principal";
import type { Iso, TenantAt, Uuid } from "../kernel/rpc";
import type { AttestationVerdict, DeviceChallengePurpose, DeviceRegisteredVia } from "./policy";

/** What registration records of a credential: the facts the ceremony established. */
export interface RegisteredCredential {
  device_id: Uuid;
  identity_id: Uuid;
  environment: Environment;
  credential_id: string;
  public_key_hex: string;
  sign_count: number;
  transports: string[];
  aaguid: Uuid;
  attestation_format: string;
  attestation_verdict: AttestationVerdict;
  backup_eligible: boolean;
  backup_state: boolean;
  /** RFC 7638 thumbprint of the key as a JWK (null for a key registered before it was recorded). */
  key_thumbprint: string | null;
  /** The user handle issued with the registration's options (base64url), or null when none was served. */
  user_handle?: string | null;
}

/** A verified registration not yet anyone's (a device addition's): the facts without owner or environment. */
export type PendingRegistration = Omit<RegisteredCredential, "device_id" | "identity_id" | "environment">;

/** A credential as the device RPCs answer it (private.device_credential_json). */
export interface DeviceCredentialRow extends RegisteredCredential {
  name: string | null;
  registered_via: DeviceRegisteredVia;
  created_at: Iso;
  last_used_at: Iso | null;
  sign_count_regressed_at: Iso | null;
  revoked_at: Iso | null;
}

/** A device addition as the RPCs answer it (private.device_addition_json). */
export interface DeviceAdditionRow {
  /** dad_ + 32 hex. */
  addition_id: string;
  merchant_id: Uuid;
  environment: Environment;
  state: "pending" | "approved" | "expired";
  credential_id: string;
  registration: PendingRegistration;
  created_at: Iso;
  expires_at: Iso;
  approved_at: Iso | null;
  device: DeviceCredentialRow | null;
}

/** Whose session asks (a first-party session's token hash), when a person manages their own devices. */
type PersonAt = { environment: Environment; identity_id: Uuid; now: Iso; session_token_hash?: string };

/** A challenge as the RPCs find it: whose, for what, and its SHA-256. */
type ChallengeAt = TenantAt & { purpose: DeviceChallengePurpose; challenge_hash: string };

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    device_credential_register: [
      RegisteredCredential & {
        now: Iso;
        device_binding: Exclude<DeviceBinding, "none">;
        registered_via?: DeviceRegisteredVia;
        document_lds_sha256?: string;
      },
      (
        | { registered: true; device: DeviceCredentialRow }
        | { registered: false; reason: "identity_unknown" | "credential_exists" | "document_not_on_record" }
      ),
    ];
    device_credential_get: [{ environment: Environment; credential_id: string }, { device: DeviceCredentialRow | null }];
    device_credential_use: [
      { environment: Environment; now: Iso; device_id: Uuid; identity_id: Uuid; sign_count: number; backup_state: boolean },
      { outcome: "used" | "regressed" | "revoked"; sign_count: number } | { outcome: "unknown" },
    ];
    device_credentials_list: [
      { environment: Environment; identity_id: Uuid; now?: Iso; session_token_hash?: string },
      { devices: DeviceCredentialRow[] },
    ];
    device_credential_revoke: [PersonAt & { device_id: Uuid }, { device: DeviceCredentialRow | null; already_revoked: boolean }];
    device_credential_rename: [PersonAt & { device_id: Uuid; name: string }, { device: DeviceCredentialRow | null }];
    device_credential_by_key: [{ environment: Environment; key_thumbprint: string }, { device: DeviceCredentialRow | null }];
    device_addition_create: [
      TenantAt & { id: Uuid; code_hash: string; registration: PendingRegistration; credential_id: string; ttl_seconds: number },
      { created: true; addition: DeviceAdditionRow } | { created: false; reason: "credential_exists" },
    ];
    device_addition_get: [
      { now: Iso } & ({ addition_id: Uuid; merchant_id: Uuid; environment: Environment } | { code_hash: string }),
      DeviceAdditionRow | null,
    ];
    device_addition_approve: [
      TenantAt & {
        code_hash: string;
        approver_device_id: Uuid;
        identity_id: Uuid;
        device_id: Uuid;
        device_binding: Exclude<DeviceBinding, "none">;
      },
      (
        | { approved: true; addition: DeviceAdditionRow }
        | {
            approved: false;
            reason:
              | "addition_unknown"
              | "addition_expired"
              | "addition_approved"
              | "credential_revoked"
              | "credential_exists"
              | "identity_unknown";
          }
      ),
    ];
    device_challenge_issue: [ChallengeAt & { ttl_seconds: number; user_handle?: string }, { expires_at: Iso }];
    device_challenge_consume: [
      ChallengeAt,
      { outcome: "consumed"; user_handle: string | null } | { outcome: "unknown" | "used" | "expired" },
    ];
    device_challenge_user_handle: [
      ChallengeAt & { user_handle: string },
      { outcome: "open"; user_handle: string } | { outcome: "unknown" | "used" | "expired" },
    ];
    device_challenges_sweep: [{ now: Iso }, { deleted: number }];
  }
}
