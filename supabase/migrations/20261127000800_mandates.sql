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
