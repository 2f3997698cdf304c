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
