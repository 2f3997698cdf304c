-- ============================================================================
-- Mandates: issue, check, consume, read, list, revoke, usage totals, the /v1 shapes.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================


create or replace function private.mandates_refuse_update() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_mutable text[] := array['status', 'revoked_at', 'revoked_reason', 'revoked_by', 'updated_at'];
begin
  if (to_jsonb(new) - v_mutable) is distinct from (to_jsonb(old) - v_mutable) then
    raise exception 'a mandate cannot be changed; issue a new one' using errcode = 'HA423';
  end if;
  if to_jsonb(new) is distinct from to_jsonb(old) and old.status = 'revoked' then
    raise exception 'a revoked mandate never changes again' using errcode = 'HA423';
  end if;
  return new;
end $$;
comment on function private.mandates_refuse_update() is 'Immutability: only status and its bookkeeping may change; a revoked mandate never changes again.';

create or replace trigger mandates_immutable before update on private.mandates
  for each row execute function private.mandates_refuse_update();
comment on trigger mandates_immutable on private.mandates is 'Refuses any change but status and its bookkeeping (private.mandates_refuse_update).';

-- The period bucket containing p_at: [start, resets_at). UTC; weeks are ISO weeks starting on Monday.
create or replace function private.mandate_period(p_period text, p_at timestamptz, out period_start timestamptz, out resets_at timestamptz)
language sql immutable set search_path = '' as $$
  select s at time zone 'UTC',
         (s + case p_period when 'daily' then interval '1 day' when 'weekly' then interval '7 days' else interval '1 month' end)
           at time zone 'UTC'
  from (select case when p_period = 'lifetime' then null
                    else date_trunc(case p_period when 'daily' then 'day' when 'weekly' then 'week' else 'month' end,
                                    p_at at time zone 'UTC') end as s) b
$$;
comment on function private.mandate_period(text, timestamptz) is 'Period bucket [period_start, resets_at) of a ceiling at an instant, in UTC whatever the session time zone; weeks start on Monday (ISO); lifetime: no bounds.';

