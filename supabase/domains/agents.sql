-- ============================================================================
-- Agents: verification requests and results, presence sign-in.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- Raises HA802 unless the first-party session presented (by its token's hash) is the identity's and
-- still live: a session revoked or expired in the database mints and reads no card, whatever its JWT says.
-- Agents present no session (null): the owner who authorised them is checked instead.
create or replace function private.require_live_session(p_session_token_hash text, p_identity_id uuid, p_at timestamptz) returns void
language plpgsql stable set search_path = '' as $$
begin
  if p_session_token_hash is not null and not exists (
    select 1 from private.sessions s
    where s.token_hash = p_session_token_hash and s.identity_id = p_identity_id and s.revoked_at is null and s.expires_at > p_at) then
    raise exception 'the first-party session was revoked or expired' using errcode = 'HA802';
  end if;
end $$;
comment on function private.require_live_session(text, uuid, timestamptz) is 'Raises HA802 unless a presented first-party session is the identity''s and live.';

-- The card at p_at: its fields, the state derived from its session, and the outcome's facts.
create or replace function private.agent_verification_json(v private.agent_verifications, s private.hosted_sessions, p_at timestamptz)
returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'verification_id', private.public_id('av_', v.id),
    'merchant_id', v.merchant_id,
    'external_ref', v.external_ref,
    'purpose', v.purpose,
    'ttl_seconds', s.ttl_seconds,
    'created_at', private.iso_utc(v.created_at),
    'expires_at', private.iso_utc(s.expires_at),
    'opened_at', private.iso_utc(s.opened_at),
    'ended_at', private.iso_utc(case when private.hosted_session_expired(s, p_at) then s.expires_at else s.ended_at end),
    'state', case
      when private.hosted_session_expired(s, p_at) then 'expired'
      when s.state = 'open' then 'pending'
      when s.state = 'opened' then 'opened'
      when s.state = 'completed' then 'verified'
      else 'refused' end,
    'refusal_reason', case when s.state in ('failed', 'cancelled') then s.result ->> 'reason' end,
    'assurance_level', case when s.state = 'completed' then s.result ->> 'assurance_level' end,
    'receipt_code', case when s.state = 'completed' then s.result ->> 'receipt_code' end)
$$;
comment on function private.agent_verification_json(private.agent_verifications, private.hosted_sessions, timestamptz) is 'A card as its reads show it at p_at: the state derived from its session (nothing stores it).';

-- ----------------------------------------------------------------------------
-- RPCs
-- ----------------------------------------------------------------------------

