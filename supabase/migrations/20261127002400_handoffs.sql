-- ============================================================================
-- Handoffs (handoff-register-public): a hosted session started on one device
-- (a desktop without a camera) finished on another (a phone) through a
-- short-lived, single-use handoff code, shown as a QR code. Only the code's
-- SHA-256 is stored; the session token it hands over is sealed under a key
-- derived from the code itself, so the database alone opens nothing, and the
-- sealed token is dropped at the claim.
-- ============================================================================

create table private.handoffs (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  session_id uuid not null references private.hosted_sessions (id),
  code_hash text not null unique check (code_hash ~ '^[0-9a-f]{64}$'),
  sealed_session_token text check (length(sealed_session_token) between 16 and 512),
  created_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > created_at),
  claimed_at timestamptz,
  replaced_at timestamptz,
  check ((claimed_at is null and replaced_at is null) = (sealed_session_token is not null))
);
comment on table private.handoffs is 'Handoff codes of hosted sessions: one device registers, another claims once before expires_at.';
comment on column private.handoffs.id is 'handoff_id (responses show hof_ + 32 hex).';
comment on column private.handoffs.merchant_id is 'The merchant whose key registered it (the session''s merchant).';
comment on column private.handoffs.environment is 'test or live, as the key and the session.';
comment on column private.handoffs.session_id is 'The hosted session handed over.';
comment on column private.handoffs.code_hash is 'SHA-256 hex of the handoff code; the code itself is never stored.';
comment on column private.handoffs.sealed_session_token is 'The session token, AES-GCM sealed under a key derived from the code; null once claimed or replaced.';
comment on column private.handoffs.created_at is 'When it was registered.';
comment on column private.handoffs.expires_at is 'After this the code opens nothing (never later than the session''s own expiry).';
comment on column private.handoffs.claimed_at is 'When the other device claimed it (single use).';
comment on column private.handoffs.replaced_at is 'When a newer handoff of the same session replaced it.';
create index handoffs_session_idx on private.handoffs (session_id);
