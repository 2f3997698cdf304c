-- ============================================================================
-- The request path in one round trip
-- Authenticating the caller's key, claiming the replay guard's nonce and, on
-- mandate-check and mandate-consume, the decision itself run in one SQL call,
-- so a decision costs the edge one round trip. Nothing about a key is cached:
-- a revoked key fails the next request.
-- Errors: HA401 (the key is unknown or revoked) → INVALID_API_KEY,
--         HA402 (the nonce was used inside its window) → NONCE_REUSED.
-- ============================================================================

-- private.request_authenticate({credential: {key_hash, kind, environment}} | {tenant: {merchant_id, environment}},
--   now, nonce?, window_seconds?) -> {key_id, merchant_id, environment}
-- With a credential, the key must be live (HA401); with a tenant (a caller already authenticated at
-- the edge, such as a first-party user), only the nonce is claimed. A nonce is claimed atomically
-- on the primary key and may be reused only once its window has passed (HA402 otherwise).
create or replace function private.request_authenticate(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_key_id uuid;
  v_merchant_id uuid;
  v_environment text;
  v_claimed boolean;
begin
  if p ? 'credential' then
    select k.id, k.merchant_id, k.environment into v_key_id, v_merchant_id, v_environment
    from private.api_keys k
    where k.key_hash = p -> 'credential' ->> 'key_hash'
      and k.kind = p -> 'credential' ->> 'kind'
      and k.environment = p -> 'credential' ->> 'environment'
      and k.revoked_at is null;
    if not found then
      raise exception 'the API key is unknown or revoked' using errcode = 'HA401';
    end if;
  else
    v_merchant_id := (p -> 'tenant' ->> 'merchant_id')::uuid;
    v_environment := p -> 'tenant' ->> 'environment';
  end if;

  if p ? 'nonce' then
    insert into private.request_nonces as n (merchant_id, environment, nonce, seen_at, expires_at)
    values (v_merchant_id, v_environment, p ->> 'nonce', v_now,
            v_now + make_interval(secs => 2 * (p ->> 'window_seconds')::int))
    on conflict (merchant_id, environment, nonce) do update
      set seen_at = excluded.seen_at, expires_at = excluded.expires_at
      where n.expires_at <= v_now
    returning true into v_claimed;
    if v_claimed is null then
      raise exception 'x-service-nonce was already used' using errcode = 'HA402';
    end if;
  end if;

  return jsonb_build_object('key_id', v_key_id, 'merchant_id', v_merchant_id, 'environment', v_environment);
end $$;
comment on function private.request_authenticate(jsonb) is
  'Authenticates a key (HA401) or takes an edge-authenticated tenant, and claims the replay nonce (HA402), in the caller''s transaction.';

-- request_authenticate(p) -> {key_id, merchant_id, environment}: the above as the edge's own call.
create or replace function public.request_authenticate(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  select private.request_authenticate(p)
$$;
comment on function public.request_authenticate(jsonb) is
  'Key authentication and the replay guard''s nonce claim in one round trip.';

-- private.tenant_decision(p, caller) -> the decision parameters of p scoped to the authenticated caller.
create or replace function private.tenant_decision(p jsonb, p_caller jsonb) returns jsonb
language sql immutable set search_path = '' as $$
  select (p -> 'decision') || jsonb_build_object(
    'merchant_id', p_caller ->> 'merchant_id',
    'environment', p_caller ->> 'environment',
    'now', p ->> 'now')
$$;
comment on function private.tenant_decision(jsonb, jsonb) is
  'The decision parameters of a request, scoped to the merchant and environment its key authenticated.';

-- mandate_check_request({credential, now, nonce, window_seconds, decision: {mandate_id, scope, amount?, currency?,
--   action_ref?, context?}}) -> the decision of mandate_check
create or replace function public.mandate_check_request(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  select public.mandate_check(private.tenant_decision(p, private.request_authenticate(p)))
$$;
comment on function public.mandate_check_request(jsonb) is
  'mandate-check in one round trip: authenticate the key, claim the nonce, decide (advisory, never debits).';

-- mandate_consume_request({credential, now, nonce, window_seconds, decision: {…, idempotency_key, request_hash}})
--   -> the decision of mandate_consume
create or replace function public.mandate_consume_request(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  select public.mandate_consume(private.tenant_decision(p, private.request_authenticate(p)))
$$;
comment on function public.mandate_consume_request(jsonb) is
  'mandate-consume in one round trip: authenticate the key, claim the nonce, then the row-locked consume.';