-- agent_verification_request({id, session_id, merchant_id, environment, owner_identity_id, session_token_hash?,
--                             agent_client_id?, agent_name?, external_ref?, purpose?, ttl_seconds, token_hash, now})
--   -> the card | HA802 (the owner's first-party session is revoked or expired)
--               | HA801 (the identity does not own the merchant in this environment)
-- Mints the card and its hosted session (action verify) in one transaction. An unknown merchant is
-- answered as one the person does not own.
create or replace function public.agent_verification_request(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_merchant_id uuid := (p ->> 'merchant_id')::uuid;
  s private.hosted_sessions;
  v private.agent_verifications;
begin
  perform private.require_live_session(p ->> 'session_token_hash', (p ->> 'owner_identity_id')::uuid, v_now);
  if not private.merchant_owned_by(v_merchant_id, (p ->> 'owner_identity_id')::uuid, p ->> 'environment') then
    raise exception 'not an owner of this merchant' using errcode = 'HA801';
  end if;
  insert into private.hosted_sessions (id, merchant_id, environment, token_hash, action, external_txn_ref, metadata,
                                       ttl_seconds, created_at, expires_at)
  values ((p ->> 'session_id')::uuid, v_merchant_id, p ->> 'environment', p ->> 'token_hash', 'verify',
          'agent_verification:' || replace(p ->> 'id', '-', ''), '{}'::jsonb,
          (p ->> 'ttl_seconds')::integer, v_now, v_now + make_interval(secs => (p ->> 'ttl_seconds')::integer))
  returning * into s;
  insert into private.agent_verifications (id, session_id, merchant_id, environment, external_ref, purpose,
                                           owner_identity_id, agent_client_id, agent_name, created_at)
  values ((p ->> 'id')::uuid, s.id, v_merchant_id, p ->> 'environment', p ->> 'external_ref', p ->> 'purpose',
          (p ->> 'owner_identity_id')::uuid, p ->> 'agent_client_id', p ->> 'agent_name', v_now)
  returning * into v;
  return private.agent_verification_json(v, s, v_now);
end $$;
comment on function public.agent_verification_request(jsonb) is 'agent-verification-request: an owner (or an agent for one) mints a card and its single-use hosted session.';

-- agent_verification_result({verification_id, owner_identity_id, environment, session_token_hash?, merchant_id?, now})
--   -> the card | null | HA802 (as agent_verification_request)
-- A card of a merchant the identity owns in its environment (an agent also names its own merchant);
-- anything else is null (the same not_found).
create or replace function public.agent_verification_result(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
begin
  perform private.require_live_session(p ->> 'session_token_hash', (p ->> 'owner_identity_id')::uuid, (p ->> 'now')::timestamptz);
  return (
    select private.agent_verification_json(v, s, (p ->> 'now')::timestamptz)
    from private.agent_verifications v
    join private.hosted_sessions s on s.id = v.session_id
    where v.id = (p ->> 'verification_id')::uuid
      and v.environment = p ->> 'environment'
      and (not p ? 'merchant_id' or v.merchant_id = (p ->> 'merchant_id')::uuid)
      and private.merchant_owned_by(v.merchant_id, (p ->> 'owner_identity_id')::uuid, v.environment));
end $$;
comment on function public.agent_verification_result(jsonb) is 'agent-verification-result: a card with its state derived from what its capture recorded.';

-- agent_sign_in_begin({session: hosted_session_create's input, request_hash, browser_hash})
--   -> {started: true, session} | {started: false}
-- Opens the hosted login session and its binding in one transaction, only for a merchant that has an
-- owner in the session's environment (no session, and no webhook to the merchant, for anyone else).
create or replace function public.agent_sign_in_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_session jsonb := p -> 'session';
  v_created jsonb;
begin
  if not exists (
    select 1 from private.merchant_owners
    where merchant_id = (v_session ->> 'merchant_id')::uuid and environment = v_session ->> 'environment'
  ) then
    return jsonb_build_object('started', false);
  end if;
  v_created := public.hosted_session_create(v_session);
  insert into private.agent_sign_ins (session_id, request_hash, browser_hash, created_at)
  values ((v_session ->> 'id')::uuid, p ->> 'request_hash', p ->> 'browser_hash', (v_session ->> 'now')::timestamptz);
  return jsonb_build_object('started', true, 'session', v_created);
end $$;
comment on function public.agent_sign_in_begin(jsonb) is 'Opens a hosted login session bound to one authorization request and one browser, for a merchant that has an owner.';

-- agent_sign_in_finish({session_id, request_hash, browser_hash, now})
--   -> {signed_in: true, identity_id, merchant_id, environment} | {signed_in: false, reason}
-- reason: unknown (no such sign-in for this request and browser), used, pending (the screen has not
-- identified anyone yet: ask again), refused (the capture was refused, cancelled or the session
-- expired), stale (identified too long ago: private.sign_in_stale_at), not_owner (the person identified
-- does not own the business). Only a sign-in that succeeds is used up.
create or replace function public.agent_sign_in_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_sign private.agent_sign_ins;
  v_session private.hosted_sessions;
  v_owner private.merchant_owners;
  v_refusal text;
begin
  select * into v_sign from private.agent_sign_ins
  where session_id = (p ->> 'session_id')::uuid and request_hash = p ->> 'request_hash' and browser_hash = p ->> 'browser_hash'
  for update;
  if not found then
    return jsonb_build_object('signed_in', false, 'reason', 'unknown');
  end if;
  if v_sign.used_at is not null then
    return jsonb_build_object('signed_in', false, 'reason', 'used');
  end if;
  select * into v_session from private.hosted_sessions where id = v_sign.session_id;
  v_refusal := private.sign_in_session_refusal(v_session, v_now);
  if v_refusal is not null then
    return jsonb_build_object('signed_in', false, 'reason', v_refusal);
  end if;
  select * into v_owner from private.merchant_owners
  where merchant_id = v_session.merchant_id and subject_ref = v_session.result ->> 'subject_ref';
  if not found then
    return jsonb_build_object('signed_in', false, 'reason', 'not_owner');
  end if;
  update private.agent_sign_ins set used_at = v_now where session_id = v_sign.session_id;
  return jsonb_build_object('signed_in', true, 'identity_id', v_owner.identity_id, 'merchant_id', v_owner.merchant_id,
                            'environment', v_owner.environment);
end $$;
comment on function public.agent_sign_in_finish(jsonb) is 'Signs the owner in once from a completed hosted login session, for the request and browser it was bound to.';

-- agent_sign_in_sweep({now}) -> {sign_ins}
-- The minute cron (session-expiry-and-webhooks) deletes the MCP authorization endpoint's sign-ins that stopped
-- counting more than a day ago (private.sign_in_counts_until), as person_passkey_sweep and owner_console_sweep
-- do for the person's page's and the console's (D-702, D-730). A swept one answers agent_sign_in_finish as one
-- never started (unknown), which it answers the same way as a used or stale one: no sign-in. The hosted session
-- stays (the check's record); the OAuth grants and tokens live in the provider's store, with lifetimes of their
-- own. The day (private.sweep_cutoff) keeps a recent one readable for support.
create or replace function public.agent_sign_in_sweep(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_cutoff timestamptz := private.sweep_cutoff(v_now);
  v_sign_ins integer;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  -- created_at bounds the scan (agent_sign_ins_created_idx): a sign-in stops counting after it was started.
  delete from private.agent_sign_ins g
  using private.hosted_sessions s
  where s.id = g.session_id
    and g.created_at < v_cutoff
    and private.sign_in_counts_until(g.used_at, s) < v_cutoff;
  get diagnostics v_sign_ins = row_count;
  return jsonb_build_object('sign_ins', v_sign_ins);
end $$;
comment on function public.agent_sign_in_sweep(jsonb) is
  'Deletes the MCP authorization endpoint''s sign-ins that stopped counting more than a day before now (the minute cron).';
