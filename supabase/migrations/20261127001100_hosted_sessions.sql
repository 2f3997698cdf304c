-- ============================================================================
-- Hosted sessions (function API 2.7, 3.3, 4.12, 4.13): a merchant hands one
-- person to the service's hosted capture screen, once.
--
-- States (docs/decisions.md, "Hosted sessions"):
--   open      created by hosted-session-create; its token not yet exchanged
--   opened    the token was exchanged (hosted-session-consume, or the screen's
--             boot, which calls the same RPC): the screen holds its own
--             credential and the session's one capture nonce
--   completed the capture was judged and the act the action asks for happened
--   failed    the capture was judged and refused (the result says why)
--   cancelled the person ended the screen without a capture
--   expired   open or opened when expires_at passed: derived at every read from
--             the request clock, so nothing has to run; the outbox worker's
--             tick stores it and writes session.expired
-- Single use is the row lock: hosted_session_consume locks the row by token
-- hash, and only an open row moves to opened. A completion marks the row
-- (completion_started_at) before it acts, so one act runs per session and a
-- cancel cannot overtake it.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Sessions
-- ----------------------------------------------------------------------------
create table private.hosted_sessions (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  action text not null check (action in ('enroll', 'login', 'authorize', 'sign')),
  external_txn_ref text check (external_txn_ref ~ '^[A-Za-z0-9:._-]{8,128}$'),
  amount_cents bigint check (amount_cents between 0 and 9007199254740991),
  currency text check (currency ~ '^[A-Z]{3}$'),
  brand private.brand_name,
  metadata jsonb not null check (jsonb_typeof(metadata) = 'object'),
  ttl_seconds integer not null check (ttl_seconds between 60 and 900),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  state text not null default 'open' check (state in ('open', 'opened', 'completed', 'failed', 'cancelled', 'expired')),
  opened_at timestamptz,
  opened_by text check (opened_by in ('service', 'merchant')),
  capture_nonce text unique check (capture_nonce ~ '^[\x21-\x7e]{8,128}$'),
  screen_token_hash text unique check (screen_token_hash ~ '^[0-9a-f]{64}$'),
  completion_started_at timestamptz,
  ended_at timestamptz,
  result jsonb check (jsonb_typeof(result) = 'object'),
  constraint hosted_sessions_expiry check (expires_at = created_at + make_interval(secs => ttl_seconds)),
  constraint hosted_sessions_money check (
    case when action = 'authorize' then amount_cents is not null and currency is not null and external_txn_ref is not null
         else amount_cents is null and currency is null end
  ),
  constraint hosted_sessions_opened check (
    (opened_at is null) = (opened_by is null)
    and (opened_at is null) = (capture_nonce is null)
    and (opened_at is null) = (screen_token_hash is null)
    and (state <> 'open' or opened_at is null)
    and (state not in ('opened', 'completed', 'failed', 'cancelled') or opened_at is not null)
  ),
  constraint hosted_sessions_ended check (
    (state in ('completed', 'failed', 'cancelled', 'expired')) = (ended_at is not null)
    and (state in ('completed', 'failed', 'cancelled')) = (result is not null)
    and (completion_started_at is null or state = 'opened')
  )
);
comment on table private.hosted_sessions is 'Hosted capture sessions: what a merchant asked one person to do on the hosted screen, and what came of it. The token is single use.';
comment on column private.hosted_sessions.id is 'Session id (responses show it as hs_<32 hex>).';
comment on column private.hosted_sessions.merchant_id is 'Merchant whose secret key created the session; every act of the session is this merchant''s.';
comment on column private.hosted_sessions.environment is 'test or live, from the creating key''s prefix; the act runs in this environment.';
comment on column private.hosted_sessions.token_hash is 'Lowercase hex SHA-256 of session_token (32 random bytes, shown once at creation); the token itself is never stored.';
comment on column private.hosted_sessions.action is 'What the screen asks of the person: enroll, login, authorize (a payment) or sign.';
comment on column private.hosted_sessions.external_txn_ref is 'The merchant''s reference; required for authorize. It is the service_hash of the act''s receipt when present.';
comment on column private.hosted_sessions.amount_cents is 'Amount to authorise in the currency''s minor unit (authorize only).';
comment on column private.hosted_sessions.currency is 'ISO 4217 code of amount_cents (authorize only).';
comment on column private.hosted_sessions.brand is 'Name the screen shows for the merchant in this session; null: the published theme''s brand, else the merchant''s name.';
comment on column private.hosted_sessions.metadata is 'The merchant''s strings, returned unchanged on reads and on the session webhooks.';
comment on column private.hosted_sessions.ttl_seconds is 'Lifetime from creation, 60 to 900 seconds.';
comment on column private.hosted_sessions.created_at is 'Request clock at creation.';
comment on column private.hosted_sessions.expires_at is 'created_at + ttl_seconds: an open or opened session is expired from this instant on, whether or not anything ran.';
comment on column private.hosted_sessions.state is 'Stored state: open, opened, completed, failed, cancelled, or expired once the outbox worker recorded the expiry. Reads report expired as soon as expires_at passes.';
comment on column private.hosted_sessions.opened_at is 'When the token was exchanged (single use).';
comment on column private.hosted_sessions.opened_by is 'Who exchanged it: service (the hosted screen''s boot, or the service role) or merchant (the merchant''s own secret key).';
comment on column private.hosted_sessions.capture_nonce is 'The nonce issued for the session''s one capture when the token was exchanged; the completion''s descriptor must carry it.';
comment on column private.hosted_sessions.screen_token_hash is 'SHA-256 of the screen credential issued with the nonce; complete and cancel present it. Valid while the session is opened.';
comment on column private.hosted_sessions.completion_started_at is 'Set while a completion runs its act (request clock), so a second completion or a cancel is refused; cleared when it ends.';
comment on column private.hosted_sessions.ended_at is 'When the session completed, failed or was cancelled; for an expired session, expires_at.';
comment on column private.hosted_sessions.result is 'The outcome: {approved, reason, ...} with the act''s subject_ref, transaction and receipt, or the refusal; null while open, opened or expired.';
create index hosted_sessions_due_idx on private.hosted_sessions (expires_at) where state in ('open', 'opened');
