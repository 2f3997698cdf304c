-- ============================================================================
-- Mandates: what a verified person authorised an agent to do, and every use
-- of it. A mandate row is immutable but for its status; consumptions are
-- append-only; there is no balance column: what remains is computed under the
-- mandate's row lock. This file sums it from the bucket's consumptions;
-- 20261121009100_mandate_usage.sql, the in-place upgrade that follows, reads
-- a running total per bucket instead (private.mandate_remaining).
-- Also here: the merchant's mandate.at_limit threshold, and the transaction
-- sink's mandate path (a mandate standing in for the live capture).
-- ============================================================================

alter table private.merchants add column at_limit_threshold_percent int not null default 0
  check (at_limit_threshold_percent between 0 and 99);
comment on column private.merchants.at_limit_threshold_percent is
  'mandate.at_limit fires when a consumption takes the remaining ceiling of its period to at most this percentage of the ceiling (0: when it reaches zero).';

-- ----------------------------------------------------------------------------
-- Mandates
-- ----------------------------------------------------------------------------
create table private.mandates (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  granted_by uuid not null references private.identities (id),
  granted_by_ref text not null,
  granted_to text not null check (length(granted_to) between 1 and 200),
  granted_to_kind text not null check (granted_to_kind ~ '^[a-z][a-z_]{0,31}$'),
  agent_display_name text check (length(btrim(agent_display_name)) between 1 and 64),
  agent_descriptor text check (length(btrim(agent_descriptor)) between 1 and 140),
  scopes text[] not null check (cardinality(scopes) between 1 and 8),
  constraints jsonb not null default '{}'::jsonb,
  ceiling_kind text not null check (ceiling_kind in ('amount', 'count', 'both', 'none')),
  ceiling_amount bigint check (ceiling_amount > 0),
  ceiling_currency text check (ceiling_currency ~ '^[A-Z]{3}$'),
  ceiling_count int check (ceiling_count > 0),
  ceiling_period text not null check (ceiling_period in ('lifetime', 'daily', 'weekly', 'monthly')),
  assurance_level text not null check (assurance_level in ('face', 'face_voice', 'face_voice_doc')),
  capture_id uuid not null references private.captures (id),
  step_up_of uuid references private.mandates (id),
  expires_at timestamptz not null,
  status text not null default 'active' check (status in ('active', 'consumed', 'revoked')),
  revoked_at timestamptz,
  revoked_reason text check (length(revoked_reason) <= 500),
  revoked_by text check (revoked_by in ('granting_human', 'issuing_merchant', 'service_role')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((ceiling_kind in ('amount', 'both')) = (ceiling_amount is not null and ceiling_currency is not null)),
  check ((ceiling_kind in ('count', 'both')) = (ceiling_count is not null)),
  check ((status = 'revoked') = (revoked_at is not null))
);
comment on table private.mandates is 'Mandates: scope, ceiling and expiry a verified person granted an agent. Immutable but for status, revoked_* and updated_at (a trigger refuses anything else).';
comment on column private.mandates.id is 'Mandate id (responses show it as mdt_<32 hex>).';
comment on column private.mandates.merchant_id is 'The issuing merchant; only it (and the person, and the service role) can read or revoke the mandate.';
comment on column private.mandates.environment is 'test or live.';
comment on column private.mandates.granted_by is 'The identity of the granting human.';
comment on column private.mandates.granted_by_ref is 'The issuing merchant''s subject_ref for the granting human: what responses show as granted_by.';
comment on column private.mandates.granted_to is 'Opaque identifier of the holder (agent), never a label a person reads.';
comment on column private.mandates.granted_to_kind is 'What kind of holder it is, e.g. agent.';
comment on column private.mandates.agent_display_name is 'Optional readable agent name, up to 64 characters; frozen.';
comment on column private.mandates.agent_descriptor is 'Optional one line on what the agent does, up to 140 characters; frozen.';
comment on column private.mandates.scopes is 'Granted scopes from the closed vocabulary; matched exactly.';
comment on column private.mandates.constraints is 'merchant_allowlist, category_allowlist, country_allowlist (arrays of strings).';
comment on column private.mandates.ceiling_kind is 'amount, count, both or none.';
comment on column private.mandates.ceiling_amount is 'Amount ceiling per period in the minor unit (money scopes only).';
comment on column private.mandates.ceiling_currency is 'ISO 4217 currency of the amount ceiling.';
comment on column private.mandates.ceiling_count is 'Number of consumptions allowed per period.';
comment on column private.mandates.ceiling_period is 'lifetime, daily, weekly (ISO weeks, Monday) or monthly; buckets are computed in UTC.';
comment on column private.mandates.assurance_level is 'Copied from the proof capture at issue; never client-supplied.';
comment on column private.mandates.capture_id is 'The capture that proved the granting human was present (at most five minutes old at issue).';
comment on column private.mandates.step_up_of is 'The standing mandate this one steps up from; its balance is never touched.';
comment on column private.mandates.expires_at is 'Expiry; no mandate is open-ended: mandate-issue accepts at most 365 days after issue (EXPIRES_AT_TOO_FAR).';
comment on column private.mandates.status is 'Stored status: active, consumed (a lifetime ceiling used up) or revoked. Reads report the effective status.';
comment on column private.mandates.revoked_at is 'When it was revoked.';
comment on column private.mandates.revoked_reason is 'Reason given by the revoker, if any.';
comment on column private.mandates.revoked_by is 'granting_human, issuing_merchant or service_role.';
comment on column private.mandates.created_at is 'Issue time.';
comment on column private.mandates.updated_at is 'Last status change.';
create index mandates_merchant_idx on private.mandates (merchant_id, environment, created_at desc);
create index mandates_granted_by_idx on private.mandates (granted_by);

create or replace function private.mandates_refuse_update() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_mutable text[] := array['status', 'revoked_at', 'revoked_reason', 'revoked_by', 'updated_at'];
begin
  if (to_jsonb(new) - v_mutable) is distinct from (to_jsonb(old) - v_mutable) then
    raise exception 'a mandate cannot be changed; issue a new one' using errcode = 'HA423';
  end if;
  if to_jsonb(new) is distinct from to_jsonb(old)
     and (old.status = 'revoked' or (old.status = 'consumed' and new.status <> 'revoked')) then
    raise exception 'a % mandate can only be revoked', old.status using errcode = 'HA423';
  end if;
  return new;
end $$;
comment on function private.mandates_refuse_update() is 'Immutability: only status and its bookkeeping may change; a revoked mandate never changes again, and a consumed one can only be revoked.';
create trigger mandates_immutable before update on private.mandates
  for each row execute function private.mandates_refuse_update();
comment on trigger mandates_immutable on private.mandates is 'Refuses any change but status and its bookkeeping (private.mandates_refuse_update).';

-- ----------------------------------------------------------------------------
-- Consumptions (append-only)
-- ----------------------------------------------------------------------------
create table private.mandate_consumptions (
  id uuid primary key,
  mandate_id uuid not null references private.mandates (id),
  idempotency_key text not null check (length(idempotency_key) between 8 and 200),
  request_hash text not null,
  scope text not null,
  amount bigint check (amount >= 0),
  currency text check (currency ~ '^[A-Z]{3}$'),
  action_ref text check (length(action_ref) <= 200),
  context jsonb,
  response jsonb not null,
  created_at timestamptz not null,
  unique (mandate_id, idempotency_key)
);
comment on table private.mandate_consumptions is 'Every use of a mandate; append-only (a trigger refuses update and delete). Remaining ceilings are sums over these rows.';
comment on column private.mandate_consumptions.id is 'consumption_id (responses show cns_<32 hex>).';
comment on column private.mandate_consumptions.mandate_id is 'The mandate consumed.';
comment on column private.mandate_consumptions.idempotency_key is 'The Idempotency-Key of the consume call; a replay returns this row''s response.';
comment on column private.mandate_consumptions.request_hash is 'SHA-256 of the consume body; the same key with another body is refused.';
comment on column private.mandate_consumptions.scope is 'Scope used.';
comment on column private.mandate_consumptions.amount is 'Amount consumed, minor unit.';
comment on column private.mandate_consumptions.currency is 'ISO 4217 currency of amount.';
comment on column private.mandate_consumptions.action_ref is 'The caller''s reference for the action.';
comment on column private.mandate_consumptions.context is 'merchant, category, country of the action as sent.';
comment on column private.mandate_consumptions.response is 'The answer given, replayed verbatim for the same Idempotency-Key.';
comment on column private.mandate_consumptions.created_at is 'Server time of the consumption; decides its period bucket.';
create index mandate_consumptions_mandate_idx on private.mandate_consumptions (mandate_id, created_at desc);

create or replace function private.refuse_change() returns trigger
language plpgsql set search_path = '' as $$
begin
  raise exception '% rows are append-only', tg_table_name using errcode = 'HA423';
end $$;
comment on function private.refuse_change() is 'Trigger body for append-only tables.';
create trigger mandate_consumptions_append_only before update or delete on private.mandate_consumptions
  for each row execute function private.refuse_change();
comment on trigger mandate_consumptions_append_only on private.mandate_consumptions is 'Keeps the ledger append-only: update and delete raise HA423.';

-- ----------------------------------------------------------------------------
-- Helpers
-- ----------------------------------------------------------------------------
create or replace function private.public_id(p_prefix text, p_id uuid) returns text
language sql immutable set search_path = '' as $$ select p_prefix || replace(p_id::text, '-', '') $$;
comment on function private.public_id(text, uuid) is 'Opaque prefixed id as responses show it (mdt_…, cns_…).';

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

-- What remains of a mandate's ceiling in the bucket containing p_at (before any new consumption).
create or replace function private.mandate_remaining(m private.mandates, p_at timestamptz,
  out remaining_amount bigint, out remaining_count int, out period_resets_at timestamptz)
language plpgsql stable set search_path = '' as $$
declare
  v_start timestamptz;
  v_used_amount bigint;
  v_used_count int;
begin
  select period_start, resets_at into v_start, period_resets_at from private.mandate_period(m.ceiling_period, p_at);
  select coalesce(sum(c.amount), 0), count(*) into v_used_amount, v_used_count
  from private.mandate_consumptions c
  where c.mandate_id = m.id
    and (v_start is null or (c.created_at >= v_start and c.created_at < period_resets_at));
  remaining_amount := case when m.ceiling_amount is null then null else greatest(m.ceiling_amount - v_used_amount, 0) end;
  remaining_count := case when m.ceiling_count is null then null else greatest(m.ceiling_count - v_used_count, 0) end;
end $$;
comment on function private.mandate_remaining(private.mandates, timestamptz) is 'Remaining amount and count of the bucket containing p_at, summed from the consumptions stamped inside it.';
-- (Replaced by 20261121009100_mandate_usage.sql with a read of the bucket's running total.)

-- Effective status at p_at: revoked > consumed > expired > exhausted > active.
create or replace function private.mandate_effective_status(m private.mandates, p_at timestamptz) returns text
language plpgsql stable set search_path = '' as $$
declare r record;
begin
  if m.status <> 'active' then return m.status; end if;
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
  if m.status = 'consumed' then return jsonb_build_object('allowed', false, 'reason', 'mandate_consumed'); end if;
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

-- ============================================================================
-- RPCs
-- ============================================================================

-- mandate_issue({id, merchant_id, environment, now, granted_by_ref, granted_to, granted_to_kind, agent_display_name?,
--   agent_descriptor?, scopes, money_scopes, constraints, ceiling: {kind, amount, currency, count, period}, expires_at,
--   step_up_of?, capture_id, proof_max_age_seconds}) -> mandate json
-- The proof must be a capture of the granting human for this merchant, at most proof_max_age_seconds old, live and
-- uncoerced; its frozen assurance level is copied. Money scopes need a valid document on the identity.
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
begin
  select identity_id into v_identity from private.subject_refs
  where merchant_id = v_merchant and subject_ref = p ->> 'granted_by_ref';

  select * into v_capture from private.captures
  where id = (p ->> 'capture_id')::uuid and merchant_id = v_merchant and environment = v_env;
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

  perform private.outbox_emit(v_merchant, v_env, 'mandate.granted', jsonb_build_object(
    'mandate_id', private.public_id('mdt_', v_mandate.id),
    'granted_to', v_mandate.granted_to,
    'granted_to_kind', v_mandate.granted_to_kind,
    'scopes', to_jsonb(v_mandate.scopes),
    'ceiling', private.mandate_json(v_mandate, v_now) -> 'ceiling',
    'expires_at', v_mandate.expires_at,
    'assurance_level', v_mandate.assurance_level,
    'step_up_of', private.public_id('mdt_', v_mandate.step_up_of)), v_now);
  return private.mandate_json(v_mandate, v_now);
end $$;
comment on function public.mandate_issue(jsonb) is 'Issues a mandate against a fresh live capture of the granting human, and emits mandate.granted.';

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
          or (m.ceiling_count is not null and v_after_count * 100 <= m.ceiling_count * v_threshold
             and (v_after_count + 1) * 100 > m.ceiling_count * v_threshold))) then
    perform private.outbox_emit(m.merchant_id, m.environment, 'mandate.at_limit', jsonb_build_object(
      'mandate_id', private.public_id('mdt_', m.id),
      'consumption_id', private.public_id('cns_', v_id),
      'remaining', v_remaining, 'period_resets_at', v_decision -> 'period_resets_at',
      'threshold_percent', v_threshold), v_now);
  end if;

  if v_at_limit and m.ceiling_period = 'lifetime' then
    update private.mandates set status = 'consumed', updated_at = v_now where id = m.id;
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

