-- ============================================================================
-- An owner signs in at the MCP authorization endpoint by proving presence on
-- the hosted capture screen (issue 13; docs/decisions.md, "Agents: owner
-- sign-in by proving presence").
--
-- The endpoint opens a hosted `login` session for the business the person
-- names and binds it to the pending authorization request (the SHA-256 of its
-- query) and to the browser that asked (the SHA-256 of a secret in a host-only
-- cookie). Once the screen identified the person, the same browser, on the
-- same request, turns the session into a sign-in: once, within ten minutes of
-- the capture, and only if the person identified owns the business.
-- ============================================================================

create table private.agent_sign_ins (
  session_id uuid primary key references private.hosted_sessions (id),
  request_hash text not null check (request_hash ~ '^[0-9a-f]{64}$'),
  browser_hash text not null check (browser_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  used_at timestamptz
);
comment on table private.agent_sign_ins is 'Hosted login sessions the MCP authorization endpoint opened for an owner to sign in by proving presence; each signs in once.';
comment on column private.agent_sign_ins.session_id is 'The hosted login session the person proves presence in.';
comment on column private.agent_sign_ins.request_hash is 'Lowercase hex SHA-256 of the pending authorization request''s query: the sign-in serves that request only.';
comment on column private.agent_sign_ins.browser_hash is 'Lowercase hex SHA-256 of the secret in the browser''s sign-in cookie: the sign-in serves the browser that started it only.';
comment on column private.agent_sign_ins.created_at is 'Request clock when the endpoint opened the session.';
comment on column private.agent_sign_ins.used_at is 'When the session signed the owner in; null until then. Set once.';

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
-- expired), stale (identified more than ten minutes ago), not_owner (the person identified does not
-- own the business). Only a sign-in that succeeds is used up.
create or replace function public.agent_sign_in_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_sign private.agent_sign_ins;
  v_session private.hosted_sessions;
  v_owner private.merchant_owners;
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
  if v_session.state in ('open', 'opened') and v_session.expires_at > v_now then
    return jsonb_build_object('signed_in', false, 'reason', 'pending');
  end if;
  if v_session.state <> 'completed' or (v_session.result ->> 'approved') is distinct from 'true' then
    return jsonb_build_object('signed_in', false, 'reason', 'refused');
  end if;
  if v_session.ended_at < v_now - interval '10 minutes' then
    return jsonb_build_object('signed_in', false, 'reason', 'stale');
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
