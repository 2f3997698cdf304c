-- ============================================================================
-- Billing: the ledger of billed claims, monthly allowances, usage; the claim-session triggers. (No shared/ folder: the CLI and the claim RPCs are its callers.)
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- The allowance of a merchant that no operator has set: 1,000 billed claims a month in production,
-- 100 in the sandbox (sandbox claims are never invoiced; the cap only bounds what a test key can store).
create or replace function private.billing_default_allowance(p_env text) returns bigint
language sql immutable set search_path = '' as $$ select case p_env when 'live' then 1000 else 100 end::bigint $$;
comment on function private.billing_default_allowance(text) is 'Monthly claims allowed when the operator set none: 1,000 live, 100 sandbox.';

-- The calendar month (UTC) that contains p_at: [month_start, next_month_start).
create or replace function private.billing_month(p_at timestamptz, out month_start timestamptz, out next_month_start timestamptz)
language sql immutable set search_path = '' as $$
  select date_trunc('month', p_at at time zone 'UTC') at time zone 'UTC',
         (date_trunc('month', p_at at time zone 'UTC') + interval '1 month') at time zone 'UTC'
$$;
comment on function private.billing_month(timestamptz) is 'The UTC calendar month containing an instant, as [start, next start).';

-- The merchant's allowance in one environment and the claims billed in the month of p_at.
create or replace function private.billing_standing(p_merchant uuid, p_env text, p_at timestamptz,
  out allowance bigint, out used bigint)
language sql stable set search_path = '' as $$
  select coalesce((select a.monthly_claims from private.billing_allowances a
                   where a.merchant_id = p_merchant and a.environment = p_env),
                  private.billing_default_allowance(p_env)),
         (select count(*) from private.billing_ledger l, private.billing_month(p_at) m
          where l.merchant_id = p_merchant and l.environment = p_env
            and l.billed_at >= m.month_start and l.billed_at < m.next_month_start)
$$;
comment on function private.billing_standing(uuid, text, timestamptz) is 'A merchant''s monthly allowance in one environment and the claims billed in the month of an instant.';

