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


-- ----------------------------------------------------------------------------
-- Helpers
-- ----------------------------------------------------------------------------
-- Expired at p_at: stored so, or open or opened past expires_at. A completion that started before
-- the expiry is left to finish for a minute (its act may already have happened); after that it is
-- presumed dead.
create or replace function private.hosted_session_expired(s private.hosted_sessions, p_at timestamptz) returns boolean
language sql stable set search_path = '' as $$
  select s.state = 'expired'
      or (s.state in ('open', 'opened') and s.expires_at <= p_at
          and (s.completion_started_at is null or s.completion_started_at <= p_at - interval '1 minute'))
$$;
comment on function private.hosted_session_expired(private.hosted_sessions, timestamptz) is 'Whether a session is expired at p_at (derived from expires_at; nothing has to run).';

-- The session as merchants read it: the fields of 2.7 without the token, its state and outcome.
create or replace function private.hosted_session_json(s private.hosted_sessions, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'session_id', private.public_id('hs_', s.id),
    'merchant_id', s.merchant_id,
    'action', s.action,
    'external_txn_ref', s.external_txn_ref,
    'amount_cents', s.amount_cents,
    'currency', s.currency,
    'brand', s.brand,
    'metadata', s.metadata,
    'ttl_seconds', s.ttl_seconds,
    'expires_at', private.iso_utc(s.expires_at),
    'single_use', true,
    'state', case when private.hosted_session_expired(s, p_at) then 'expired' else s.state end,
    'created_at', private.iso_utc(s.created_at),
    'opened_at', private.iso_utc(s.opened_at),
    'ended_at', private.iso_utc(case when private.hosted_session_expired(s, p_at) then s.expires_at else s.ended_at end),
    'result', s.result)
$$;
comment on function private.hosted_session_json(private.hosted_sessions, timestamptz) is 'API shape of a hosted session at p_at (effective state; never the token or the screen credential).';

-- The data of session.completed and session.expired.
create or replace function private.hosted_session_event(s private.hosted_sessions) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('hs_', s.id),
    'metadata', s.metadata,
    'state', s.state,
    'action', s.action,
    'external_txn_ref', s.external_txn_ref,
    'ended_at', private.iso_utc(s.ended_at),
    'result', s.result)
$$;
comment on function private.hosted_session_event(private.hosted_sessions) is 'The data object of the session webhooks (docs/webhooks.md).';

-- The session a screen credential names, locked, if it may still act: unknown credential HA705,
-- expired HA702, ended HA703 (detail: its state), a completion already running HA704.
create or replace function private.hosted_session_actable(p_screen_token_hash text, p_at timestamptz) returns private.hosted_sessions
language plpgsql set search_path = '' as $$
declare
  s private.hosted_sessions;
begin
  select * into s from private.hosted_sessions where screen_token_hash = p_screen_token_hash for update;
  if not found then
    raise exception 'unknown screen credential' using errcode = 'HA705';
  end if;
  if private.hosted_session_expired(s, p_at) then
    raise exception 'hosted session expired' using errcode = 'HA702';
  end if;
  if s.state <> 'opened' then
    raise exception 'hosted session ended' using errcode = 'HA703', detail = jsonb_build_object('state', s.state)::text;
  end if;
  if s.completion_started_at is not null then
    raise exception 'a completion of this session is running' using errcode = 'HA704';
  end if;
  return s;
end $$;
comment on function private.hosted_session_actable(text, timestamptz) is 'Locks the opened session of a screen credential, or raises why it cannot act (HA702 to HA705).';

-- Ends a locked, opened session with its outcome (completed, failed or cancelled) and writes
-- session.completed in the caller's transaction; answers the session as reads show it.
create or replace function private.hosted_session_end(p_id uuid, p_state text, p_result jsonb, p_at timestamptz) returns jsonb
language plpgsql set search_path = '' as $$
declare
  s private.hosted_sessions;
begin
  update private.hosted_sessions
     set state = p_state, ended_at = p_at, result = p_result, completion_started_at = null
   where id = p_id
  returning * into s;
  perform private.outbox_emit(s.merchant_id, s.environment, 'session.completed', private.hosted_session_event(s), p_at);
  return private.hosted_session_json(s, p_at);
