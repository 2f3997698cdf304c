/**
 * The devices' slice of the RPC catalogue (shared/kernel/db/rpc.ts): a person's WebAuthn credentials
 * (register, look up, record a use, list, revoke) and the device challenges (issue, consume).
 */

import type { Environment } from "../kernel/principal";
import type { Iso, TenantAt, Uuid } from "../kernel/rpc";
import type { AttestationVerdict, DeviceChallengePurpose } from "./policy";

/** What registration records of a credential: the facts the ceremony established. */
interface RegisteredCredential {
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
}

/** A credential as the device RPCs answer it (private.device_credential_json). */
export interface DeviceCredentialRow extends RegisteredCredential {
  created_at: Iso;
  last_used_at: Iso | null;
  sign_count_regressed_at: Iso | null;
  revoked_at: Iso | null;
}

/** A challenge as the RPCs find it: whose, for what, and its SHA-256. */
type ChallengeAt = TenantAt & { purpose: DeviceChallengePurpose; challenge_hash: string };

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    device_credential_register: [
      RegisteredCredential & { now: Iso },
      { registered: true; device: DeviceCredentialRow } | { registered: false; reason: "identity_unknown" | "credential_exists" },
    ];
    device_credential_get: [{ environment: Environment; credential_id: string }, { device: DeviceCredentialRow | null }];
    device_credential_use: [
      { environment: Environment; now: Iso; device_id: Uuid; identity_id: Uuid; sign_count: number; backup_state: boolean },
      { outcome: "used" | "regressed" | "revoked"; sign_count: number } | { outcome: "unknown" },
    ];
    device_credentials_list: [{ environment: Environment; identity_id: Uuid }, { devices: DeviceCredentialRow[] }];
    device_credential_revoke: [
      { environment: Environment; now: Iso; identity_id: Uuid; device_id: Uuid },
      { device: DeviceCredentialRow | null },
    ];
    device_challenge_issue: [ChallengeAt & { ttl_seconds: number }, { expires_at: Iso }];
    device_challenge_consume: [ChallengeAt, { outcome: "consumed" | "unknown" | "used" | "expired" }];
    device_challenges_sweep: [{ now: Iso }, { deleted: number }];
  }
}