-- private.billing_allowance_left(merchant, environment, at) -> bigint
-- Billed claims the merchant may still make this month: for an act that must refuse before it starts
-- (a claim session's creation answers allowance_exhausted when it is 0). Takes no lock: the act itself
-- is decided by private.billing_charge_claim.
create or replace function private.billing_allowance_left(p_merchant uuid, p_env text, p_at timestamptz) returns bigint
language sql stable set search_path = '' as $$
  select greatest(s.allowance - s.used, 0) from private.billing_standing(p_merchant, p_env, p_at) s
$$;
comment on function private.billing_allowance_left(uuid, text, timestamptz) is 'Billed claims a merchant may still make this month in one environment (no lock; a pre-check only).';

-- private.billing_charge_claim(merchant, environment, identity, channel, reference, at, enforce_allowance = true) -> billed
-- THE interface of billing: call it inside the transaction of the act that claims a person (the claim
-- RPC, a hosted claim session's completion), after the act's own writes and before it commits.
--   * true: the person is billed now (a ledger row in this transaction; rolled back with the act);
--   * false: this merchant was billed for this person before (rule 1: once per person for life), the
--     act goes on free;
--   * raises HA440 (allowance_exhausted, 402) when the person would be billed and the month's
--     allowance is used up: the caller's whole act rolls back, nothing is claimed or billed. An act
--     whose allowance was checked before it started (a claim session, at its creation) passes
--     enforce_allowance = false: it is billed even past the allowance, never refused half done.
-- Serialised per merchant and environment by the allowance row's lock, so racing claims never pass the
-- allowance together and a person raced twice is billed once.
create or replace function private.billing_charge_claim(p_merchant uuid, p_env text, p_identity uuid, p_channel text,
  p_reference text, p_at timestamptz, p_enforce_allowance boolean default true) returns boolean
language plpgsql security definer set search_path = '' as $$
declare
  v_standing record;
begin
  insert into private.billing_allowances (merchant_id, environment, monthly_claims, updated_at)
  values (p_merchant, p_env, private.billing_default_allowance(p_env), p_at)
  on conflict do nothing;
  perform 1 from private.billing_allowances where merchant_id = p_merchant and environment = p_env for update;

  if exists (select 1 from private.billing_ledger
             where merchant_id = p_merchant and environment = p_env and act = 'claim' and identity_id = p_identity) then
    return false;
  end if;
  select * into v_standing from private.billing_standing(p_merchant, p_env, p_at);
  if p_enforce_allowance and v_standing.used >= v_standing.allowance then
    raise exception 'the monthly allowance of billed claims is used up' using errcode = 'HA440',
      detail = jsonb_build_object('allowance', v_standing.allowance,
                                  'resets_at', private.iso_utc((private.billing_month(p_at)).next_month_start))::text;
  end if;
  insert into private.billing_ledger (merchant_id, environment, act, identity_id, channel, reference, billed_at)
  values (p_merchant, p_env, 'claim', p_identity, p_channel, p_reference, p_at);
  return true;
end $$;
comment on function private.billing_charge_claim(uuid, text, uuid, text, text, timestamptz, boolean) is
  'Bills a claim of a person inside the act''s transaction: true when billed now, false when billed before (once for life); HA440 when the monthly allowance is used up.';

-- ============================================================================
-- RPCs (the operator's CLI)
-- ============================================================================

-- billing_usage({merchant_id, now, month?}) -> {merchant_id, month, period_start, period_end, environments: {live, test}}
-- Each environment: {claims_billed (in the month), allowance, allowance_remaining, persons_billed (for life)}.
-- month is YYYY-MM (default: the month of now). HA404 for an unknown merchant.
create or replace function public.billing_usage(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_at timestamptz := coalesce(((p ->> 'month') || '-01T00:00:00Z')::timestamptz, (p ->> 'now')::timestamptz);
  v_month record := private.billing_month(v_at);
begin
  if not exists (select 1 from private.merchants where id = v_merchant) then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  return jsonb_build_object(
    'merchant_id', v_merchant,
    'month', to_char(v_month.month_start at time zone 'UTC', 'YYYY-MM'),
    'period_start', private.iso_utc(v_month.month_start),
    'period_end', private.iso_utc(v_month.next_month_start),
    'environments', (
      select jsonb_object_agg(e.env, jsonb_build_object(
        'claims_billed', s.used,
        'allowance', s.allowance,
        'allowance_remaining', greatest(s.allowance - s.used, 0),
        'persons_billed', (select count(*) from private.billing_ledger l
                           where l.merchant_id = v_merchant and l.environment = e.env and l.act = 'claim')))
      from unnest(array['live', 'test']) as e(env), private.billing_standing(v_merchant, e.env, v_at) s));
end $$;
comment on function public.billing_usage(jsonb) is 'A merchant''s billed claims in a month and its allowance, per environment (CLI usage).';

-- billing_allowance_set({merchant_id, environment, monthly_claims, now}) -> {merchant_id, environment, monthly_claims}
-- The operator sets a merchant's monthly allowance in one environment (takes effect on the next claim). HA404 for
-- an unknown merchant.
create or replace function public.billing_allowance_set(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
begin
  if not exists (select 1 from private.merchants where id = v_merchant) then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  insert into private.billing_allowances as a (merchant_id, environment, monthly_claims, updated_at)
  values (v_merchant, p ->> 'environment', (p ->> 'monthly_claims')::bigint, (p ->> 'now')::timestamptz)
  on conflict (merchant_id, environment) do update set monthly_claims = excluded.monthly_claims, updated_at = excluded.updated_at;
  return jsonb_build_object('merchant_id', v_merchant, 'environment', p ->> 'environment',
                            'monthly_claims', (p ->> 'monthly_claims')::bigint);
end $$;
comment on function public.billing_allowance_set(jsonb) is 'Sets a merchant''s monthly allowance of billed claims in one environment (CLI allowance set).';

-- ============================================================================
-- Claim sessions and billing (resource API 1: "an abandoned hosted session is
-- never billed; a recognise session is free; a claim session follows the
-- claim rule"). Hosted sessions of mode claim are billed by the transaction
-- that stores their approved outcome, and refused at creation when the
-- month's allowance is used up. Triggers, so that whichever RPC creates or
-- completes a session, the rule holds.
-- ============================================================================

-- A claim session is refused at creation (HA440, 402 allowance_exhausted) when the merchant has no billed
-- claim left this month: the allowance is checked when the merchant opens the screen, not after the person
-- has been through it.
create or replace function private.hosted_session_claim_allowance() returns trigger
language plpgsql set search_path = '' as $$
begin
  if private.billing_allowance_left(new.merchant_id, new.environment, new.created_at) = 0 then
    raise exception 'the monthly allowance of billed claims is used up' using errcode = 'HA440',
      detail = jsonb_build_object(
        'allowance', (private.billing_standing(new.merchant_id, new.environment, new.created_at)).allowance,
        'resets_at', private.iso_utc((private.billing_month(new.created_at)).next_month_start))::text;
  end if;
  return new;
end $$;
comment on function private.hosted_session_claim_allowance() is 'Refuses a claim session at creation when the month''s allowance of billed claims is used up (HA440).';

create or replace trigger hosted_sessions_claim_allowance before insert on private.hosted_sessions
  for each row when (new.action = 'claim') execute function private.hosted_session_claim_allowance();
comment on trigger hosted_sessions_claim_allowance on private.hosted_sessions is 'A claim session needs a billed claim left in the month''s allowance.';

-- A claim session that completes approved bills the person it claimed (once for life: a person billed before
-- is not billed again), in the transaction that stores the outcome: a cancelled, failed or expired session never
-- reaches it. Its allowance was checked at creation, so the completion is never refused for it.
create or replace function private.hosted_session_bill_claim() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_identity uuid;
begin
  select identity_id into v_identity from private.subject_refs
  where merchant_id = new.merchant_id and subject_ref = new.result ->> 'facetoken';
  if v_identity is not null then
    perform private.billing_charge_claim(new.merchant_id, new.environment, v_identity, 'session',
      private.public_id('hs_', new.id), coalesce(new.ended_at, now()), false);
  end if;
  return new;
end $$;
comment on function private.hosted_session_bill_claim() is 'Bills the person an approved claim session claimed, in the outcome''s transaction (channel session, never refused).';

create or replace trigger hosted_sessions_bill_claim after update of state on private.hosted_sessions
  for each row when (new.action = 'claim' and new.state = 'completed' and old.state <> 'completed'
                     and (new.result ->> 'approved')::boolean)
  execute function private.hosted_session_bill_claim();
comment on trigger hosted_sessions_bill_claim on private.hosted_sessions is 'A claim session follows the claim rule: billed when it completes approved.';

create or replace trigger billing_ledger_append_only before update or delete on private.billing_ledger
  for each row execute function private.refuse_change();
comment on trigger billing_ledger_append_only on private.billing_ledger is 'Keeps the billing ledger append-only: update and delete raise HA423.';
