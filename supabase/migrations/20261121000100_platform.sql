-- ============================================================================
-- Platform: private schema, merchants and their API keys
-- Tables live in `private`; callers reach them only through the RPCs below
-- (security definer, fixed search_path). Every RPC takes one jsonb argument
-- and returns jsonb, so the edge calls each in exactly one round trip.
-- ============================================================================

create schema if not exists private;
revoke all on schema private from public;
comment on schema private is 'Tables of the service; reachable only through the RPCs in public.';


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

-- merchant_create({name, keys: [{environment, kind, key_hash, key_hint}]}) -> {merchant_id, keys: [{key_id, ...}]}
create or replace function public.merchant_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_merchant_id uuid;
  v_keys jsonb;
begin
  insert into private.merchants (name) values (p ->> 'name') returning id into v_merchant_id;
  with inserted as (
    insert into private.api_keys (merchant_id, environment, kind, key_hash, key_hint)
    select v_merchant_id, k ->> 'environment', k ->> 'kind', k ->> 'key_hash', k ->> 'key_hint'
    from jsonb_array_elements(coalesce(p -> 'keys', '[]'::jsonb)) k
    returning id, environment, kind
  )
  select coalesce(jsonb_agg(jsonb_build_object('key_id', id, 'environment', environment, 'kind', kind)), '[]'::jsonb)
  into v_keys from inserted;
  return jsonb_build_object('merchant_id', v_merchant_id, 'keys', v_keys);
end $$;
comment on function public.merchant_create(jsonb) is 'Creates a merchant and its initial keys (hashes only) in one transaction.';

-- api_key_create({merchant_id, environment, kind, key_hash, key_hint}) -> {key_id} | null when the merchant is unknown
create or replace function public.api_key_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_id uuid;
begin
  if not exists (select 1 from private.merchants where id = (p ->> 'merchant_id')::uuid) then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  insert into private.api_keys (merchant_id, environment, kind, key_hash, key_hint)
  values ((p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'kind', p ->> 'key_hash', p ->> 'key_hint')
  returning id into v_id;
  return jsonb_build_object('key_id', v_id);
end $$;
comment on function public.api_key_create(jsonb) is 'Adds a key to an existing merchant.';

-- api_key_revoke({key_hash} | {key_id}) -> {key_id, revoked_at, already_revoked}
create or replace function public.api_key_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_key private.api_keys;
begin
  select * into v_key from private.api_keys
  where (p ? 'key_hash' and key_hash = p ->> 'key_hash') or (p ? 'key_id' and id = (p ->> 'key_id')::uuid)
  for update;
  if not found then
    raise exception 'unknown key' using errcode = 'HA404';
  end if;
  if v_key.revoked_at is not null then
    return jsonb_build_object('key_id', v_key.id, 'revoked_at', v_key.revoked_at, 'already_revoked', true);
  end if;
  update private.api_keys set revoked_at = now() where id = v_key.id returning * into v_key;
  return jsonb_build_object('key_id', v_key.id, 'revoked_at', v_key.revoked_at, 'already_revoked', false);
end $$;
comment on function public.api_key_revoke(jsonb) is 'Revokes a key by hash or id; repeats are harmless.';

-- api_key_authenticate({key_hash, kind, environment}) -> {key_id, merchant_id, key_hash} | null
create or replace function public.api_key_authenticate(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('key_id', k.id, 'merchant_id', k.merchant_id, 'key_hash', k.key_hash)
  from private.api_keys k
  where k.key_hash = p ->> 'key_hash'
    and k.kind = p ->> 'kind'
    and k.environment = p ->> 'environment'
    and k.revoked_at is null
$$;
comment on function public.api_key_authenticate(jsonb) is 'Resolves a live key by its hash; null when unknown or revoked.';