-- (Replaced by 20261121009100_mandate_usage.sql with a read of the bucket's running total.)

-- Effective status at p_at: revoked > expired > exhausted > active. A ceiling at zero is exhausted whatever
-- its period (resource API 3.1); a lifetime one stays so, since its bucket never resets.
create or replace function private.mandate_effective_status(m private.mandates, p_at timestamptz) returns text
language plpgsql stable set search_path = '' as $$
declare r record;
begin
  if m.status = 'revoked' then return 'revoked'; end if;
  if m.expires_at <= p_at then return 'expired'; end if;
  if m.ceiling_kind = 'none' then return 'active'; end if;
  r := private.mandate_remaining(m, p_at);
  if r.remaining_amount = 0 or r.remaining_count = 0 then return 'exhausted'; end if;
  return 'active';
end $$;
comment on function private.mandate_effective_status(private.mandates, timestamptz) is 'The status reads report: expiry and exhaustion are derived at read time, no job needed.';

-- The mandate as the API shows it.
create or replace function private.mandate_json(m private.mandates, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_strip_nulls(jsonb_build_object(
    'mandate_id', private.public_id('mdt_', m.id),
    'status', private.mandate_effective_status(m, p_at),
    'granted_by', m.granted_by_ref,
    'granted_to', m.granted_to,
    'granted_to_kind', m.granted_to_kind,
    'agent_display_name', m.agent_display_name,
    'agent_descriptor', m.agent_descriptor,
    'scopes', to_jsonb(m.scopes),
    'constraints', m.constraints,
    'assurance_level', m.assurance_level,
    'expires_at', m.expires_at,
    'step_up_of', private.public_id('mdt_', m.step_up_of),
    'created_at', m.created_at,
    'revoked_at', m.revoked_at,
    'updated_at', m.updated_at))
  || jsonb_build_object('ceiling', jsonb_build_object(
    'kind', m.ceiling_kind, 'amount', m.ceiling_amount, 'currency', m.ceiling_currency,
    'count', m.ceiling_count, 'period', m.ceiling_period))
  || jsonb_build_object('revoked_at', m.revoked_at, 'step_up_of', private.public_id('mdt_', m.step_up_of))
$$;
comment on function private.mandate_json(private.mandates, timestamptz) is 'API shape of a mandate (absent agent fields stay absent).';

-- ----------------------------------------------------------------------------
-- Decision: the one evaluation behind both mandate-check and mandate-consume
-- ----------------------------------------------------------------------------
create or replace function private.mandate_decide(m private.mandates, p jsonb, p_at timestamptz) returns jsonb
language plpgsql stable set search_path = '' as $$
declare
  v_scope text := p ->> 'scope';
  v_amount bigint := (p ->> 'amount')::bigint;
  v_currency text := p ->> 'currency';
  v_context jsonb := coalesce(p -> 'context', '{}'::jsonb);
  v_field text;
  v_list jsonb;
  r record;
begin
  if m.status = 'revoked' then return jsonb_build_object('allowed', false, 'reason', 'mandate_revoked'); end if;
  if m.expires_at <= p_at then return jsonb_build_object('allowed', false, 'reason', 'mandate_expired'); end if;
  if not (v_scope = any (m.scopes)) then return jsonb_build_object('allowed', false, 'reason', 'scope_not_granted'); end if;

  foreach v_field in array array['merchant', 'category', 'country'] loop
    v_list := m.constraints -> (v_field || '_allowlist');
    if jsonb_typeof(v_list) = 'array' and jsonb_array_length(v_list) > 0 then
      if jsonb_typeof(v_context -> v_field) is distinct from 'string' then
        return jsonb_build_object('allowed', false, 'reason', 'context_required', 'field', 'context.' || v_field);
      end if;
      if not (v_list ? (v_context ->> v_field)) then
        return jsonb_build_object('allowed', false, 'reason', v_field || '_not_allowed');
      end if;
    end if;
  end loop;

  if m.ceiling_amount is not null then
    if v_amount is null then return jsonb_build_object('allowed', false, 'reason', 'amount_required'); end if;
    if v_currency is distinct from m.ceiling_currency then
      return jsonb_build_object('allowed', false, 'reason', 'currency_mismatch');
    end if;
  end if;

  r := private.mandate_remaining(m, p_at);
  if r.remaining_amount = 0 or r.remaining_count = 0 then
    return jsonb_build_object('allowed', false, 'reason', 'mandate_exhausted',
      'remaining', jsonb_build_object('amount', r.remaining_amount, 'currency', m.ceiling_currency, 'count', r.remaining_count),
      'period_resets_at', r.period_resets_at);
  end if;
  if v_amount > r.remaining_amount or r.remaining_count < 1 then
    return jsonb_build_object('allowed', false, 'reason', 'ceiling_exceeded',
      'remaining', jsonb_build_object('amount', r.remaining_amount, 'currency', m.ceiling_currency, 'count', r.remaining_count),
      'period_resets_at', r.period_resets_at);
  end if;
  return jsonb_build_object('allowed', true,
    'remaining', jsonb_build_object('amount', r.remaining_amount, 'currency', m.ceiling_currency, 'count', r.remaining_count),
    'period_resets_at', r.period_resets_at);
end $$;
comment on function private.mandate_decide(private.mandates, jsonb, timestamptz) is 'Would this action be inside the mandate now? Status, expiry, scope, constraints, currency, then the ceilings of the current bucket.';

-- mandate.granted of one mandate (resource API 6): sent once, after the grant is anchored. Called by mandate_issue
-- (sandbox, or a grant already anchored) and by private.receipt_anchor_announce when the anchor is first confirmed.
create or replace function private.mandate_granted_emit(p_mandate private.mandates, p_now timestamptz) returns void
language plpgsql set search_path = '' as $$
begin
  perform private.outbox_emit(p_mandate.merchant_id, p_mandate.environment, 'mandate.granted', jsonb_build_object(
    'mandate_id', private.public_id('mdt_', p_mandate.id),
    'granted_to', p_mandate.granted_to,
    'granted_to_kind', p_mandate.granted_to_kind,
    'scopes', to_jsonb(p_mandate.scopes),
    'ceiling', private.mandate_json(p_mandate, p_now) -> 'ceiling',
    'expires_at', p_mandate.expires_at,
    'assurance_level', p_mandate.assurance_level,
    'step_up_of', private.public_id('mdt_', p_mandate.step_up_of)), p_now);
end $$;
comment on function private.mandate_granted_emit(private.mandates, timestamptz) is 'Appends mandate.granted of a mandate to the outbox: once, when its grant is anchored (in sandbox, at once).';

-- ============================================================================
-- RPCs
-- ============================================================================

-- mandate_issue({id, merchant_id, environment, now, granted_by_ref, granted_to, granted_to_kind, agent_display_name?,
--   agent_descriptor?, scopes, money_scopes, constraints, ceiling: {kind, amount, currency, count, period}, expires_at,
--   step_up_of?, capture_id, terms_digest, proof_max_age_seconds}) -> mandate json
-- The proof must be a capture of the granting human for this merchant, at most proof_max_age_seconds old, live and
-- uncoerced, made to grant (purpose grant: a login, a card, a payment proves no grant), showing these terms
-- (its grant_terms_digest is terms_digest), and not yet used: the capture row is locked, and marked with the
-- mandate in this transaction, so one grant capture proves one mandate. Its frozen assurance level is copied.
-- Money scopes need a valid document on the identity. A face-only capture (level face) proves a step-up only.
create or replace function public.mandate_issue(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_env text := p ->> 'environment';
  v_identity uuid;
  v_capture private.captures;
  v_parent private.mandates;
  v_mandate private.mandates;
  v_scopes text[] := array(select jsonb_array_elements_text(p -> 'scopes'));
  v_anchor_id uuid;
begin
  select identity_id into v_identity from private.subject_refs
  where merchant_id = v_merchant and subject_ref = p ->> 'granted_by_ref';

  select * into v_capture from private.captures
  where id = (p ->> 'capture_id')::uuid and merchant_id = v_merchant and environment = v_env
  for update;
  if not found or v_identity is null or v_capture.identity_id <> v_identity then
    raise exception 'proof is not a capture of the granting human' using errcode = 'HA430',
      detail = jsonb_build_object('reason', 'not_the_grantor')::text;
  end if;
  if v_capture.created_at < v_now - make_interval(secs => (p ->> 'proof_max_age_seconds')::int) or v_capture.created_at > v_now then
    raise exception 'proof capture is too old' using errcode = 'HA430', detail = jsonb_build_object('reason', 'proof_expired')::text;
  end if;
  -- A coerced capture is reported as such, whatever else it failed: coercion is the finding that matters.
  if v_capture.coercion_signal then
    raise exception 'proof capture carries a coercion signal' using errcode = 'HA430', detail = jsonb_build_object('reason', 'coercion_detected')::text;
  end if;
  if not v_capture.liveness_passed or v_capture.assurance_level is null then
    raise exception 'proof capture did not pass liveness' using errcode = 'HA430', detail = jsonb_build_object('reason', 'liveness_failed')::text;
  end if;
  -- What the person was shown: only a capture made to grant proves a grant (a card's says it authorises nothing).
  if v_capture.purpose is distinct from 'grant' then
    raise exception 'proof capture was not made to grant a mandate' using errcode = 'HA430',
      detail = jsonb_build_object('reason', 'not_a_grant')::text;
  end if;
  if v_capture.granted_mandate_id is not null then
    raise exception 'proof capture already proved a mandate' using errcode = 'HA430',
      detail = jsonb_build_object('reason', 'proof_used')::text;
  end if;
  -- A face-only capture proves a step-up only (spec 4.7 rule 8, D-428); its terms digest names step_up_of too.
  if v_capture.assurance_level = 'face' and not p ? 'step_up_of' then
    raise exception 'a face-only capture proves a step-up only' using errcode = 'HA430',
      detail = jsonb_build_object('reason', 'face_only_not_a_step_up')::text;
  end if;

  if v_capture.grant_terms_digest is distinct from p ->> 'terms_digest' then
    raise exception 'proof capture showed other terms' using errcode = 'HA430',
      detail = jsonb_build_object('reason', 'terms_mismatch')::text;
  end if;

  if p ? 'step_up_of' then
    select * into v_parent from private.mandates
    where id = (p ->> 'step_up_of')::uuid and merchant_id = v_merchant and environment = v_env and granted_by = v_identity;
    if not found or v_parent.status = 'revoked' then
      raise exception 'step_up_of is not a standing mandate of this person' using errcode = 'HA432';
    end if;
  end if;

  if v_scopes && array(select jsonb_array_elements_text(p -> 'money_scopes')) and not exists (
    select 1 from private.identity_documents d
    where d.identity_id = v_identity and d.expires_on >= (v_now at time zone 'UTC')::date
  ) then
    raise exception 'money scopes need a valid identity document' using errcode = 'HA431';
  end if;

  insert into private.mandates (id, merchant_id, environment, granted_by, granted_by_ref, granted_to, granted_to_kind,
    agent_display_name, agent_descriptor, scopes, constraints, ceiling_kind, ceiling_amount, ceiling_currency, ceiling_count,
    ceiling_period, assurance_level, capture_id, step_up_of, expires_at, created_at, updated_at)
  values ((p ->> 'id')::uuid, v_merchant, v_env, v_identity, p ->> 'granted_by_ref', p ->> 'granted_to', p ->> 'granted_to_kind',
    p ->> 'agent_display_name', p ->> 'agent_descriptor', v_scopes, coalesce(p -> 'constraints', '{}'::jsonb),
    p -> 'ceiling' ->> 'kind', (p -> 'ceiling' ->> 'amount')::bigint, p -> 'ceiling' ->> 'currency',
    (p -> 'ceiling' ->> 'count')::int, p -> 'ceiling' ->> 'period', v_capture.assurance_level, v_capture.id,
    (p ->> 'step_up_of')::uuid, (p ->> 'expires_at')::timestamptz, v_now, v_now)
  returning * into v_mandate;
  update private.captures set granted_mandate_id = v_mandate.id where id = v_capture.id;

  -- mandate.granted is sent once, after the grant is anchored (resource API 6, D-516): now in sandbox (no public seal)
  -- or when the anchor holding the grant capture's receipt is already confirmed; else by the confirmation
  -- (private.receipt_anchor_announce). The receipt row, then its anchor, are locked shared, so a confirmation
  -- running at the same time either sees this mandate or has been seen by it: the event is sent exactly once.
  if v_env = 'test' then
    perform private.mandate_granted_emit(v_mandate, v_now);
  else
    select anchor_id into v_anchor_id from private.receipts where capture_id = v_capture.id for share;
    if not found then
      perform private.mandate_granted_emit(v_mandate, v_now);
    elsif v_anchor_id is not null
      and (select first_confirmed_at from private.receipt_anchors where id = v_anchor_id for share) is not null then
      perform private.mandate_granted_emit(v_mandate, v_now);
    end if;
  end if;
  return private.mandate_json(v_mandate, v_now);
end $$;
comment on function public.mandate_issue(jsonb) is 'Issues a mandate against a fresh, live, unused grant capture of the granting human that showed these terms (and uses it up); emits mandate.granted now in sandbox or when the grant''s receipt is already anchored and confirmed, else its anchor''s confirmation does.';

-- mandate_check({mandate_id, merchant_id, environment, now, scope, amount?, currency?, context?}) -> decision
-- Advisory: no lock, nothing written.
create or replace function public.mandate_check(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare m private.mandates;
begin
  select * into m from private.mandates
  where id = (p ->> 'mandate_id')::uuid and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment';
  if not found then return jsonb_build_object('allowed', false, 'reason', 'mandate_not_found'); end if;
  return private.mandate_decide(m, p, (p ->> 'now')::timestamptz);
end $$;
comment on function public.mandate_check(jsonb) is 'Advisory decision: may be a false positive under concurrency; never debits.';

-- mandate_consume({mandate_id, merchant_id, environment, now, idempotency_key, request_hash, scope, amount?, currency?,
--   action_ref?, context?}) -> decision with consumption_id, idempotent_replay, at_limit
-- A replayed key answers the consumption it recorded (never a second debit) plus mandate_status, the mandate's
-- effective status now; once the mandate is revoked the replay is a refusal (allowed false, reason mandate_revoked)
-- that still names the consumption: it happened, but it is no permission to act now.
-- The mandate row is locked before anything is summed, so concurrent consumes are serialised per mandate and
-- no ceiling is ever passed; the consumption and its outbox events are written in the same transaction.
create or replace function public.mandate_consume(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  m private.mandates;
  v_previous private.mandate_consumptions;
  v_decision jsonb;
  v_id uuid := gen_random_uuid();
  v_amount bigint := (p ->> 'amount')::bigint;
  v_after_amount bigint;
  v_after_count int;
  v_at_limit boolean;
  v_threshold int;
  v_response jsonb;
  v_remaining jsonb;
begin
  select * into m from private.mandates
  where id = (p ->> 'mandate_id')::uuid and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
  for update;
  if not found then return jsonb_build_object('allowed', false, 'reason', 'mandate_not_found'); end if;

  select * into v_previous from private.mandate_consumptions
  where mandate_id = m.id and idempotency_key = p ->> 'idempotency_key';
  if found then
    if v_previous.request_hash <> p ->> 'request_hash' then
      raise exception 'Idempotency-Key reused with another body' using errcode = 'HA422';
    end if;
    if m.status = 'revoked' then
      return v_previous.response || jsonb_build_object('allowed', false, 'reason', 'mandate_revoked',
        'idempotent_replay', true, 'mandate_status', 'revoked');
    end if;
    return v_previous.response || jsonb_build_object('idempotent_replay', true,
      'mandate_status', private.mandate_effective_status(m, v_now));
  end if;

  v_decision := private.mandate_decide(m, p, v_now);
  if not (v_decision ->> 'allowed')::boolean then return v_decision; end if;

  v_after_amount := (v_decision -> 'remaining' ->> 'amount')::bigint - coalesce(v_amount, 0);
  v_after_count := (v_decision -> 'remaining' ->> 'count')::int - 1;
  v_at_limit := coalesce(v_after_amount = 0, false) or coalesce(v_after_count = 0, false);
  v_remaining := jsonb_build_object('amount', v_after_amount, 'currency', m.ceiling_currency, 'count', v_after_count);
  v_response := jsonb_build_object(
    'allowed', true,
    'consumption_id', private.public_id('cns_', v_id),
    'idempotent_replay', false,
    'scope_used', p ->> 'scope',
    'remaining', v_remaining,
    'at_limit', v_at_limit,
    'period_resets_at', v_decision -> 'period_resets_at');

  insert into private.mandate_consumptions (id, mandate_id, idempotency_key, request_hash, scope, amount, currency,
    action_ref, context, response, created_at)
  values (v_id, m.id, p ->> 'idempotency_key', p ->> 'request_hash', p ->> 'scope', v_amount, p ->> 'currency',
    p ->> 'action_ref', p -> 'context', v_response, v_now);

  perform private.outbox_emit(m.merchant_id, m.environment, 'mandate.consumed', jsonb_build_object(
    'mandate_id', private.public_id('mdt_', m.id),
    'consumption_id', private.public_id('cns_', v_id),
    'scope', p ->> 'scope', 'amount', v_amount, 'currency', p ->> 'currency', 'action_ref', p ->> 'action_ref',
    'remaining', v_remaining, 'period_resets_at', v_decision -> 'period_resets_at', 'at_limit', v_at_limit), v_now);

  select at_limit_threshold_percent into v_threshold from private.merchants where id = m.merchant_id;
  if v_at_limit
     or (v_threshold > 0 and (
          (m.ceiling_amount is not null and v_after_amount * 100 <= m.ceiling_amount * v_threshold
             and (v_after_amount + coalesce(v_amount, 0)) * 100 > m.ceiling_amount * v_threshold)
          -- in bigint: a count ceiling may be int's largest value, and a hundred times it is not an int
          or (m.ceiling_count is not null and v_after_count::bigint * 100 <= m.ceiling_count::bigint * v_threshold
             and (v_after_count::bigint + 1) * 100 > m.ceiling_count::bigint * v_threshold))) then
    perform private.outbox_emit(m.merchant_id, m.environment, 'mandate.at_limit', jsonb_build_object(
      'mandate_id', private.public_id('mdt_', m.id),
      'consumption_id', private.public_id('cns_', v_id),
      'remaining', v_remaining, 'period_resets_at', v_decision -> 'period_resets_at',
      'threshold_percent', v_threshold), v_now);
  end if;
  return v_response;
end $$;
comment on function public.mandate_consume(jsonb) is 'The only call that moves a ceiling: lock, replay check (with the mandate''s status now; revoked refuses), decide, append consumption and outbox events.';

-- mandate_get({mandate_id, merchant_id, environment, now}) -> mandate json with stored_status and consumptions | null
create or replace function public.mandate_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.mandate_json(m, (p ->> 'now')::timestamptz)
    || jsonb_build_object('stored_status', m.status, 'consumptions', coalesce((
      select jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
        'consumption_id', private.public_id('cns_', c.id), 'scope', c.scope, 'amount', c.amount, 'currency', c.currency,
        'action_ref', c.action_ref, 'context', c.context, 'created_at', c.created_at)) order by c.created_at desc, c.id desc)
      from (select * from private.mandate_consumptions where mandate_id = m.id
            order by created_at desc, id desc limit 100) c), '[]'::jsonb))
  from private.mandates m
  where m.id = (p ->> 'mandate_id')::uuid and m.merchant_id = (p ->> 'merchant_id')::uuid and m.environment = p ->> 'environment'
$$;
comment on function public.mandate_get(jsonb) is 'One mandate of this merchant with its last 100 consumptions, newest first; null when unknown or not its own.';

-- mandate_list({merchant_id, environment, status, now, limit, issued_before?}) -> [mandate json with stored_status] | null
-- This merchant's mandates by effective status, newest first by (created_at, id), at most limit rows (the caller
-- asks one more than it answers, to say whether more follow). With issued_before (a mandate's uuid) only those
-- issued before that mandate in the same order; null when issued_before is not a mandate of this merchant and
-- environment (answered as not_found, like a read of it).
create or replace function public.mandate_list(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with tenant as (
    select (p ->> 'merchant_id')::uuid as merchant_id, p ->> 'environment' as environment, (p ->> 'now')::timestamptz as at
  ), anchor as (
    select b.created_at, b.id from private.mandates b, tenant t
    where p ? 'issued_before' and b.id = (p ->> 'issued_before')::uuid
      and b.merchant_id = t.merchant_id and b.environment = t.environment
  )
  select case when p ? 'issued_before' and not exists (select 1 from anchor) then null
    else coalesce((
      select jsonb_agg(j order by created_at desc, id desc)
      from (
        select private.mandate_json(m, t.at) || jsonb_build_object('stored_status', m.status) as j, m.created_at, m.id
        from private.mandates m, tenant t
        where m.merchant_id = t.merchant_id and m.environment = t.environment
          and (not p ? 'issued_before' or (m.created_at, m.id) < (select a.created_at, a.id from anchor a))
          and private.mandate_effective_status(m, t.at) = p ->> 'status'
        order by m.created_at desc, m.id desc
        limit (p ->> 'limit')::int
      ) listed), '[]'::jsonb) end
$$;
comment on function public.mandate_list(jsonb) is 'This merchant''s mandates whose effective status is the one asked, each with stored_status, newest first, at most limit, optionally only those issued before a given one of its mandates (null when that one is not its own).';

-- mandate_revoke({mandate_id, now, reason?, by: 'issuing_merchant' | 'granting_human' | 'service_role',
--   merchant_id?, environment?, identity_id?}) -> {revoked, already_revoked, mandate_id, status, revoked_at} | null
create or replace function public.mandate_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  m private.mandates;
begin
  select * into m from private.mandates where id = (p ->> 'mandate_id')::uuid for update;
  if not found
     or (p ->> 'by' = 'issuing_merchant' and (m.merchant_id <> (p ->> 'merchant_id')::uuid or m.environment <> p ->> 'environment'))
     or (p ->> 'by' = 'granting_human' and (m.granted_by <> (p ->> 'identity_id')::uuid or m.environment <> p ->> 'environment'))
     or (p ->> 'by') not in ('issuing_merchant', 'granting_human', 'service_role') then
    return null;
  end if;
  if m.status = 'revoked' then
    return jsonb_build_object('revoked', true, 'already_revoked', true, 'mandate_id', private.public_id('mdt_', m.id),
      'status', 'revoked', 'revoked_at', m.revoked_at);
  end if;
  update private.mandates
  set status = 'revoked', revoked_at = v_now, revoked_reason = p ->> 'reason', revoked_by = p ->> 'by', updated_at = v_now
  where id = m.id
  returning * into m;
  perform private.outbox_emit(m.merchant_id, m.environment, 'mandate.revoked', jsonb_build_object(
    'mandate_id', private.public_id('mdt_', m.id), 'granted_to', m.granted_to, 'revoked_at', m.revoked_at,
    'reason', m.revoked_reason, 'revoked_by', m.revoked_by), v_now);
  return jsonb_build_object('revoked', true, 'already_revoked', false, 'mandate_id', private.public_id('mdt_', m.id),
    'status', 'revoked', 'revoked_at', m.revoked_at);
end $$;
comment on function public.mandate_revoke(jsonb) is 'Revokes at once (the row lock orders it against consumes); repeats answer already_revoked; terminal.';

-- mandate.at_limit threshold: the column is private.merchants.at_limit_threshold_percent (top of
-- this file), which mandate_consume reads.
-- merchant_at_limit_threshold({merchant_id, percent?}) -> {merchant_id, at_limit_threshold_percent}
-- With percent (an integer 0 to 99) it is set; without, it is read. HA404 unknown merchant.
create or replace function public.merchant_at_limit_threshold(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_percent int;
begin
  if p ? 'percent' then
    if jsonb_typeof(p -> 'percent') is distinct from 'number' or (p ->> 'percent')::numeric not between 0 and 99
       or (p ->> 'percent')::numeric <> trunc((p ->> 'percent')::numeric) then
      raise exception 'percent must be an integer from 0 to 99' using errcode = '22023';
    end if;
    update private.merchants set at_limit_threshold_percent = (p ->> 'percent')::int
    where id = (p ->> 'merchant_id')::uuid
    returning at_limit_threshold_percent into v_percent;
  else
    select at_limit_threshold_percent into v_percent from private.merchants where id = (p ->> 'merchant_id')::uuid;
  end if;
  if v_percent is null then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  return jsonb_build_object('merchant_id', (p ->> 'merchant_id')::uuid, 'at_limit_threshold_percent', v_percent);
end $$;
comment on function public.merchant_at_limit_threshold(jsonb) is 'Reads, or with percent sets, the merchant''s mandate.at_limit threshold (0 to 99; 0 = at zero remaining); HA404 unknown merchant.';

-- ----------------------------------------------------------------------------
-- mandate-check and mandate-consume in one round trip: the caller's key, the
-- replay nonce (private.request_authenticate, kernel/authentication.sql) and the
-- decision in one call.
-- ----------------------------------------------------------------------------
-- private.tenant_decision(p, caller) -> the decision parameters of p scoped to the authenticated caller.
create or replace function private.tenant_decision(p jsonb, p_caller jsonb) returns jsonb
language sql immutable set search_path = '' as $$
  select (p -> 'decision') || jsonb_build_object(
    'merchant_id', p_caller ->> 'merchant_id',
    'environment', p_caller ->> 'environment',
    'now', p ->> 'now')
$$;
comment on function private.tenant_decision(jsonb, jsonb) is
  'The decision parameters of a request, scoped to the merchant and environment its key authenticated.';

-- mandate_check_request({credential, now, nonce, window_seconds, decision: {mandate_id, scope, amount?, currency?,
--   action_ref?, context?}}) -> the decision of mandate_check, plus caller: {merchant_id, environment}
--   (the key's tenant, which the edge keeps to count the merchant's rate limit; never answered)
create or replace function public.mandate_check_request(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with authenticated as materialized (select private.request_authenticate(p) as caller)
  select public.mandate_check(private.tenant_decision(p, a.caller))
         || jsonb_build_object('caller', jsonb_build_object('merchant_id', a.caller ->> 'merchant_id', 'environment', a.caller ->> 'environment'))
  from authenticated a
$$;
comment on function public.mandate_check_request(jsonb) is
  'mandate-check in one round trip: authenticate the key, claim the nonce, decide (advisory, never debits); says whose key it was.';

-- mandate_consume_request({credential, now, nonce, window_seconds, decision: {…, idempotency_key, request_hash}})
--   -> the decision of mandate_consume
create or replace function public.mandate_consume_request(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  select public.mandate_consume(private.tenant_decision(p, private.request_authenticate(p)))
$$;
comment on function public.mandate_consume_request(jsonb) is
  'mandate-consume in one round trip: authenticate the key, claim the nonce, then the row-locked consume.';

-- The key of the bucket containing p_at: its start, or -infinity for lifetime.
create or replace function private.mandate_usage_bucket(p_period text, p_at timestamptz) returns timestamptz
language sql immutable set search_path = '' as $$
  select coalesce((private.mandate_period(p_period, p_at)).period_start, '-infinity'::timestamptz)
$$;
comment on function private.mandate_usage_bucket(text, timestamptz) is 'private.mandate_usage.period_start of the bucket containing p_at: the bucket''s UTC start, -infinity for lifetime.';

-- Adds a new consumption to its bucket's total. The consume RPC holds the mandate's row lock
-- (`for update`) when it appends, so totals of one mandate change one consume at a time; the upsert
-- itself is atomic for any other writer too.
create or replace function private.mandate_usage_add() returns trigger
language plpgsql set search_path = '' as $$
begin
  insert into private.mandate_usage as u (mandate_id, period_start, used_amount, used_count)
  select new.mandate_id, private.mandate_usage_bucket(m.ceiling_period, new.created_at), coalesce(new.amount, 0), 1
  from private.mandates m
  where m.id = new.mandate_id
  on conflict (mandate_id, period_start) do update
    set used_amount = u.used_amount + excluded.used_amount, used_count = u.used_count + 1;
  return null;
end $$;
comment on function private.mandate_usage_add() is 'Trigger body: adds the inserted consumption''s amount and one use to the total of its mandate''s bucket.';

create or replace trigger mandate_consumptions_usage after insert on private.mandate_consumptions
  for each row execute function private.mandate_usage_add();
comment on trigger mandate_consumptions_usage on private.mandate_consumptions is 'Adds each new consumption to its bucket''s total in private.mandate_usage (private.mandate_usage_add).';

-- Recomputes the totals of the given mandates (null: every mandate) from the ledger. The migration
-- backfills with it; it also repairs, since it sets each bucket to the ledger's sums.
create or replace function private.mandate_usage_backfill(p_mandate_ids uuid[]) returns int
language plpgsql set search_path = '' as $$
declare v_rows int;
begin
  insert into private.mandate_usage as u (mandate_id, period_start, used_amount, used_count)
  select c.mandate_id, private.mandate_usage_bucket(m.ceiling_period, c.created_at), coalesce(sum(c.amount), 0), count(*)
  from private.mandate_consumptions c
  join private.mandates m on m.id = c.mandate_id
  where p_mandate_ids is null or c.mandate_id = any (p_mandate_ids)
  group by 1, 2
  on conflict (mandate_id, period_start) do update
    set used_amount = excluded.used_amount, used_count = excluded.used_count;
  get diagnostics v_rows = row_count;
  return v_rows;
end $$;
comment on function private.mandate_usage_backfill(uuid[]) is 'Sets the totals of the given mandates (null: all) to the sums of their consumptions per bucket; returns the buckets written.';

-- ----------------------------------------------------------------------------
-- Reads: what remains comes from the bucket's total
-- ----------------------------------------------------------------------------
-- What remains of a mandate's ceiling in the bucket containing p_at (before any new consumption).
create or replace function private.mandate_remaining(m private.mandates, p_at timestamptz,
  out remaining_amount bigint, out remaining_count int, out period_resets_at timestamptz)
language plpgsql stable set search_path = '' as $$
declare
  v_start timestamptz;
  v_used_amount numeric;
  v_used_count int;
begin
  select period_start, resets_at into v_start, period_resets_at from private.mandate_period(m.ceiling_period, p_at);
  select u.used_amount, u.used_count into v_used_amount, v_used_count
  from private.mandate_usage u
  where u.mandate_id = m.id and u.period_start = coalesce(v_start, '-infinity'::timestamptz);
  remaining_amount := case when m.ceiling_amount is null then null else greatest(m.ceiling_amount - coalesce(v_used_amount, 0), 0) end;
  remaining_count := case when m.ceiling_count is null then null else greatest(m.ceiling_count - coalesce(v_used_count, 0), 0) end;
end $$;
comment on function private.mandate_remaining(private.mandates, timestamptz) is 'Remaining amount and count of the bucket containing p_at, from the bucket''s running total (one primary-key read).';

-- mandate_page({merchant_id, environment, now, limit, mandate_id?, granted_by?, granted_to?, status?,
--   after?: {at, id}}) -> {data: [mandate], more: boolean, last}
-- Newest first by (created_at, id); `after` is the last row of the previous page, so rows added
-- since (newer) never shift a later page. At most `limit` rows; `more` says whether another follows.
create or replace function public.mandate_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with page as (
    select m as mandate, m.created_at, m.id
    from private.mandates m
    where m.merchant_id = (p ->> 'merchant_id')::uuid and m.environment = p ->> 'environment'
      and (not p ? 'mandate_id' or m.id = (p ->> 'mandate_id')::uuid)
      and (not p ? 'granted_by' or m.granted_by_ref = p ->> 'granted_by')
      and (not p ? 'granted_to' or m.granted_to = p ->> 'granted_to')
      and (not p ? 'after' or (m.created_at, m.id) < ((p -> 'after' ->> 'at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
      and (not p ? 'status' or private.mandate_effective_status(m, (p ->> 'now')::timestamptz) = p ->> 'status')
    order by m.created_at desc, m.id desc
    limit (p ->> 'limit')::int + 1
  )
  select private.keyset_page(
    coalesce(jsonb_agg(jsonb_build_object('item', private.mandate_object_json(mandate, (p ->> 'now')::timestamptz), 'at', created_at, 'id', id)
                       order by created_at desc, id desc), '[]'::jsonb),
    (p ->> 'limit')::int)
  from page
$$;
comment on function public.mandate_page(jsonb) is
  'One page of this merchant''s mandates, newest first, filtered by id, granter, holder and effective status, after a keyset cursor.';

-- ============================================================================
-- The resource API's mandates (docs/resource-api.md#mandates): the mandate as
-- this surface shows it is built on mandate_json (the one shape of a mandate)
-- with this surface's names, and POST /v1/mandates issues and stores its answer
-- under the Idempotency-Key in one transaction.
-- ============================================================================

-- A mandate as the resource API shows it: mandate_json's fields (agent fields null when absent),
-- with id, scope, until, step_up_of (an mdt_ id or null), the ceiling in this surface's periods and what remains of it.
create or replace function private.mandate_object_json(m private.mandates, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object('agent_display_name', null, 'agent_descriptor', null)
    || (private.mandate_json(m, p_at) - array['mandate_id', 'scopes', 'expires_at', 'ceiling', 'step_up_of', 'updated_at'])
    || jsonb_build_object(
      'id', private.public_id('mdt_', m.id),
      'object', 'mandate',
      -- The parent of a step-up, in this surface's ids (D-681): POST /v1/mandates takes it, so GET shows it.
      'step_up_of', case when m.step_up_of is not null then private.public_id('mdt_', m.step_up_of) end,
      'scope', to_jsonb(m.scopes),
      'until', m.expires_at,
      'ceiling', case when m.ceiling_kind = 'none' then null else jsonb_build_object(
        'amount', m.ceiling_amount, 'currency', m.ceiling_currency, 'count', m.ceiling_count,
        'period', case m.ceiling_period when 'daily' then 'day' when 'weekly' then 'week'
                                        when 'monthly' then 'month' else 'lifetime' end) end,
      'remaining', case when m.ceiling_kind = 'none' then null
                        else coalesce(r.remaining_amount, r.remaining_count) end,
      'remaining_count', case when m.ceiling_kind = 'both' then r.remaining_count end,
      'period_resets_at', r.period_resets_at)
  from private.mandate_remaining(m, p_at) r
$$;
comment on function private.mandate_object_json(private.mandates, timestamptz) is
  'A mandate as the resource API shows it (mandate_json in this surface''s names): remaining is the amount left when the ceiling has an amount, else the count left.';

-- mandate_issue_stored(mandate_issue's params + {stored_response?: {record}}) -> the mandate (mandate_object_json)
-- mandate_issue and, with an Idempotency-Key, its 201 answer stored in the same transaction: a
-- mandate is never issued without its answer, nor twice for one key.
create or replace function public.mandate_issue_stored(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_body jsonb;
begin
  perform public.mandate_issue(p);
  select private.mandate_object_json(m, (p ->> 'now')::timestamptz) into v_body
  from private.mandates m where m.id = (p ->> 'id')::uuid;
  perform private.idempotency_store_act(p -> 'stored_response', 201, v_body, null);
  return v_body;
end $$;
comment on function public.mandate_issue_stored(jsonb) is
  'POST /v1/mandates: issues the mandate and stores its answer under the Idempotency-Key in one transaction.';

create or replace trigger mandate_consumptions_append_only before update or delete on private.mandate_consumptions
  for each row execute function private.refuse_change();
comment on trigger mandate_consumptions_append_only on private.mandate_consumptions is 'Keeps the ledger append-only: update and delete raise HA423.';
