-- ============================================================================
-- Billing (resource API 1; docs/resource-api.md "Billing"): the billing
-- ledger, append-only, written in the transaction of the act it bills, and
-- each merchant's monthly allowance of billed claims.
--
-- The seven rules, and where each one holds:
--   1. a claim is billed once per person for life: one ledger row per merchant,
--      environment and person (the unique key), whatever the channel;
--   2. recognition is free: no recognition writes here;
--   3. a call that does not complete is never billed: the row is written by the
--      act's own transaction, so a refusal or a failure rolls it back;
--   4. reads are never billed: no read writes here;
--   5. an abandoned hosted session is never billed: only a completed claim
--      calls private.billing_charge_claim;
--   6. a recognise session is free: as 2;
--   7. a claim session follows the claim rule: its completion calls the same
--      private.billing_charge_claim, channel 'session'.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- The ledger
-- ----------------------------------------------------------------------------
create table private.billing_ledger (
  id uuid primary key default gen_random_uuid(),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  act text not null check (act in ('claim')),
  identity_id uuid not null references private.identities (id),
  channel text not null check (channel in ('api', 'session')),
  reference text not null check (length(reference) between 1 and 128),
  billed_at timestamptz not null,
  unique (merchant_id, environment, act, identity_id)
);
comment on table private.billing_ledger is 'Billed acts, append-only, each written in the transaction of the act it bills: a claim once per merchant, environment and person for life.';
comment on column private.billing_ledger.id is 'Ledger row id.';
comment on column private.billing_ledger.merchant_id is 'The merchant billed.';
comment on column private.billing_ledger.environment is 'test (sandbox: counted against the sandbox allowance, never invoiced) or live.';
comment on column private.billing_ledger.act is 'What was billed: claim (the only billable act).';
comment on column private.billing_ledger.identity_id is 'The person claimed; unique per merchant and environment, so a person is billed once for life.';
comment on column private.billing_ledger.channel is 'api (POST /v1/identity/claims) or session (a hosted claim session that completed).';
comment on column private.billing_ledger.reference is 'The act''s own id: the claim''s capture id, or the hosted session''s id.';
comment on column private.billing_ledger.billed_at is 'Server time of the act; the month it falls in is the month billed.';
create index billing_ledger_month_idx on private.billing_ledger (merchant_id, environment, billed_at);

create trigger billing_ledger_append_only before update or delete on private.billing_ledger
  for each row execute function private.refuse_change();
comment on trigger billing_ledger_append_only on private.billing_ledger is 'Keeps the billing ledger append-only: update and delete raise HA423.';

-- ----------------------------------------------------------------------------
-- Allowances
-- ----------------------------------------------------------------------------
create table private.billing_allowances (
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  monthly_claims bigint not null check (monthly_claims between 0 and 1000000000),
  updated_at timestamptz not null,
  primary key (merchant_id, environment)
);
comment on table private.billing_allowances is 'Billed claims a merchant may make per calendar month (UTC) in one environment; no row: the default (private.billing_default_allowance). Set by the operator (CLI allowance set); also the row claims lock.';
comment on column private.billing_allowances.merchant_id is 'The merchant.';
comment on column private.billing_allowances.environment is 'test or live: each environment has its own allowance.';
comment on column private.billing_allowances.monthly_claims is 'Billed claims allowed per calendar month (UTC); the next billable claim beyond it is 402 allowance_exhausted. 0 stops billable claims.';
comment on column private.billing_allowances.updated_at is 'When the row was written (created at the default, or set by the operator).';

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