end $$;
comment on function private.hosted_session_end(uuid, text, jsonb, timestamptz) is 'Records how an opened session ended and its session.completed event (complete and cancel).';


-- ----------------------------------------------------------------------------
-- RPCs
-- ----------------------------------------------------------------------------

-- hosted_session_create({id, merchant_id, environment, token_hash, action, external_txn_ref?, amount_cents?,
--                        currency?, brand?, metadata, ttl_seconds, now}) -> the session (hosted_session_json)
create or replace function public.hosted_session_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
begin
  insert into private.hosted_sessions (id, merchant_id, environment, token_hash, action, external_txn_ref, amount_cents,
                                       currency, brand, metadata, ttl_seconds, created_at, expires_at)
  values ((p ->> 'id')::uuid, (p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'token_hash', p ->> 'action',
          p ->> 'external_txn_ref', (p ->> 'amount_cents')::bigint, p ->> 'currency', p ->> 'brand', p -> 'metadata',
          (p ->> 'ttl_seconds')::integer, v_now, v_now + make_interval(secs => (p ->> 'ttl_seconds')::integer))
  returning * into s;
  return private.hosted_session_json(s, v_now);
end $$;
comment on function public.hosted_session_create(jsonb) is 'hosted-session-create: stores a session under its token''s hash.';

-- hosted_session_consume({token_hash, now, opened_by: service|merchant, merchant_id?, environment?,
--                         capture_nonce, screen_token_hash})
--   -> {session, environment, merchant_name} | HA404 unknown (or another merchant's) | HA702 expired | HA701 consumed
-- Exchanges the single-use token: of racing exchanges the row lock lets exactly one move open to opened.
-- A merchant key (merchant_id and environment given) reaches only its own sessions; another
-- merchant's token is answered as unknown and stays unconsumed.
create or replace function public.hosted_session_consume(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
  v_merchant_name text;
begin
  select * into s from private.hosted_sessions where token_hash = p ->> 'token_hash' for update;
  if not found or (p ? 'merchant_id' and (s.merchant_id <> (p ->> 'merchant_id')::uuid or s.environment <> p ->> 'environment')) then
    raise exception 'hosted session not found' using errcode = 'HA404';
  end if;
  if private.hosted_session_expired(s, v_now) then
    raise exception 'hosted session expired' using errcode = 'HA702';
  end if;
  if s.state <> 'open' then
    raise exception 'hosted session token already consumed' using errcode = 'HA701';
  end if;
  update private.hosted_sessions
     set state = 'opened', opened_at = v_now, opened_by = p ->> 'opened_by',
         capture_nonce = p ->> 'capture_nonce', screen_token_hash = p ->> 'screen_token_hash'
   where id = s.id
  returning * into s;
  select name into v_merchant_name from private.merchants where id = s.merchant_id;
  return jsonb_build_object('session', private.hosted_session_json(s, v_now), 'environment', s.environment,
                            'merchant_name', v_merchant_name);
end $$;
comment on function public.hosted_session_consume(jsonb) is 'hosted-session-consume and the screen''s boot: exchanges the single-use token for the session, its capture nonce and screen credential.';

-- hosted_session_get({merchant_id, environment, session_id, now}) -> the session | null
create or replace function public.hosted_session_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.hosted_session_json(s, (p ->> 'now')::timestamptz)
  from private.hosted_sessions s
  where s.id = (p ->> 'session_id')::uuid
    and s.merchant_id = (p ->> 'merchant_id')::uuid
    and s.environment = p ->> 'environment'
$$;
comment on function public.hosted_session_get(jsonb) is 'hosted-session-get: one session of this merchant and environment, with its effective state; another''s is null.';

-- hosted_session_complete_begin({screen_token_hash, now})
--   -> {session_id, merchant_id, environment, action, external_txn_ref, amount_cents, currency, capture_nonce}
--   | HA705 | HA702 | HA703 | HA704 (hosted_session_actable)
-- Marks the completion as running, so exactly one act runs per session.
create or replace function public.hosted_session_complete_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions := private.hosted_session_actable(p ->> 'screen_token_hash', v_now);
begin
  update private.hosted_sessions set completion_started_at = v_now where id = s.id;
  return jsonb_build_object(
    'session_id', s.id, 'merchant_id', s.merchant_id, 'environment', s.environment, 'action', s.action,
    'external_txn_ref', s.external_txn_ref, 'amount_cents', s.amount_cents, 'currency', s.currency,
    'capture_nonce', s.capture_nonce);
end $$;
comment on function public.hosted_session_complete_begin(jsonb) is 'Starts the one completion of an opened session (the screen''s credential), or raises why it cannot.';

-- hosted_session_complete_release({session_id}) -> {}
-- A completion that ended in an error, not an outcome (bad input, a 5xx): the session is opened again.
create or replace function public.hosted_session_complete_release(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  update private.hosted_sessions set completion_started_at = null
  where id = (p ->> 'session_id')::uuid and state = 'opened';
  select '{}'::jsonb
$$;
comment on function public.hosted_session_complete_release(jsonb) is 'Gives an opened session back after a completion that produced no outcome.';

-- hosted_session_complete_finish({session_id, now, state: completed|failed, result}) -> the session | HA702
-- Records the outcome and writes session.completed in the same transaction. HA702 when the
-- completion ran so long (over a minute past expiry) that the session was expired meanwhile.
create or replace function public.hosted_session_complete_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
begin
  perform 1 from private.hosted_sessions
  where id = (p ->> 'session_id')::uuid and state = 'opened' and completion_started_at is not null
  for update;
  if not found then
    raise exception 'hosted session expired during its completion' using errcode = 'HA702';
  end if;
  if p ->> 'state' not in ('completed', 'failed') then
    raise exception 'a completion ends completed or failed' using errcode = '22023';
  end if;
  return private.hosted_session_end((p ->> 'session_id')::uuid, p ->> 'state', p -> 'result', (p ->> 'now')::timestamptz);
end $$;
comment on function public.hosted_session_complete_finish(jsonb) is 'Records a session''s outcome (completed or failed) and its session.completed event in one transaction.';

-- hosted_session_cancel({screen_token_hash, now, reason}) -> the session | HA705 | HA702 | HA703 | HA704
create or replace function public.hosted_session_cancel(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions := private.hosted_session_actable(p ->> 'screen_token_hash', v_now);
begin
  return private.hosted_session_end(s.id, 'cancelled', jsonb_build_object('approved', false, 'reason', p ->> 'reason'), v_now);
end $$;
comment on function public.hosted_session_cancel(jsonb) is 'The person ended the screen without a capture: cancelled, with session.completed in the same transaction.';

-- hosted_sessions_expire({now, limit?}) -> {expired}
-- The outbox worker's tick: stores the expiry of sessions that expired unfinished (as reads already
-- report it) and writes one session.expired each, stamped at the expiry. skip locked lets
-- overlapping ticks share the work; a session is expired once.
create or replace function public.hosted_sessions_expire(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_limit integer := least(greatest(coalesce((p ->> 'limit')::integer, 1000), 1), 10000);
  v_expired integer := 0;
  s private.hosted_sessions;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  for s in
    update private.hosted_sessions h
       set state = 'expired', ended_at = h.expires_at, completion_started_at = null
     where h.id in (
       select d.id from private.hosted_sessions d
       where d.state in ('open', 'opened') and d.expires_at <= v_now and private.hosted_session_expired(d, v_now)
       order by d.expires_at
       limit v_limit
       for update skip locked)
    returning h.*
  loop
    perform private.outbox_emit(s.merchant_id, s.environment, 'session.expired', private.hosted_session_event(s), s.expires_at);
    v_expired := v_expired + 1;
  end loop;
  return jsonb_build_object('expired', v_expired);
end $$;
comment on function public.hosted_sessions_expire(jsonb) is 'Stores the expiry of unfinished sessions past expires_at and writes session.expired for each (outbox worker).';
