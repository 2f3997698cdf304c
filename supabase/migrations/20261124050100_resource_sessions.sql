-- ============================================================================
-- Hosted sessions of the resource API (resource API 2.2, 3.2, 4.4, 4.5;
-- docs/resource-api.md#sessions): the same sessions as the function API's,
-- with four more actions, which are the /v1 modes (claim, recognise,
-- attribute, mandate), a 30-minute lifetime, the person's way back
-- (return_url, cancel_url) and what each mode needs (facetoken, attribute,
-- the mandate's terms), the merchant's branding and locale.
--
-- A session whose action is a mode is a /v1 session: it is created and read
-- only through /v1 (resource_session_create, resource_session_get), booted,
-- completed and cancelled by the same screen endpoints, expired by the same
-- tick with the same session.expired.
-- ============================================================================

alter table private.hosted_sessions
  drop constraint hosted_sessions_action_check,
  add constraint hosted_sessions_action_check
    check (action in ('enroll', 'login', 'authorize', 'sign', 'verify', 'claim', 'recognise', 'attribute', 'mandate')),
  drop constraint hosted_sessions_ttl_seconds_check,
  add column return_url text check (return_url ~ '^https://' and length(return_url) <= 2048),
  add column cancel_url text check (cancel_url ~ '^https://' and length(cancel_url) <= 2048),
  add column facetoken text check (length(facetoken) between 1 and 128),
  add column attribute text check (attribute ~ '^[a-z][a-z0-9_]{0,63}$'),
  add column mandate_terms jsonb check (jsonb_typeof(mandate_terms) = 'object'),
  add column branding jsonb check (jsonb_typeof(branding) = 'object'),
  add column locale text check (locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$' and length(locale) <= 35),
  add constraint hosted_sessions_mode check (
    case when action in ('claim', 'recognise', 'attribute', 'mandate') then
           ttl_seconds = 1800 and return_url is not null and cancel_url is not null
           and (facetoken is not null) = (action <> 'claim')
           and (attribute is not null) = (action = 'attribute')
           and (mandate_terms is not null) = (action = 'mandate')
         else
           ttl_seconds between 60 and 900 and return_url is null and cancel_url is null and facetoken is null
           and attribute is null and mandate_terms is null and branding is null and locale is null
    end);
comment on column private.hosted_sessions.return_url is '/v1 sessions: the https URL the person lands on when the session ends (session_id and status appended); null on the function API''s.';
comment on column private.hosted_sessions.cancel_url is '/v1 sessions: where a person who abandons lands (the return_url when the merchant gave none).';
comment on column private.hosted_sessions.facetoken is '/v1 modes recognise, attribute and mandate: the merchant''s facetoken (subject_ref) of the person the session is for.';
comment on column private.hosted_sessions.attribute is '/v1 mode attribute: the predicate asked about the person.';
comment on column private.hosted_sessions.mandate_terms is '/v1 mode mandate: the mandate the person is asked to grant, as POST /v1/mandates takes it without granted_by and proof.';
comment on column private.hosted_sessions.branding is '/v1 sessions: the merchant''s branding for this session (logo_url, accent, domain, headline, footer_note); null: none.';
comment on column private.hosted_sessions.locale is '/v1 sessions: the BCP 47 locale the screen speaks; null: the person''s browser.';

-- The /v1 status of a session at p_at (resource API 3.2): open until an outcome; a judged refusal
-- is an outcome (completed, with result.outcome refused).
create or replace function private.resource_session_status(s private.hosted_sessions, p_at timestamptz) returns text
language sql stable set search_path = '' as $$
  select case when private.hosted_session_expired(s, p_at) then 'expired'
              when s.state in ('open', 'opened') then 'open'
              when s.state in ('completed', 'failed') then 'completed'
              else s.state end
$$;
comment on function private.resource_session_status(private.hosted_sessions, timestamptz) is
  'A session''s /v1 status at p_at: open, completed (approved or refused), cancelled or expired.';

-- A session as /v1 shows it (2.2, 4.5). The url is never stored: only create answers it.
create or replace function private.resource_session_json(s private.hosted_sessions, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('hs_', s.id),
    'object', 'session',
    'status', private.resource_session_status(s, p_at),
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
comment on function private.resource_session_json(private.hosted_sessions, timestamptz) is
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
                                  'status', private.resource_session_status(s, coalesce(s.ended_at, s.expires_at))) end
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
                                    'status', private.resource_session_status(s, p_at)) end;
end $$;
comment on function private.hosted_session_end(uuid, text, jsonb, timestamptz) is
  'Records how an opened session ended and its session.completed event (complete and cancel; private.hosted_session_emit decides which sessions write it); a /v1 session''s answer names its way back.';

-- What a /v1 session asks of the screen, beside the function API's fields (boot).
create or replace function private.resource_session_terms(s private.hosted_sessions) returns jsonb
language sql stable set search_path = '' as $$
  select case when s.return_url is null then '{}'::jsonb
              else jsonb_build_object('mode', jsonb_build_object(
                     'name', s.action, 'attribute', s.attribute, 'mandate', s.mandate_terms, 'branding', s.branding,
                     'locale', s.locale, 'return_url', s.return_url, 'cancel_url', s.cancel_url)) end
$$;
comment on function private.resource_session_terms(private.hosted_sessions) is
  'A /v1 session''s mode and what the screen shows for it ({} for a function API session).';

-- hosted_session_consume (20261124020100) again: a /v1 session's answer also carries `mode` (resource_session_terms).
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
                            'merchant_name', v_merchant_name, 'card', v_card)
      || private.resource_session_terms(s);
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

-- resource_session_create({id, merchant_id, environment, token_hash, mode, return_url, cancel_url, facetoken?,
--   attribute?, mandate?, branding?, locale?, metadata, now, url, stored_response?: {record}}) -> the session with its url
-- The answer (201) is stored under the request's Idempotency-Key in the same transaction, so a
-- replay answers the same session and url, and a session is never created twice for one key.
create or replace function public.resource_session_create(p jsonb) returns jsonb
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
  v_body := private.resource_session_json(s, v_now) || jsonb_build_object('url', p ->> 'url');
  perform private.idempotency_store_act(p -> 'stored_response', 201, v_body, null);
  return v_body;
end $$;
comment on function public.resource_session_create(jsonb) is
  'POST /v1/sessions: stores a /v1 session under its token''s hash and, with an Idempotency-Key, its answer in the same transaction.';

-- resource_session_get({merchant_id, environment, session_id, now}) -> the session | null
create or replace function public.resource_session_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.resource_session_json(s, (p ->> 'now')::timestamptz)
  from private.hosted_sessions s
  where s.id = (p ->> 'session_id')::uuid
    and s.merchant_id = (p ->> 'merchant_id')::uuid
    and s.environment = p ->> 'environment'
    and s.return_url is not null
$$;
comment on function public.resource_session_get(jsonb) is
  'GET /v1/sessions/{id}: one /v1 session of this merchant and environment at the request clock; any other is null.';
