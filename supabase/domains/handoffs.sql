-- ============================================================================
-- Handoffs of a hosted session from one device to another.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- private.handoff_json(handoff, at): the handoff as its registrant reads it.
create or replace function private.handoff_json(h private.handoffs, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'handoff_id', 'hof_' || replace(h.id::text, '-', ''),
    'state', case when h.claimed_at is not null then 'claimed' when h.replaced_at is not null then 'replaced'
                  when h.expires_at <= p_at then 'expired' else 'pending' end,
    'expires_at', h.expires_at, 'claimed_at', h.claimed_at,
    'session', (select jsonb_build_object('session_id', 'hs_' || replace(s.id::text, '-', ''),
                                          'state', case when private.hosted_session_expired(s, p_at) then 'expired' else s.state end)
                from private.hosted_sessions s where s.id = h.session_id))
$$;
comment on function private.handoff_json(private.handoffs, timestamptz) is 'A handoff''s state (pending, claimed, expired, replaced) and its session''s.';

-- handoff_register({id, merchant_id?, environment?, session_token_hash, code_hash, sealed_session_token, ttl_seconds, now})
--   -> handoff json | HA404 unknown (or another merchant's) session | HA702 expired | HA701 already opened
-- The session must still be unopened: the other device will open it. A newer handoff replaces older ones.
-- With merchant_id (a merchant's key) only that merchant's sessions in that environment; without it (the
-- hosted screen, which holds only the token) the token alone names the session.
create or replace function public.handoff_register(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  s private.hosted_sessions;
  h private.handoffs;
begin
  -- A merchant key reaches only its own sessions: another merchant's token is unknown.
  if p ? 'merchant_id' and not exists (
    select 1 from private.hosted_sessions
    where token_hash = p ->> 'session_token_hash' and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
  ) then
    raise exception 'hosted session not found' using errcode = 'HA404';
  end if;
  -- locked, unopened and unexpired, or HA404, HA701, HA702 (the hosted sessions' own rule)
  s := private.hosted_session_lock('token', p ->> 'session_token_hash', v_now);
  update private.handoffs set replaced_at = v_now, sealed_session_token = null
  where session_id = s.id and claimed_at is null and replaced_at is null;
  insert into private.handoffs (id, merchant_id, environment, session_id, code_hash, sealed_session_token, created_at, expires_at)
  values ((p ->> 'id')::uuid, s.merchant_id, s.environment, s.id, p ->> 'code_hash', p ->> 'sealed_session_token', v_now,
          least(v_now + make_interval(secs => (p ->> 'ttl_seconds')::int), s.expires_at))
  returning * into h;
  return private.handoff_json(h, v_now);
end $$;
comment on function public.handoff_register(jsonb) is 'handoff-register-public: registers a single-use handoff code for an unopened hosted session.';

-- handoff_claim({code_hash, now}) -> {sealed_session_token, handoff_id} | HA803
-- Single use under the row lock: of racing claims exactly one gets the sealed token. Unknown, claimed,
-- replaced and expired codes are one answer (HA803), so a guess learns nothing.
create or replace function public.handoff_claim(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  h private.handoffs;
  v_sealed text;
begin
  select * into h from private.handoffs where code_hash = p ->> 'code_hash' for update;
  if not found or h.sealed_session_token is null or h.expires_at <= v_now then
    raise exception 'handoff code unknown, used or expired' using errcode = 'HA803';
  end if;
  v_sealed := h.sealed_session_token;
  update private.handoffs set claimed_at = v_now, sealed_session_token = null where id = h.id returning * into h;
  return jsonb_build_object('sealed_session_token', v_sealed, 'handoff', private.handoff_json(h, v_now));
end $$;
comment on function public.handoff_claim(jsonb) is 'Claims a handoff code once and hands back the sealed session token.';

-- handoff_get({handoff_id, now} + {merchant_id, environment} | {session_token_hash}) -> handoff json | null
-- The registrant's poll: a merchant's key reads its handoffs; the hosted screen reads its session's.
create or replace function public.handoff_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.handoff_json(h, (p ->> 'now')::timestamptz) from private.handoffs h
  where h.id = (p ->> 'handoff_id')::uuid
    and case when p ? 'session_token_hash'
             then exists (select 1 from private.hosted_sessions s where s.id = h.session_id and s.token_hash = p ->> 'session_token_hash')
             else h.merchant_id = (p ->> 'merchant_id')::uuid and h.environment = p ->> 'environment' end
$$;
comment on function public.handoff_get(jsonb) is 'The registrant''s poll: a handoff''s state and its session''s.';
