-- ============================================================================
-- Aliases: availability, timed reservation, release, claim by a person.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Helpers
-- ----------------------------------------------------------------------------

-- Whether the request's merchant holds this row's live reservation by its claim token: the one rule
-- release and claim both apply (inlined by the planner; the callers keep the key lookup explicit).
-- Lookup by hash: the hash of a 256-bit random token gives nothing to time.
create or replace function private.alias_reservation_held(a private.aliases, p jsonb) returns boolean
language sql stable set search_path = '' as $$
  select a.state = 'reserved'
     and a.merchant_id = (p ->> 'merchant_id')::uuid
     and a.claim_token_hash = p ->> 'claim_token_hash'
     and a.expires_at > (p ->> 'now')::timestamptz
$$;
comment on function private.alias_reservation_held(private.aliases, jsonb) is 'Whether the request''s merchant holds the row''s live reservation by its claim token (the rule of alias_release and alias_claim).';

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
  delete from private.aliases
  where environment = p ->> 'environment'
    and alias = p ->> 'alias'
    and private.alias_reservation_held(aliases, p)
  returning alias into v_alias;
  if not found then
    raise exception 'claim token does not hold this alias' using errcode = 'HA002';
  end if;
  return jsonb_build_object('alias', v_alias, 'released', true);
end $$;
comment on function public.alias_release(jsonb) is 'Frees an alias early; only the reserving merchant holding the claim token can, while the reservation is live.';

-- alias_claim({environment, merchant_id, alias, claim_token_hash, subject_ref, now})
--   -> {alias, claimed_at} | HA002 when this merchant's token does not hold a live reservation of the alias
--   | HA404 when subject_ref is no person this merchant knows in this environment
-- Redeems the claim token: the reservation becomes a claim by the person (no expiry), the token's hash is
-- cleared so it redeems once. The person is looked up first, so an unknown one spends no token.
create or replace function public.alias_claim(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_identity uuid;
  v_row private.aliases;
begin
  select s.identity_id into v_identity
  from private.subject_refs s
  join private.identities i on i.id = s.identity_id
  where s.merchant_id = (p ->> 'merchant_id')::uuid and s.subject_ref = p ->> 'subject_ref'
    and i.environment = p ->> 'environment';
  if v_identity is null then
    raise exception 'unknown subject_ref' using errcode = 'HA404';
  end if;
  update private.aliases
  set state = 'claimed', identity_id = v_identity, claimed_at = (p ->> 'now')::timestamptz,
      claim_token_hash = null, expires_at = null
  where environment = p ->> 'environment'
    and alias = p ->> 'alias'
    and private.alias_reservation_held(aliases, p)
  returning * into v_row;
  if not found then
    raise exception 'claim token does not hold this alias' using errcode = 'HA002';
  end if;
  return jsonb_build_object('alias', v_row.alias, 'claimed_at', v_row.claimed_at);
end $$;
comment on function public.alias_claim(jsonb) is 'Attaches a reserved alias to a person this merchant knows (subject_ref), redeeming the claim token once; the alias is then held with no expiry.';
