-- ============================================================================
-- Authenticating a request: the API key, the x-service-nonce replay guard, the /v1 resource API's variant.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- private.request_nonce_claim(merchant_id, environment, nonce, now, window_seconds): claims a replay nonce
-- atomically on the primary key; it may be reused only once its window has passed (HA402 otherwise). Called
-- by request_authenticate and, for a request under an Idempotency-Key, by idempotency_begin once it is
-- known not to be a replay.
create or replace function private.request_nonce_claim(p_merchant_id uuid, p_environment text, p_nonce text, p_now timestamptz,
  p_window_seconds int) returns void
language plpgsql security definer set search_path = '' as $$
begin
  insert into private.request_nonces as n (merchant_id, environment, nonce, seen_at, expires_at)
  values (p_merchant_id, p_environment, p_nonce, p_now, p_now + make_interval(secs => 2 * p_window_seconds))
  on conflict (merchant_id, environment, nonce) do update
    set seen_at = excluded.seen_at, expires_at = excluded.expires_at
    where n.expires_at <= p_now;
  if not found then
    raise exception 'x-service-nonce was already used' using errcode = 'HA402';
  end if;
end $$;
comment on function private.request_nonce_claim(uuid, text, text, timestamptz, int) is
  'Claims an x-service-nonce for a merchant and environment, or raises HA402 when it was used inside its window.';

-- ----------------------------------------------------------------------------
-- Request authentication: the caller's key and the replay nonce in one call.
-- Nothing about a key is cached, so a revoked key fails the next request.
-- Errors: HA401 (the key is unknown or revoked) -> INVALID_API_KEY,
--         HA402 (the nonce was used inside its window) -> NONCE_REUSED.
-- ----------------------------------------------------------------------------
-- private.request_authenticate({credential: {key_hash, kind, environment}} | {tenant: {merchant_id, environment}},
--   now, nonce?, window_seconds?) -> {key_id, merchant_id, environment}
-- With a credential, the key must be live: not revoked, not past the end a roll gave it, and holding
-- the api scope unless the credential says any_scope (the /v1 surface, which checks scopes itself) (HA401); with a tenant (a caller already authenticated at
-- the edge, such as a first-party user), only the nonce is claimed (private.request_nonce_claim).
create or replace function private.request_authenticate(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_key_id uuid;
  v_merchant_id uuid;
  v_environment text;
begin
  if p ? 'credential' then
    select k.id, k.merchant_id, k.environment into v_key_id, v_merchant_id, v_environment
    from private.api_keys k
    where k.key_hash = p -> 'credential' ->> 'key_hash'
      and k.kind = p -> 'credential' ->> 'kind'
      and k.environment = p -> 'credential' ->> 'environment'
      and k.revoked_at is null
      and (k.expires_at is null or k.expires_at > v_now)
      -- a key without the api scope (a management key) acts nowhere but where its caller checks the scope itself
      and ('api' = any(k.scopes) or (p -> 'credential' ->> 'any_scope')::boolean is true);
    if not found then
      raise exception 'the API key is unknown or revoked' using errcode = 'HA401';
    end if;
    -- When the key was last used, at most once a minute, and never waiting on a request that writes it now.
    update private.api_keys set last_used_at = v_now
    where id = (select id from private.api_keys
                where id = v_key_id and (last_used_at is null or last_used_at < v_now - interval '1 minute')
                for update skip locked);
  else
    v_merchant_id := (p -> 'tenant' ->> 'merchant_id')::uuid;
    v_environment := p -> 'tenant' ->> 'environment';
  end if;

  if p ? 'nonce' then
    perform private.request_nonce_claim(v_merchant_id, v_environment, p ->> 'nonce', v_now, (p ->> 'window_seconds')::int);
  end if;

  return jsonb_build_object('key_id', v_key_id, 'merchant_id', v_merchant_id, 'environment', v_environment);
end $$;
comment on function private.request_authenticate(jsonb) is
  'Authenticates a key (HA401) or takes an edge-authenticated tenant, and claims the replay nonce (HA402), in the caller''s transaction.';

-- request_authenticate(p + breaker?: {deployment, function_name}) -> {key_id, merchant_id, environment, breaker?}: the above
-- as the edge's own call; with `breaker`, also the circuit breaker's state for the merchant and environment just
-- authenticated (circuit_breaker_state), so a guarded function spends no round trip of its own on it (D-506).
create or replace function public.request_authenticate(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with authenticated as materialized (select private.request_authenticate(p) as caller)
  select a.caller || case when p ? 'breaker' then jsonb_build_object('breaker', public.circuit_breaker_state(jsonb_build_object(
      'deployment', p -> 'breaker' ->> 'deployment', 'function_name', p -> 'breaker' ->> 'function_name',
      'merchant_id', a.caller ->> 'merchant_id', 'environment', a.caller ->> 'environment', 'now', p ->> 'now')))
    else '{}'::jsonb end
  from authenticated a
$$;
comment on function public.request_authenticate(jsonb) is
  'Key authentication and the replay guard''s nonce claim in one round trip, with the circuit breaker''s state when asked.';

-- bearer_key_authenticate({credential, now}) -> {key_id, merchant_id, environment, api_version, scopes}
-- The key (HA401 when unknown or revoked), the merchant's pinned version and the key's scopes in one round trip.
create or replace function public.bearer_key_authenticate(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with authenticated as materialized (select private.request_authenticate(p) as caller)
  select a.caller || jsonb_build_object('api_version', m.api_version, 'scopes', to_jsonb(k.scopes))
  from authenticated a
  join private.merchants m on m.id = (a.caller ->> 'merchant_id')::uuid
  join private.api_keys k on k.id = (a.caller ->> 'key_id')::uuid
$$;
comment on function public.bearer_key_authenticate(jsonb) is
  'Authenticates a resource API key and answers its merchant''s pinned version, in one round trip.';
