-- ============================================================================
-- Agent verification cards (function API 2.8, 3.2, 4.14, 4.15): an owner of a
-- merchant, or an agent an owner authorised, asks a person to prove presence on
-- the hosted capture screen. A card is a hosted session of action `verify`
-- (one capture, identified among the merchant's persons, then the sink's
-- ACTION_LOGIN) plus what the person is told: who asks and for what purpose.
--
-- States (docs/decisions.md, "Agent verification cards"), derived at every read
-- from the card's session, so the session's row is the one fact:
--   pending   session open (its token never exchanged)
--   opened    session opened (the screen booted, once)
--   verified  session completed (the capture was judged and approved)
--   refused   session failed or cancelled (result.reason names why)
--   expired   session expired (derived from expires_at; nothing has to run)
-- Nothing writes a card's state: only the screen's completion, through the
-- sink, moves its session. Single use is the session's row lock.
-- A card's session is the service's, not the merchant's: no merchant key
-- exchanges or reads it, and it writes no webhook (function API 6 rule 4).
-- ============================================================================

alter table private.hosted_sessions drop constraint hosted_sessions_action_check;
alter table private.hosted_sessions
  add constraint hosted_sessions_action_check check (action in ('enroll', 'login', 'authorize', 'sign', 'verify'));
comment on column private.hosted_sessions.action is 'What the screen asks of the person: enroll, login, authorize (a payment), sign, or verify (an agent verification card: prove presence).';

create table private.agent_verifications (
  id uuid primary key,
  session_id uuid not null unique references private.hosted_sessions (id),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  external_ref text check (length(external_ref) between 1 and 200),
  purpose text check (char_length(purpose) between 1 and 140),
  owner_identity_id uuid not null references private.identities (id),
  agent_client_id text check (length(agent_client_id) between 1 and 512),
  agent_name text check (char_length(agent_name) between 1 and 200),
  created_at timestamptz not null,
  constraint agent_verifications_agent check (agent_name is null or agent_client_id is not null)
);
comment on table private.agent_verifications is 'Agent verification cards: who asked a person to prove presence, and why. The state is the card''s hosted session''s.';
comment on column private.agent_verifications.id is 'Card id (responses show it as av_<32 hex>).';
comment on column private.agent_verifications.session_id is 'The hosted session (action verify) whose single-use token the card''s url carries; its state is the card''s.';
comment on column private.agent_verifications.merchant_id is 'The merchant the card is minted for; the requester owns it (or an owner authorised the agent for it).';
comment on column private.agent_verifications.environment is 'test or live: the owner''s environment; the capture is judged in it.';
comment on column private.agent_verifications.external_ref is 'The requester''s own reference, returned unchanged.';
comment on column private.agent_verifications.purpose is 'Why the requester asks, at most 140 characters; shown to the person on the screen.';
comment on column private.agent_verifications.owner_identity_id is 'The owner who minted the card, or who authorised the agent that did.';
comment on column private.agent_verifications.agent_client_id is 'The OAuth client_id of the agent that minted the card; null when the owner minted it with a first-party session.';
comment on column private.agent_verifications.agent_name is 'The agent''s registered client name, shown to the person (self-registered, so marked unverified); null when the owner minted the card or the client has no name.';
comment on column private.agent_verifications.created_at is 'Request clock at minting.';
create index agent_verifications_merchant_idx on private.agent_verifications (merchant_id, created_at);


-- ----------------------------------------------------------------------------
-- Helpers
-- ----------------------------------------------------------------------------

-- Whether an identity owns the merchant in the environment (and was not erased).
create or replace function private.merchant_owned_by(p_merchant_id uuid, p_identity_id uuid, p_environment text) returns boolean
language sql stable set search_path = '' as $$
  select exists (
    select 1 from private.merchant_owners o join private.identities i on i.id = o.identity_id
    where o.merchant_id = p_merchant_id and o.identity_id = p_identity_id and o.environment = p_environment and i.erased_at is null)
$$;
comment on function private.merchant_owned_by(uuid, uuid, text) is 'Whether an identity (not erased) owns a merchant in one environment.';

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
