-- ============================================================================
-- Aliases: public handles of people (spec 2.10, 3.4, 4.17)
-- One row per (environment, alias) holds it, either reserved by a merchant's
-- key for a while or claimed by an identity for good. The primary key is the
-- whole concurrency story: two live holders of one alias cannot exist, and an
-- expired reservation is replaced inside the same INSERT ... ON CONFLICT.
-- Expiry needs nothing running: every read compares expires_at with the
-- request clock the edge passes in as `now`.
-- Uniqueness is per environment across all merchants: an alias names a person,
-- not a merchant's customer; sandbox (test) and production (live) are apart.
-- ============================================================================


-- ----------------------------------------------------------------------------
-- Aliases
-- ----------------------------------------------------------------------------
create table private.aliases (
  environment text not null check (environment in ('test', 'live')),
  alias text not null check (alias ~ '^[a-z][a-z0-9_]{2,29}$' and alias !~ '__' and alias !~ '_$'),
  state text not null check (state in ('reserved', 'claimed')),
  merchant_id uuid references private.merchants (id),
  claim_token_hash text check (claim_token_hash ~ '^[0-9a-f]{64}$'),
  reserved_at timestamptz,
  expires_at timestamptz,
  identity_id uuid,
  claimed_at timestamptz,
  primary key (environment, alias),
  constraint aliases_reserved_shape check (
    state <> 'reserved'
    or (merchant_id is not null and claim_token_hash is not null and reserved_at is not null
        and expires_at > reserved_at and identity_id is null and claimed_at is null)
  ),
  constraint aliases_claimed_shape check (
    state <> 'claimed' or (identity_id is not null and claimed_at is not null and expires_at is null)
  )
);
comment on table private.aliases is 'Who holds each alias of an environment: a timed reservation or a claim by an identity. A row absent, or reserved with expires_at not after the request clock, means free.';
comment on column private.aliases.environment is 'test or live, from the key prefix; aliases are unique per environment across all merchants.';
comment on column private.aliases.alias is 'The normalised alias; the database re-checks the format rule (reserved words are the edge''s).';
comment on column private.aliases.state is 'reserved (held until expires_at by the merchant whose key reserved it) or claimed (attached to identity_id, no expiry).';
comment on column private.aliases.merchant_id is 'Merchant whose key made the reservation; only it can release. Kept on claim as the merchant it was claimed through.';
comment on column private.aliases.claim_token_hash is 'Lowercase hex SHA-256 of the claim_token returned by reserve; the token itself is never stored.';
comment on column private.aliases.reserved_at is 'Request clock when the current reservation was made.';
comment on column private.aliases.expires_at is 'End of the reservation (request clock + ttl_seconds); null once claimed.';
comment on column private.aliases.identity_id is 'Opaque reference to the identity the alias is attached to. No RPC claims an alias yet: the one that does sets it, and adds the foreign key to private.identities.';
comment on column private.aliases.claimed_at is 'When the alias was attached to identity_id; null while only reserved.';


-- ----------------------------------------------------------------------------
-- RPCs
-- ----------------------------------------------------------------------------

-- alias_check({environment, now, aliases: [..]}) -> {available: {<alias>: boolean}}
create or replace function public.alias_check(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('available', coalesce(jsonb_object_agg(c.alias, a.alias is null), '{}'::jsonb))
  from (select distinct value as alias from jsonb_array_elements_text(coalesce(p -> 'aliases', '[]'::jsonb))) c
  left join private.aliases a
    on a.environment = p ->> 'environment'
   and a.alias = c.alias
   and (a.state = 'claimed' or a.expires_at > (p ->> 'now')::timestamptz)
$$;
comment on function public.alias_check(jsonb) is 'Availability of several aliases of one environment at the request clock, in one round trip (the alias and its suggestion candidates).';

-- alias_reserve({environment, merchant_id, alias, claim_token_hash, ttl_seconds, now})
--   -> {alias, expires_at} | HA001 when a live reservation or a claim holds the alias
create or replace function public.alias_reserve(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_ttl integer := (p ->> 'ttl_seconds')::integer;
  v_row private.aliases;
begin
  if v_now is null or v_ttl is null or v_ttl not between 1 and 900 then
    raise exception 'now and ttl_seconds (1 to 900) are required' using errcode = '22023';
  end if;
  -- The primary key decides the race: concurrent inserts of one alias wait on each other and all
  -- but one fall into ON CONFLICT, whose WHERE (re-evaluated on the latest row version) replaces
  -- only an expired reservation. Zero rows back means someone holds it.
  insert into private.aliases as a (environment, alias, state, merchant_id, claim_token_hash, reserved_at, expires_at)
  values (p ->> 'environment', p ->> 'alias', 'reserved', (p ->> 'merchant_id')::uuid, p ->> 'claim_token_hash',
          v_now, v_now + make_interval(secs => v_ttl))
  on conflict (environment, alias) do update
    set merchant_id = excluded.merchant_id,
        claim_token_hash = excluded.claim_token_hash,
        reserved_at = excluded.reserved_at,
        expires_at = excluded.expires_at
    where a.state = 'reserved' and a.expires_at <= v_now
  returning * into v_row;
  if not found then
    raise exception 'alias taken' using errcode = 'HA001';
  end if;
  return jsonb_build_object('alias', v_row.alias, 'expires_at', v_row.expires_at);
end $$;
comment on function public.alias_reserve(jsonb) is 'Reserves an alias for ttl_seconds atomically; an expired reservation is replaced, a live one or a claim raises HA001 (ALIAS_TAKEN).';

-- alias_release({environment, merchant_id, alias, claim_token_hash, now})
--   -> {alias, released: true} | HA002 when this merchant's token does not hold a live reservation
create or replace function public.alias_release(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_alias text;
begin
  -- Lookup by hash: the hash of a 256-bit random token gives nothing to time.
  delete from private.aliases
  where environment = p ->> 'environment'
    and alias = p ->> 'alias'
    and state = 'reserved'
    and merchant_id = (p ->> 'merchant_id')::uuid
    and claim_token_hash = p ->> 'claim_token_hash'
    and expires_at > (p ->> 'now')::timestamptz
  returning alias into v_alias;
  if not found then
    raise exception 'claim token does not hold this alias' using errcode = 'HA002';
  end if;
  return jsonb_build_object('alias', v_alias, 'released', true);
end $$;
comment on function public.alias_release(jsonb) is 'Frees an alias early; only the reserving merchant holding the claim token can, while the reservation is live.';
