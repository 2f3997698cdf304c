-- ============================================================================
-- Hosted sessions: create, read, consume, complete, cancel, expire; the /v1 modes.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

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

-- ----------------------------------------------------------------------------
-- RPCs
-- ----------------------------------------------------------------------------

-- hosted_session_create({id, merchant_id, environment, token_hash, action, external_txn_ref?, amount_cents?,
--                        currency?, brand?, opener_origin?, metadata, ttl_seconds, now}) -> the session (hosted_session_json)
create or replace function public.hosted_session_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
begin
  insert into private.hosted_sessions (id, merchant_id, environment, token_hash, action, external_txn_ref, amount_cents,
                                       currency, brand, opener_origin, metadata, ttl_seconds, created_at, expires_at)
  values ((p ->> 'id')::uuid, (p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'token_hash', p ->> 'action',
          p ->> 'external_txn_ref', (p ->> 'amount_cents')::bigint, p ->> 'currency', p ->> 'brand', p ->> 'opener_origin',
          p -> 'metadata', (p ->> 'ttl_seconds')::integer, v_now, v_now + make_interval(secs => (p ->> 'ttl_seconds')::integer))
  returning * into s;
  return private.hosted_session_json(s, v_now);
end $$;
comment on function public.hosted_session_create(jsonb) is 'hosted-session-create: stores a session under its token''s hash.';

-- Expired at p_at: stored so, or open or opened and past expires_at. A completion running at that
-- instant holds the row; its finish is refused (HA702) and rolled back with its act.
create or replace function private.hosted_session_expired(s private.hosted_sessions, p_at timestamptz) returns boolean
language sql stable set search_path = '' as $$
  select s.state = 'expired' or (s.state in ('open', 'opened') and s.expires_at <= p_at)
$$;
comment on function private.hosted_session_expired(private.hosted_sessions, timestamptz) is 'Whether a session is expired at p_at (derived from expires_at; nothing has to run).';

-- The session one of its secrets names, locked for this transaction, if it is in p_state at p_at:
--   p_secret 'token'  (the single-use session token's hash): waits for a concurrent exchange, so of
--                     racing exchanges exactly one finds the row open; unknown HA404, not open HA701;
--   p_secret 'screen' (the screen credential's hash): NOWAIT, a completion or cancel already holding
--                     the row is HA704; unknown HA705, not opened HA703 (detail: its state);
-- expired HA702 either way.
create or replace function private.hosted_session_lock(p_secret text, p_hash text, p_at timestamptz) returns private.hosted_sessions
language plpgsql set search_path = '' as $$
declare
  s private.hosted_sessions;
begin
  if p_secret = 'token' then
    select * into s from private.hosted_sessions where token_hash = p_hash for update;
  else
    begin
      select * into s from private.hosted_sessions where screen_token_hash = p_hash for update nowait;
    exception when lock_not_available then
      raise exception 'a completion of this session is running' using errcode = 'HA704';
    end;
  end if;
  if not found then
    if p_secret = 'token' then
      raise exception 'hosted session not found' using errcode = 'HA404';
    end if;
    raise exception 'unknown screen credential' using errcode = 'HA705';
  end if;
  if private.hosted_session_expired(s, p_at) then
    raise exception 'hosted session expired' using errcode = 'HA702';
  end if;
  if p_secret = 'token' and s.state <> 'open' then
    raise exception 'hosted session token already consumed' using errcode = 'HA701';
  end if;
  if p_secret = 'screen' and s.state <> 'opened' then
    raise exception 'hosted session ended' using errcode = 'HA703', detail = jsonb_build_object('state', s.state)::text;
  end if;
  return s;
end $$;
comment on function private.hosted_session_lock(text, text, timestamptz) is 'Locks the session a token or screen credential names, or raises why it cannot move (HA404, HA701 to HA705).';

-- hosted_session_complete_finish({session_id, now, state: completed|failed, result}) -> the session | HA702
-- The last statement of the completion's transaction (after the act): records the outcome and
-- session.completed. `now` is the clock at the end of the act: a session that expired while the
-- act ran is refused (HA702), and the caller rolls the act back with it.
create or replace function public.hosted_session_complete_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
begin
  if p ->> 'state' not in ('completed', 'failed') then
    raise exception 'a completion ends completed or failed' using errcode = '22023';
  end if;
  select * into s from private.hosted_sessions where id = (p ->> 'session_id')::uuid and state = 'opened' for update;
  if not found or private.hosted_session_expired(s, v_now) then
    raise exception 'hosted session expired during its completion' using errcode = 'HA702';
  end if;
  return private.hosted_session_end(s.id, p ->> 'state', p -> 'result', v_now);
end $$;
comment on function public.hosted_session_complete_finish(jsonb) is 'Records a session''s outcome (completed or failed) and its session.completed event, in the transaction of the act.';

-- hosted_session_cancel({screen_token_hash, now, reason}) -> the session | HA705 | HA702 | HA703 | HA704
create or replace function public.hosted_session_cancel(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions := private.hosted_session_lock('screen', p ->> 'screen_token_hash', v_now);
begin
  return private.hosted_session_end(s.id, 'cancelled', jsonb_build_object('approved', false, 'reason', p ->> 'reason'), v_now);
end $$;
comment on function public.hosted_session_cancel(jsonb) is 'The person ended the screen without a capture: cancelled, with session.completed in the same transaction.';

-- hosted_sessions_expire: as before, without the mark; a session a completion holds is skipped
-- (skip locked) and either ends with its outcome or, if it expired meanwhile, is expired by a later tick.
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
       set state = 'expired', ended_at = h.expires_at
     where h.id in (
       select d.id from private.hosted_sessions d
       where d.state in ('open', 'opened') and d.expires_at <= v_now
       order by d.expires_at
       limit v_limit
       for update skip locked)
    returning h.*
  loop
    perform private.hosted_session_emit(s, 'session.expired', s.expires_at);
    v_expired := v_expired + 1;
  end loop;
  return jsonb_build_object('expired', v_expired);
end $$;
comment on function public.hosted_sessions_expire(jsonb) is 'Stores the expiry of unfinished sessions past expires_at and writes session.expired for each (outbox worker).';

-- ----------------------------------------------------------------------------
-- A sign-in by presence: the login session's verdict
-- ----------------------------------------------------------------------------

-- When a login session's identification goes stale: ten minutes after the session ended (null while it
-- has not). A sign-in finished later is refused as stale; the sweeps count a sign-in until then.
create or replace function private.sign_in_stale_at(s private.hosted_sessions) returns timestamptz
language sql stable set search_path = '' as $$
  select s.ended_at + interval '10 minutes'
$$;
comment on function private.sign_in_stale_at(private.hosted_sessions) is 'When a login session''s identification goes stale: ten minutes after it ended (null while it has not).';

-- Why a hosted login session does not sign anyone in yet, or null when it does: pending (the screen has
-- not identified anyone: ask again), refused (the capture was refused, cancelled or the session
-- expired), stale (identified before private.sign_in_stale_at). The one rule of an owner's sign-in
-- (agent_sign_in_finish, owner_sign_in_finish) and a person's (person_sign_in_finish).
create or replace function private.sign_in_session_refusal(s private.hosted_sessions, p_now timestamptz) returns text
language sql stable set search_path = '' as $$
  select case
    when s.state in ('open', 'opened') and s.expires_at > p_now then 'pending'
    when s.state is distinct from 'completed' or (s.result ->> 'approved') is distinct from 'true' then 'refused'
    when private.sign_in_stale_at(s) < p_now then 'stale'
  end
$$;
comment on function private.sign_in_session_refusal(private.hosted_sessions, timestamptz) is 'Why a hosted login session signs nobody in yet (pending, refused, stale), or null: the rule of the owner''s and the person''s sign-in.';

-- When a sign-in by presence (a row of private.person_sign_ins, private.owner_sign_ins or
-- private.agent_sign_ins, by its used_at) stops counting: when it was used; unused, at the later of its
-- hosted session's expiry and private.sign_in_stale_at (until both have passed,
-- private.sign_in_session_refusal may still let it sign in). The sweeps of the person's page
-- (person_passkey_sweep), of the console (owner_console_sweep) and of the MCP authorization endpoint
-- (agent_sign_in_sweep) delete it a day after (D-702, D-730, D-750, D-751).
create or replace function private.sign_in_counts_until(p_used_at timestamptz, s private.hosted_sessions) returns timestamptz
language sql stable set search_path = '' as $$
  select coalesce(p_used_at, greatest(s.expires_at, private.sign_in_stale_at(s)))
$$;
comment on function private.sign_in_counts_until(timestamptz, private.hosted_sessions) is 'When a sign-in by presence stops counting: used, or its login session expired or stale, whichever is later.';

-- ----------------------------------------------------------------------------
-- Hosted sessions: a card's session is the service's
-- ----------------------------------------------------------------------------

-- hosted_session_consume (a merchant key never exchanges a card's session; the boot gets the card's
-- terms) is redefined once, with the /v1 sessions' additions, in 20261124050100_resource_sessions.sql.

-- hosted_session_get (20261121009200) again: a card's session is no merchant's to read.
create or replace function public.hosted_session_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.hosted_session_json(s, (p ->> 'now')::timestamptz)
  from private.hosted_sessions s
  where s.id = (p ->> 'session_id')::uuid
    and s.merchant_id = (p ->> 'merchant_id')::uuid
    and s.environment = p ->> 'environment'
    and s.action <> 'verify'
$$;
comment on function public.hosted_session_get(jsonb) is 'hosted-session-get: one session of this merchant and environment, with its effective state; another''s (or a card''s) is null.';

-- hosted_session_emit (20261124010100) again: a card's session writes no session.completed and no
-- session.expired (function API 6 rule 4: a card is the service's, not the merchant's).
create or replace function private.hosted_session_emit(s private.hosted_sessions, p_type text, p_at timestamptz) returns void
language plpgsql set search_path = '' as $$
begin
  if s.action <> 'verify' then
    perform private.outbox_emit(s.merchant_id, s.environment, p_type, private.hosted_session_event(s), p_at);
  end if;
end $$;
comment on function private.hosted_session_emit(private.hosted_sessions, text, timestamptz) is 'Writes a session''s session.completed or session.expired event in the caller''s transaction; none for a card''s session.';

-- The /v1 status of a session at p_at (resource API 3.2): open until an outcome; a judged refusal
-- is an outcome (completed, with result.outcome refused).
create or replace function private.mode_session_status(s private.hosted_sessions, p_at timestamptz) returns text
language sql stable set search_path = '' as $$
  select case when private.hosted_session_expired(s, p_at) then 'expired'
              when s.state in ('open', 'opened') then 'open'
              when s.state in ('completed', 'failed') then 'completed'
              else s.state end
$$;
comment on function private.mode_session_status(private.hosted_sessions, timestamptz) is
  'A session''s /v1 status at p_at: open, completed (approved or refused), cancelled or expired.';

-- A session as /v1 shows it (2.2, 4.5). The url is never stored: only create answers it.
create or replace function private.mode_session_json(s private.hosted_sessions, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('hs_', s.id),
    'object', 'session',
    'status', private.mode_session_status(s, p_at),
    'mode', s.action,
    'return_url', s.return_url,
    'cancel_url', s.cancel_url,
    'facetoken', s.facetoken,
    'attribute', s.attribute,
    'mandate', s.mandate_terms,
    'branding', s.branding,
    'locale', s.locale,
    'metadata', s.metadata,
    'created_at', private.iso_utc(s.created_at),
    'expires_at', private.iso_utc(s.expires_at),
    'ended_at', private.iso_utc(case when private.hosted_session_expired(s, p_at) then s.expires_at else s.ended_at end),
    'result', case when s.state in ('completed', 'failed', 'cancelled') then s.result end)
$$;
comment on function private.mode_session_json(private.hosted_sessions, timestamptz) is
  'API shape of a /v1 session at p_at (never the token, so never the url).';

-- The session webhooks' data: the function API's fields, and on a /v1 session its mode and /v1 status.
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
  || case when s.return_url is null then '{}'::jsonb
          else jsonb_build_object('object', 'session', 'mode', s.action,
                                  'status', private.mode_session_status(s, coalesce(s.ended_at, s.expires_at))) end
$$;
comment on function private.hosted_session_event(private.hosted_sessions) is 'The data object of the session webhooks (docs/webhooks.md); a /v1 session''s also carries mode and status.';

-- Ends a locked, opened session with its outcome and writes session.completed in the caller's
-- transaction; answers the session as reads show it, with a /v1 session's way back (return_url,
-- cancel_url) for the screen.
create or replace function private.hosted_session_end(p_id uuid, p_state text, p_result jsonb, p_at timestamptz) returns jsonb
language plpgsql set search_path = '' as $$
declare
  s private.hosted_sessions;
begin
  update private.hosted_sessions
     set state = p_state, ended_at = p_at, result = p_result
   where id = p_id
  returning * into s;
  perform private.hosted_session_emit(s, 'session.completed', p_at);
  return private.hosted_session_json(s, p_at)
    || case when s.return_url is null then '{}'::jsonb
            else jsonb_build_object('return_url', s.return_url, 'cancel_url', s.cancel_url,
                                    'status', private.mode_session_status(s, p_at)) end;
end $$;
comment on function private.hosted_session_end(uuid, text, jsonb, timestamptz) is
  'Records how an opened session ended and its session.completed event (complete and cancel; private.hosted_session_emit decides which sessions write it); a /v1 session''s answer names its way back.';

-- What a /v1 session asks of the screen, beside the function API's fields (boot).
create or replace function private.mode_session_terms(s private.hosted_sessions) returns jsonb
language sql stable set search_path = '' as $$
  select case when s.return_url is null then '{}'::jsonb
              else jsonb_build_object('mode', jsonb_build_object(
                     'name', s.action, 'attribute', s.attribute, 'mandate', s.mandate_terms, 'branding', s.branding,
                     'locale', s.locale, 'return_url', s.return_url, 'cancel_url', s.cancel_url)) end
$$;
comment on function private.mode_session_terms(private.hosted_sessions) is
  'A /v1 session''s mode and what the screen shows for it ({} for a function API session).';

-- hosted_session_consume (20261124020100) again: a /v1 session's answer also carries `mode` (mode_session_terms).
create or replace function public.hosted_session_consume(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
  v_merchant_name text;
  v_card jsonb;
begin
  -- A merchant key reaches only its own sessions, and never a card's: another's token is unknown, and stays unused.
  if p ? 'merchant_id' and not exists (
    select 1 from private.hosted_sessions
    where token_hash = p ->> 'token_hash' and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
      and action <> 'verify'
  ) then
    raise exception 'hosted session not found' using errcode = 'HA404';
  end if;
  s := private.hosted_session_lock('token', p ->> 'token_hash', v_now);
  update private.hosted_sessions
     set state = 'opened', opened_at = v_now, opened_by = p ->> 'opened_by',
         capture_nonce = p ->> 'capture_nonce', screen_token_hash = p ->> 'screen_token_hash'
   where id = s.id
  returning * into s;
  select name into v_merchant_name from private.merchants where id = s.merchant_id;
  select jsonb_build_object('verification_id', private.public_id('av_', v.id), 'purpose', v.purpose, 'agent_name', v.agent_name,
                            'requested_by', case when v.agent_client_id is null then 'owner' else 'agent' end)
    into v_card from private.agent_verifications v where v.session_id = s.id;
  return jsonb_build_object('session', private.hosted_session_json(s, v_now), 'environment', s.environment,
                            'merchant_name', v_merchant_name, 'card', v_card, 'opener_origin', s.opener_origin)
      || private.mode_session_terms(s);
end $$;
comment on function public.hosted_session_consume(jsonb) is 'hosted-session-consume and the screen''s boot: exchanges the single-use token for the session, its capture nonce and screen credential (and a card''s terms, a /v1 session''s mode).';

-- hosted_session_complete_begin (20261124010100) again, plus what a /v1 mode's completion needs (facetoken, attribute, mandate terms).
create or replace function public.hosted_session_complete_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  s private.hosted_sessions := private.hosted_session_lock('screen', p ->> 'screen_token_hash', (p ->> 'now')::timestamptz);
begin
  return jsonb_build_object(
    'session_id', s.id, 'merchant_id', s.merchant_id, 'environment', s.environment, 'action', s.action,
    'external_txn_ref', s.external_txn_ref, 'amount_cents', s.amount_cents, 'currency', s.currency,
    'capture_nonce', s.capture_nonce, 'facetoken', s.facetoken, 'attribute', s.attribute, 'mandate_terms', s.mandate_terms);
end $$;
comment on function public.hosted_session_complete_begin(jsonb) is 'Starts the one completion of an opened session (the screen''s credential) by locking it for the transaction, or raises why it cannot.';

-- mode_session_create({id, merchant_id, environment, token_hash, mode, return_url, cancel_url, facetoken?,
--   attribute?, mandate?, branding?, locale?, metadata, now, url, stored_response?: {record}}) -> the session with its url
-- The answer (201) is stored under the request's Idempotency-Key in the same transaction, so a
-- replay answers the same session and url, and a session is never created twice for one key.
create or replace function public.mode_session_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
  v_body jsonb;
begin
  insert into private.hosted_sessions (id, merchant_id, environment, token_hash, action, metadata, ttl_seconds, created_at,
                                       expires_at, return_url, cancel_url, facetoken, attribute, mandate_terms, branding, locale)
  values ((p ->> 'id')::uuid, (p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'token_hash', p ->> 'mode',
          p -> 'metadata', 1800, v_now, v_now + interval '30 minutes', p ->> 'return_url', p ->> 'cancel_url',
          p ->> 'facetoken', p ->> 'attribute', p -> 'mandate', p -> 'branding', p ->> 'locale')
  returning * into s;
  v_body := private.mode_session_json(s, v_now) || jsonb_build_object('url', p ->> 'url');
  perform private.idempotency_store_act(p -> 'stored_response', 201, v_body, null);
  return v_body;
end $$;
comment on function public.mode_session_create(jsonb) is
  'POST /v1/sessions: stores a /v1 session under its token''s hash and, with an Idempotency-Key, its answer in the same transaction.';

-- mode_session_get({merchant_id, environment, session_id, now}) -> the session | null
create or replace function public.mode_session_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.mode_session_json(s, (p ->> 'now')::timestamptz)
  from private.hosted_sessions s
  where s.id = (p ->> 'session_id')::uuid
    and s.merchant_id = (p ->> 'merchant_id')::uuid
    and s.environment = p ->> 'environment'
    and s.return_url is not null
$$;
comment on function public.mode_session_get(jsonb) is
  'GET /v1/sessions/{id}: one /v1 session of this merchant and environment at the request clock; any other is null.';
