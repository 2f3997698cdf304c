-- ============================================================================
-- Device management (issue 27): a person names, lists and revokes their own
-- devices; each credential records how it came to be registered; its key's
-- JWK thumbprint lets a disclosure find the device from the key a holder
-- presents; and a new device can be added by the approval of a registered one
-- (private.device_additions). docs/devices.md, "Managing devices" and "Adding
-- a device".
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Credentials: name, how registered, key thumbprint
-- ----------------------------------------------------------------------------
alter table private.device_credentials
  add column name text check (name is null or (length(name) between 1 and 64 and name !~ '[[:cntrl:]]')),
  add column registered_via text not null default 'enroll'
    check (registered_via in ('enroll', 'device_approval', 'document')),
  add column key_thumbprint text check (key_thumbprint ~ '^[A-Za-z0-9_-]{43}$');
alter table private.device_credentials alter column registered_via drop default;
comment on column private.device_credentials.name is 'The name the person gave the device (1 to 64 characters), or null: shown to them only, never to a merchant.';
comment on column private.device_credentials.registered_via is
  'How the credential was registered: enroll (in the ceremony of a capture that enrolled or identified the person), device_approval (another registered device of the person signed its registration), document (re-proof with a verified document on record plus a live capture).';
comment on column private.device_credentials.key_thumbprint is
  'RFC 7638 SHA-256 thumbprint (base64url) of the public key as a JWK: how a disclosure finds the device from the key a holder presents (biometric_attestation.device_pubkey_pem). Null for a key registered before it was recorded.';
create index device_credentials_thumbprint_idx on private.device_credentials (environment, key_thumbprint) where key_thumbprint is not null;

-- ----------------------------------------------------------------------------
-- Additions: a new device's registration awaiting a registered device's approval
-- ----------------------------------------------------------------------------
create table private.device_additions (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  code_hash text not null unique check (code_hash ~ '^[0-9a-f]{64}$'),
  registration jsonb not null check (jsonb_typeof(registration) = 'object'),
  credential_id text not null check (credential_id ~ '^[A-Za-z0-9_-]+$' and length(credential_id) between 22 and 1364),
  created_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > created_at and expires_at <= created_at + interval '10 minutes'),
  approved_at timestamptz,
  approved_by uuid references private.device_credentials (id),
  device_id uuid unique references private.device_credentials (id),
  check ((approved_at is null) = (device_id is null) and (approved_at is null) = (approved_by is null)),
  check (approved_at is null or approved_at >= created_at)
);
comment on table private.device_additions is
  'A new device''s passkey registration, verified but not yet anyone''s, until a registered device of a person signs its approval (purpose add_device) before expires_at: then the credential is that person''s.';
comment on column private.device_additions.id is 'The addition''s id (answers show dad_ + 32 hex).';
comment on column private.device_additions.merchant_id is 'The merchant whose key began it: only that merchant''s key reads and approves it.';
comment on column private.device_additions.environment is 'test or live, as that key: the approving device must be registered in the same environment.';
comment on column private.device_additions.code_hash is 'SHA-256 hex of the approval code (dac_…) the QR code carries to the registered device; the code itself is never stored.';
comment on column private.device_additions.registration is
  'The verified registration''s facts (credential id, COSE public key as hex, counter, transports, AAGUID, attestation format and verdict, backup flags, key thumbprint), stored as the credential on approval.';
comment on column private.device_additions.credential_id is 'The new credential''s id (also in registration): one pending addition per credential.';
comment on column private.device_additions.created_at is 'When the new device asked.';
comment on column private.device_additions.expires_at is 'After this it can no longer be approved (five minutes by default, at most ten).';
comment on column private.device_additions.approved_at is 'When a registered device''s signature approved it.';
comment on column private.device_additions.approved_by is 'The registered device that signed the approval.';
comment on column private.device_additions.device_id is 'The credential the approval registered.';
create index device_additions_expires_idx on private.device_additions (expires_at);
