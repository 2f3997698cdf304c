-- ============================================================================
-- Merchant owners (issue 13): the people who may authorise AI agents to act for
-- a merchant. An owner is an enrolled identity of the merchant, named by the
-- pseudonym the merchant holds for it (subject_ref), so the operator never
-- handles the identity id. An identity belongs to one environment, and so does
-- its ownership: an owner enrolled with sandbox keys authorises sandbox agents.
-- ============================================================================

create table private.merchant_owners (
  merchant_id uuid not null references private.merchants (id),
  identity_id uuid not null references private.identities (id),
  environment text not null check (environment in ('test', 'live')),
  subject_ref text not null,
  added_at timestamptz not null,
  primary key (merchant_id, identity_id),
  foreign key (merchant_id, subject_ref) references private.subject_refs (merchant_id, subject_ref)
);
comment on table private.merchant_owners is 'People who own a merchant: they alone may authorise an agent (an OAuth client) to act for it.';
comment on column private.merchant_owners.merchant_id is 'The merchant owned.';
comment on column private.merchant_owners.identity_id is 'The owner: an identity enrolled with this merchant.';
comment on column private.merchant_owners.environment is 'The identity''s environment (test or live): agents it authorises act in that environment only.';
comment on column private.merchant_owners.subject_ref is 'The merchant''s pseudonym for the owner, by which the operator names it.';
comment on column private.merchant_owners.added_at is 'When the identity became an owner.';
create index merchant_owners_identity_idx on private.merchant_owners (identity_id);

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
