-- ============================================================================
-- Merchants: creation, API keys, owners (the people who may act for a merchant).
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

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

-- merchant_owner_add({merchant_id, subject_ref, now}) -> {owner, already_owner}
-- HA404 when the merchant is unknown or holds no such pseudonym; HA409 when the identity was erased.
create or replace function public.merchant_owner_add(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_ref private.subject_refs;
  v_identity private.identities;
  v_owner private.merchant_owners;
begin
  select * into v_ref from private.subject_refs
  where merchant_id = (p ->> 'merchant_id')::uuid and subject_ref = p ->> 'subject_ref';
  if not found then
    raise exception 'no identity of this merchant has that subject_ref' using errcode = 'HA404';
  end if;
  select * into v_identity from private.identities where id = v_ref.identity_id;
  if v_identity.erased_at is not null then
    raise exception 'the identity was erased' using errcode = 'HA409';
  end if;
  insert into private.merchant_owners (merchant_id, identity_id, environment, subject_ref, added_at)
  values (v_ref.merchant_id, v_ref.identity_id, v_identity.environment, v_ref.subject_ref, (p ->> 'now')::timestamptz)
  on conflict do nothing
  returning * into v_owner;
  if v_owner is null then
    select * into v_owner from private.merchant_owners where merchant_id = v_ref.merchant_id and identity_id = v_ref.identity_id;
    return jsonb_build_object('owner', private.merchant_owner_view(v_owner), 'already_owner', true);
  end if;
  return jsonb_build_object('owner', private.merchant_owner_view(v_owner), 'already_owner', false);
end $$;
comment on function public.merchant_owner_add(jsonb) is 'Makes an enrolled identity of the merchant, named by its subject_ref, an owner; repeats are harmless.';

-- private.merchant_owner_view(owner) -> {merchant_id, subject_ref, environment, added_at}: what the operator sees.
create or replace function private.merchant_owner_view(o private.merchant_owners) returns jsonb
language sql immutable set search_path = '' as $$
  select jsonb_build_object('merchant_id', o.merchant_id, 'subject_ref', o.subject_ref, 'environment', o.environment, 'added_at', o.added_at)
$$;
comment on function private.merchant_owner_view(private.merchant_owners) is 'An owner as the CLI shows it: by pseudonym, never by identity id.';

-- merchant_owner_list({merchant_id}) -> {owners: [...]} (HA404 for an unknown merchant)
create or replace function public.merchant_owner_list(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
begin
  if not exists (select 1 from private.merchants where id = (p ->> 'merchant_id')::uuid) then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  return jsonb_build_object('owners', coalesce((
    select jsonb_agg(private.merchant_owner_view(o) order by o.added_at, o.subject_ref)
    from private.merchant_owners o where o.merchant_id = (p ->> 'merchant_id')::uuid), '[]'::jsonb));
end $$;
comment on function public.merchant_owner_list(jsonb) is 'The owners of a merchant, oldest first.';

-- merchant_owner_remove({merchant_id, subject_ref}) -> {merchant_id, subject_ref, removed}
create or replace function public.merchant_owner_remove(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_removed boolean;
begin
  if not exists (select 1 from private.merchants where id = (p ->> 'merchant_id')::uuid) then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  with gone as (
    delete from private.merchant_owners
    where merchant_id = (p ->> 'merchant_id')::uuid and subject_ref = p ->> 'subject_ref'
    returning 1
  )
  select exists (select 1 from gone) into v_removed;
  return jsonb_build_object('merchant_id', p ->> 'merchant_id', 'subject_ref', p ->> 'subject_ref', 'removed', v_removed);
end $$;
comment on function public.merchant_owner_remove(jsonb) is 'Removes an owner; the agents it authorised lose the merchant at their next call.';

-- merchant_owned({identity_id, environment}) -> {merchants: [{merchant_id, name}]}
-- The merchants an identity owns in an environment: the authorization endpoint asks which one the
-- owner authorises an agent for, and every agent call asks again, so removing an owner stops its agents.
create or replace function public.merchant_owned(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('merchants', coalesce(jsonb_agg(jsonb_build_object('merchant_id', m.id, 'name', m.name) order by m.name, m.id), '[]'::jsonb))
  from private.merchant_owners o
  join private.merchants m on m.id = o.merchant_id
  join private.identities i on i.id = o.identity_id
  where o.identity_id = (p ->> 'identity_id')::uuid and o.environment = p ->> 'environment' and i.erased_at is null
$$;
comment on function public.merchant_owned(jsonb) is 'The merchants an identity owns in one environment (none once erased).';

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
