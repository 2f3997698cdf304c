-- ============================================================================
-- Platform: the private schema, the grant rule every migration relies on,
-- merchants and their API keys, and the per-function circuit breaker.
-- Tables live in `private`; callers reach them only through the RPCs in
-- `public` (security definer, fixed search_path). Every RPC takes one jsonb
-- argument and returns jsonb, so the edge calls each in exactly one round trip.
-- ============================================================================

create schema if not exists private;
comment on schema private is 'Tables and helpers of the service; reachable only through the RPCs in public.';

-- ----------------------------------------------------------------------------
-- Grants: the one rule, stated here once for everything any migration creates
-- ----------------------------------------------------------------------------
-- Only the owner (the role that applies the migrations, which the service connects as) reaches
-- anything: no schema, table, sequence or function of the service is granted to PUBLIC or to an
-- API-facing role (Supabase's anon, authenticated). Where Supabase's service_role exists, it may
-- execute the RPCs in `public`, and nothing else.
-- The rule is written as default privileges of the migrating role, before anything is created,
-- so no other migration writes GRANT, REVOKE or ALTER DEFAULT PRIVILEGES: a function created
-- later is executable by the owner only (plus service_role in `public`), a table or sequence is
-- the owner's only. tests/sql/grants.test.ts checks every function, table, sequence and view in
-- the service's schemas against this rule, and that no other migration writes a grant.
revoke all on schema private from public;

-- Functions are executable by PUBLIC unless the creator's default privileges say otherwise. This
-- statement names no schema on purpose: per-schema default privileges can only add to the global
-- ones, never take back what they grant.
alter default privileges revoke execute on functions from public;

-- Supabase grants its API roles everything created in `public` through per-schema default
-- privileges of the migrating role; take those back, and give service_role execute on the RPCs.
do $$
declare
  v_role text;
begin
  foreach v_role in array array['anon', 'authenticated', 'service_role'] loop
    if exists (select 1 from pg_roles where rolname = v_role) then
      execute format('alter default privileges in schema public revoke all on functions from %I', v_role);
      execute format('alter default privileges in schema public revoke all on tables from %I', v_role);
      execute format('alter default privileges in schema public revoke all on sequences from %I', v_role);
    end if;
  end loop;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    execute 'alter default privileges in schema public grant execute on functions to service_role';
  end if;
end $$;

-- ----------------------------------------------------------------------------
-- Merchants
-- ----------------------------------------------------------------------------
create table private.merchants (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(btrim(name)) between 1 and 200),
  created_at timestamptz not null default now()
);
comment on table private.merchants is 'A business integrating the service; owns keys, themes, mandates issued through it.';
comment on column private.merchants.id is 'The merchant_id shown to the merchant.';
comment on column private.merchants.name is 'Display name given at creation.';
comment on column private.merchants.created_at is 'When the merchant was created.';

-- ----------------------------------------------------------------------------
-- API keys
-- ----------------------------------------------------------------------------
create table private.api_keys (
  id uuid primary key default gen_random_uuid(),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  kind text not null check (kind in ('publishable', 'secret')),
  key_hash text not null unique check (key_hash ~ '^[0-9a-f]{64}$'),
  key_hint text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
comment on table private.api_keys is 'Merchant API keys. Only the SHA-256 of a key is stored; the key is shown once.';
comment on column private.api_keys.id is 'Key identifier used by the CLI to revoke a key.';
comment on column private.api_keys.merchant_id is 'The merchant the key acts for.';
comment on column private.api_keys.environment is 'test (sandbox) or live; fixed by the key prefix.';
comment on column private.api_keys.kind is 'publishable (pk_, browser) or secret (sk_, server); fixed by the key prefix.';
comment on column private.api_keys.key_hash is 'Lowercase hex SHA-256 of the full key.';
comment on column private.api_keys.key_hint is 'Prefix and last four characters, to recognise a key in listings.';
comment on column private.api_keys.created_at is 'When the key was minted.';
comment on column private.api_keys.revoked_at is 'When the key was revoked; a revoked key authenticates nothing.';
create index api_keys_merchant_idx on private.api_keys (merchant_id);

-- ----------------------------------------------------------------------------
-- Circuit breaker (503 SLO_BREACH_PAUSED)
-- ----------------------------------------------------------------------------
create table private.circuit_breakers (
  deployment text not null,
  function_name text not null,
  merchant_id uuid not null,
  environment text not null check (environment in ('test', 'live')),
  window_started_at timestamptz not null,
  breaches int not null default 0,
  open_until timestamptz,
  primary key (deployment, function_name, merchant_id, environment)
);
comment on table private.circuit_breakers is 'SLO breaches per deployment, function, merchant and environment; enough breaches inside a window pause the function for that merchant and environment only.';
comment on column private.circuit_breakers.deployment is 'DEPLOYMENT_ID of the workers: a canary''s failures never pause the stable deployment.';
comment on column private.circuit_breakers.function_name is 'The guarded function.';
comment on column private.circuit_breakers.merchant_id is 'The merchant whose requests failed: one tenant''s traffic never pauses another''s (no foreign key: the breaker is bookkeeping, kept out of the merchants'' lock path).';
comment on column private.circuit_breakers.environment is 'test or live: a failing sandbox never pauses production.';
comment on column private.circuit_breakers.window_started_at is 'Start of the current counting window.';
comment on column private.circuit_breakers.breaches is 'The service''s own failures counted in the window: a 5xx that is not the caller''s doing, or a response over the latency objective; never a 4xx.';
comment on column private.circuit_breakers.open_until is 'While in the future the function answers 503 SLO_BREACH_PAUSED to this merchant and environment; afterwards it is half-open.';
