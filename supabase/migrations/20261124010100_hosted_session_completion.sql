-- ============================================================================
-- Hosted sessions: a completion is one transaction (docs/decisions.md, "Hosted sessions").
--
-- Before, a completion marked the row (completion_started_at) in one transaction, ran the act
-- (the capture with its receipt, or the enrolment) in others, and recorded the outcome in a last
-- one; a worker that died in between left the act recorded and the session to expire. Now the
-- edge runs begin, the act and finish in one database transaction: begin locks the session row
-- (FOR UPDATE NOWAIT: a second completion or a cancel meanwhile is refused at once, HA704) and
-- holds the lock to the end; finish records the outcome and session.completed; any error rolls
-- the act back with it. The mark, its minute of grace after expires_at and the release RPC are
-- gone: uncommitted, nobody else could see them.
--
-- The lock-and-refuse steps of consume, begin and cancel are one helper, private.hosted_session_lock.
-- ============================================================================

-- The row's shape loses the mark.
alter table private.hosted_sessions drop constraint hosted_sessions_ended;
alter table private.hosted_sessions drop column completion_started_at;
alter table private.hosted_sessions add constraint hosted_sessions_ended check (
  (state in ('completed', 'failed', 'cancelled', 'expired')) = (ended_at is not null)
  and (state in ('completed', 'failed', 'cancelled')) = (result is not null)
);

drop function public.hosted_session_complete_release(jsonb);
drop function private.hosted_session_actable(text, timestamptz);

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

-- Writes a session's webhook (session.completed or session.expired) in the caller's transaction:
-- the one place that decides which sessions tell their merchant how they ended.
create or replace function private.hosted_session_emit(s private.hosted_sessions, p_type text, p_at timestamptz) returns void
language plpgsql set search_path = '' as $$
begin
  perform private.outbox_emit(s.merchant_id, s.environment, p_type, private.hosted_session_event(s), p_at);
end $$;
comment on function private.hosted_session_emit(private.hosted_sessions, text, timestamptz) is 'Writes a session''s session.completed or session.expired event in the caller''s transaction.';

-- Ends a locked, opened session with its outcome (completed, failed or cancelled) and writes
-- session.completed in the caller's transaction; answers the session as reads show it.
create or replace function private.hosted_session_end(p_id uuid, p_state text, p_result jsonb, p_at timestamptz) returns jsonb
language plpgsql set search_path = '' as $$
declare
  s private.hosted_sessions;
begin
  update private.hosted_sessions set state = p_state, ended_at = p_at, result = p_result where id = p_id
  returning * into s;
  perform private.hosted_session_emit(s, 'session.completed', p_at);
  return private.hosted_session_json(s, p_at);
end $$;
comment on function private.hosted_session_end(uuid, text, jsonb, timestamptz) is 'Records how an opened session ended and its session.completed event (complete and cancel).';

-- hosted_session_consume: as before; the lock and its refusals are private.hosted_session_lock's.
create or replace function public.hosted_session_consume(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
  v_merchant_name text;
begin
  -- A merchant key reaches only its own sessions: another merchant's token is unknown, and stays unused.
  if p ? 'merchant_id' and not exists (
    select 1 from private.hosted_sessions
    where token_hash = p ->> 'token_hash' and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
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
  return jsonb_build_object('session', private.hosted_session_json(s, v_now), 'environment', s.environment,
                            'merchant_name', v_merchant_name);
end $$;

-- hosted_session_complete_begin({screen_token_hash, now})
--   -> {session_id, merchant_id, environment, action, external_txn_ref, amount_cents, currency, capture_nonce}
--   | HA705 | HA702 | HA703 | HA704
-- The first statement of a completion's transaction: locks the session until the transaction ends,
-- so exactly one act runs per session and a cancel cannot overtake it.
create or replace function public.hosted_session_complete_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  s private.hosted_sessions := private.hosted_session_lock('screen', p ->> 'screen_token_hash', (p ->> 'now')::timestamptz);
begin
  return jsonb_build_object(
    'session_id', s.id, 'merchant_id', s.merchant_id, 'environment', s.environment, 'action', s.action,
    'external_txn_ref', s.external_txn_ref, 'amount_cents', s.amount_cents, 'currency', s.currency,
    'capture_nonce', s.capture_nonce);
end $$;
comment on function public.hosted_session_complete_begin(jsonb) is 'Starts the one completion of an opened session (the screen''s credential) by locking it for the transaction, or raises why it cannot.';

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
