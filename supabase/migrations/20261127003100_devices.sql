-- ============================================================================
-- Devices (issue 27): a person's WebAuthn credentials (passkeys), and the
-- challenges the service issues so that a capture is signed by one of them.
-- A credential belongs to one identity in one environment; its public key is
-- the COSE key the authenticator registered, and what its attestation proved
-- is recorded beside it. A challenge is single use, short-lived and bound to
-- the merchant, environment and purpose it was issued for; only its SHA-256 is
-- stored. docs/devices.md says how the two are used.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Credentials
-- ----------------------------------------------------------------------------
create table private.device_credentials (
  id uuid primary key,
  identity_id uuid not null references private.identities (id),
  environment text not null check (environment in ('test', 'live')),
  credential_id text not null check (credential_id ~ '^[A-Za-z0-9_-]+$' and length(credential_id) between 22 and 1364),
  public_key bytea not null check (octet_length(public_key) between 32 and 2048),
  sign_count bigint not null check (sign_count between 0 and 4294967295),
  transports text[] not null default '{}'
    check (transports <@ array['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']::text[]),
  aaguid uuid not null,
  attestation_format text not null check (attestation_format in ('packed', 'tpm', 'android-key', 'android-safetynet', 'apple', 'fido-u2f', 'none')),
  attestation_verdict text not null check (attestation_verdict in ('trusted', 'self', 'untrusted', 'none')),
  backup_eligible boolean not null,
  backup_state boolean not null,
  created_at timestamptz not null,
  last_used_at timestamptz,
  sign_count_regressed_at timestamptz,
  revoked_at timestamptz,
  check (backup_eligible or not backup_state),
  check (last_used_at is null or last_used_at >= created_at),
  check (revoked_at is null or revoked_at >= created_at),
  unique (environment, credential_id)
);
comment on table private.device_credentials is
  'A person''s WebAuthn credentials (passkeys): the device half of the presence proof. One row per credential, per environment; never deleted, only revoked.';
comment on column private.device_credentials.id is 'The device''s id as the service names it (responses show dev_ + 32 hex).';
comment on column private.device_credentials.identity_id is 'The person whose device it is: an assertion counts only for this identity.';
comment on column private.device_credentials.environment is 'test or live, as the identity: a credential registered in one environment signs nothing in the other.';
comment on column private.device_credentials.credential_id is 'The WebAuthn credential id as base64url, as the authenticator returned it (rawId); unique per environment.';
comment on column private.device_credentials.public_key is 'The credential''s public key as the authenticator registered it: a COSE_Key (RFC 9052), the bytes assertions verify against.';
comment on column private.device_credentials.sign_count is 'The highest signature counter seen; 0 for an authenticator that does not count (synced passkeys).';
comment on column private.device_credentials.transports is 'How the client can reach the authenticator, as getTransports() reported at registration (hints, not proof).';
comment on column private.device_credentials.aaguid is 'The authenticator model''s AAGUID from the attested credential data (all zeros when the authenticator does not say).';
comment on column private.device_credentials.attestation_format is 'The attestation statement''s format (fmt): packed, tpm, android-key, android-safetynet, apple, fido-u2f or none.';
comment on column private.device_credentials.attestation_verdict is
  'What the attestation proved: trusted (a chain to a pinned root: this authenticator model made the key), self (signed by the credential itself: proves possession only), untrusted (a chain to no pinned root), none (no statement).';
comment on column private.device_credentials.backup_eligible is 'The BE flag at registration: the key may be synced off the device (a multi-device passkey).';
comment on column private.device_credentials.backup_state is 'The BS flag last seen: the key is synced now. Updated on each use.';
comment on column private.device_credentials.created_at is 'When it was registered.';
comment on column private.device_credentials.last_used_at is 'When an assertion by it was last accepted.';
comment on column private.device_credentials.sign_count_regressed_at is
  'When an assertion last came with a counter not above sign_count on an authenticator that counts: a sign of a cloned key. Such an assertion is refused.';
comment on column private.device_credentials.revoked_at is 'When it was revoked; a revoked credential signs nothing from the next request on.';
create index device_credentials_identity_idx on private.device_credentials (identity_id);

-- ----------------------------------------------------------------------------
-- Challenges
-- ----------------------------------------------------------------------------
create table private.device_challenges (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  purpose text not null
    check (purpose in ('enroll', 'login', 'payment', 'sign', 'verify', 'attribute', 'grant', 'add_device')),
  challenge_hash text not null unique check (challenge_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > created_at and expires_at <= created_at + interval '10 minutes'),
  consumed_at timestamptz,
  check (consumed_at is null or consumed_at >= created_at)
);
comment on table private.device_challenges is
  'Challenges the service issued for a device to sign: single use (consumed_at), short-lived (expires_at), for one merchant, environment and purpose.';
comment on column private.device_challenges.id is 'The challenge''s row id (never shown; the challenge itself is the handle).';
comment on column private.device_challenges.merchant_id is 'The merchant it was issued to: only that merchant''s request can consume it.';
comment on column private.device_challenges.environment is 'test or live, as the key that asked for it.';
comment on column private.device_challenges.purpose is
  'What the signed capture is for: a capture''s purpose (enroll, login, payment, sign, verify, attribute, grant) or add_device (registering another device).';
comment on column private.device_challenges.challenge_hash is 'SHA-256 hex of the challenge; the challenge itself is never stored.';
comment on column private.device_challenges.created_at is 'When it was issued.';
comment on column private.device_challenges.expires_at is 'After this it is refused (two minutes after issue by default).';
comment on column private.device_challenges.consumed_at is 'When a verification consumed it, whatever that verification concluded: a challenge is tried once.';
create index device_challenges_expires_idx on private.device_challenges (expires_at);