-- mandate_list({merchant_id, environment, status, now, limit}) -> [mandate json with stored_status], newest first,
-- by effective status; at most limit rows (the caller asks one more than it answers, to tell a list that is too large).
create or replace function public.mandate_list(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select coalesce(jsonb_agg(j order by created_at desc, id desc), '[]'::jsonb)
  from (
    select private.mandate_json(m, (p ->> 'now')::timestamptz) || jsonb_build_object('stored_status', m.status) as j,
      m.created_at, m.id
    from private.mandates m
    where m.merchant_id = (p ->> 'merchant_id')::uuid and m.environment = p ->> 'environment'
      and private.mandate_effective_status(m, (p ->> 'now')::timestamptz) = p ->> 'status'
    order by m.created_at desc, m.id desc
    limit (p ->> 'limit')::int
  ) listed
$$;
comment on function public.mandate_list(jsonb) is 'This merchant''s mandates whose effective status is the one asked, each with stored_status, newest first, at most limit.';

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

-- ============================================================================
-- The transaction sink's mandate path
-- ============================================================================
-- process-biovital-transaction with mandate_id: the mandate stands in for the live capture. One
-- RPC consumes the mandate (through mandate_consume, so the same row lock and arithmetic),
-- records the act with its receipt and stores the answer under the request's Idempotency-Key.

alter table private.captures add column mandate_id uuid references private.mandates (id);
alter table private.captures add column consumption_id uuid references private.mandate_consumptions (id);
comment on column private.captures.mandate_id is 'Set when a mandate stood in for the live capture; such a row records no liveness and is never proof for mandate-issue.';
comment on column private.captures.consumption_id is 'The mandate consumption this act used.';
create unique index captures_consumption_idx on private.captures (consumption_id) where consumption_id is not null;

-- mandate_transaction({consume: {...mandate_consume params}, identity_id, capture: {...}, receipt: {...},
--   stored_response?: {record: {merchant_id, environment, function_name, key}}})
--   -> {decision, approval: the sink's answer | null when refused}
-- The approval is built here, from the rows, so that under an Idempotency-Key the same transaction stores it
-- as the answer a retry replays (private.idempotency_store_act): the act and its stored answer commit
-- together. A replayed consumption answers the act recorded the first time, with idempotent_replay and the
-- mandate's status now (mandate_status).
create or replace function public.mandate_transaction(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_mandate_id uuid := (p -> 'consume' ->> 'mandate_id')::uuid;
  m private.mandates;
  v_decision jsonb;
  v_consumption uuid;
  c jsonb := p -> 'capture';
  v_act jsonb;
  v_approval jsonb;
begin
  if not exists (select 1 from private.mandates where id = v_mandate_id and granted_by = (p ->> 'identity_id')::uuid) then
    return jsonb_build_object('decision', jsonb_build_object('allowed', false, 'reason', 'mandate_not_found'), 'approval', null);
  end if;
  v_decision := public.mandate_consume(p -> 'consume');
  if not (v_decision ->> 'allowed')::boolean then
    return jsonb_build_object('decision', v_decision, 'approval', null);
  end if;
  v_consumption := substr(v_decision ->> 'consumption_id', 5)::uuid;

  if (v_decision ->> 'idempotent_replay')::boolean then
    select jsonb_build_object('transaction_id', cap.id, 'service_hash', cap.service_hash, 'immutability_seal', r.seal,
                              'receipt_id', r.id, 'receipt_code', r.code)
    into v_act
    from private.captures cap join private.receipts r on r.capture_id = cap.id
    where cap.consumption_id = v_consumption;
  else
    insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, amount_minor, currency,
      capture_nonce, liveness_passed, liveness_reason, coercion_signal, assurance_level, face_similarity, engine_version,
      scenario, created_at, mandate_id, consumption_id)
    values ((c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid, c ->> 'environment', (p ->> 'identity_id')::uuid, c ->> 'action',
      c ->> 'service_hash', (c ->> 'amount_minor')::bigint, c ->> 'currency', c ->> 'capture_nonce', false, 'mandate_stand_in',
      false, c ->> 'assurance_level', null, c ->> 'engine_version', null, (c ->> 'created_at')::timestamptz, v_mandate_id,
      v_consumption);
    insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
    values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid,
      c ->> 'environment', p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', (c ->> 'created_at')::timestamptz);
    v_act := jsonb_build_object('transaction_id', c ->> 'id', 'service_hash', c ->> 'service_hash',
      'immutability_seal', p -> 'receipt' ->> 'seal', 'receipt_id', p -> 'receipt' ->> 'id', 'receipt_code', p -> 'receipt' ->> 'code');
  end if;

  -- Spec 4.4: the approval of an act nobody was present for (assurance mandate) and its mandate block.
  select * into m from private.mandates where id = v_mandate_id;
  v_approval := jsonb_build_object('success', true, 'status', 'approved', 'assurance_level', 'mandate') || v_act
    || jsonb_build_object('mandate', jsonb_build_object(
         'mandate_id', private.public_id('mdt_', m.id),
         'consumption_id', v_decision -> 'consumption_id',
         'scope_used', v_decision -> 'scope_used',
         'granted_to', m.granted_to,
         'assurance_level', m.assurance_level,
         'idempotent_replay', v_decision -> 'idempotent_replay',
         'remaining', v_decision -> 'remaining',
         'at_limit', v_decision -> 'at_limit')
       || jsonb_strip_nulls(jsonb_build_object(
         'agent_display_name', m.agent_display_name,
         'agent_descriptor', m.agent_descriptor,
         'mandate_status', v_decision -> 'mandate_status')));
  perform private.idempotency_store_act(p -> 'stored_response', 200, v_approval, m.id);
  return jsonb_build_object('decision', v_decision, 'approval', v_approval);
end $$;
comment on function public.mandate_transaction(jsonb) is 'The transaction sink''s mandate path: consume (row-locked, idempotent), record the act with its receipt and store its answer under the Idempotency-Key, atomically.';

-- ----------------------------------------------------------------------------
-- mandate-check and mandate-consume in one round trip: the caller's key, the
-- replay nonce (private.request_authenticate, migration ..._0400) and the
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
