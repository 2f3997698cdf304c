-- ============================================================================
-- Request authentication, replay guard and idempotency store
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Replay guard: a nonce is accepted once per merchant and environment while
-- its timestamp window lasts. The primary key makes the claim atomic.
-- ----------------------------------------------------------------------------
create table private.request_nonces (
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  nonce text not null check (length(nonce) between 8 and 128),
  seen_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (merchant_id, environment, nonce)
);
comment on table private.request_nonces is 'x-service-nonce values already used, kept while a replay inside the timestamp window is possible.';
comment on column private.request_nonces.merchant_id is 'Merchant whose key sent the nonce; nonces are unique per merchant.';
comment on column private.request_nonces.environment is 'test or live, from the key prefix.';
comment on column private.request_nonces.nonce is 'The x-service-nonce header value.';
comment on column private.request_nonces.seen_at is 'Server time of first use.';
comment on column private.request_nonces.expires_at is 'After this instant the timestamp window has closed, so the row may be replaced or purged.';
create index request_nonces_expiry_idx on private.request_nonces (expires_at);

-- ----------------------------------------------------------------------------
-- Request authentication: the caller's key and the replay nonce in one call.
-- Nothing about a key is cached, so a revoked key fails the next request.
-- Errors: HA401 (the key is unknown or revoked) -> INVALID_API_KEY,
--         HA402 (the nonce was used inside its window) -> NONCE_REUSED.
-- ----------------------------------------------------------------------------
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

-- ----------------------------------------------------------------------------
-- Idempotency store: one row per (merchant, environment, function, key).
-- ----------------------------------------------------------------------------
create table private.idempotency_keys (
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  function_name text not null,
  idempotency_key text not null check (length(idempotency_key) between 1 and 255),
  request_hash text not null,
  state text not null check (state in ('in_flight', 'done')),
  response_status int,
  response_body jsonb,
  created_at timestamptz not null,
  lease_expires_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (merchant_id, environment, function_name, idempotency_key)
);
comment on table private.idempotency_keys is 'Idempotency-Key records: the request hash and, once finished, the response to replay.';
comment on column private.idempotency_keys.merchant_id is 'Merchant whose key sent the request.';
comment on column private.idempotency_keys.environment is 'test or live.';
comment on column private.idempotency_keys.function_name is 'Function the key belongs to; the same key on two functions is two records.';
comment on column private.idempotency_keys.idempotency_key is 'The Idempotency-Key header value.';
comment on column private.idempotency_keys.request_hash is 'SHA-256 of the raw request body; a different body under the same key is refused.';
comment on column private.idempotency_keys.state is 'in_flight while the first request runs, done once its response is stored.';
comment on column private.idempotency_keys.response_status is 'HTTP status of the stored response (never 5xx: those are not stored).';
comment on column private.idempotency_keys.response_body is 'JSON body of the stored response.';
comment on column private.idempotency_keys.created_at is 'Server time of the first request.';
comment on column private.idempotency_keys.lease_expires_at is 'An in-flight record whose lease passed belongs to a request that died; a retry may take it over.';
comment on column private.idempotency_keys.expires_at is 'Retention end (24 hours); afterwards the key is forgotten and the request executes again.';
create index idempotency_keys_expiry_idx on private.idempotency_keys (expires_at);

-- idempotency_begin({merchant_id, environment, function_name, key, request_hash, now, lease_seconds, retention_seconds})
--   -> {outcome: 'started' | 'replay' | 'in_flight' | 'mismatch', status?, body?}
create or replace function public.idempotency_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.idempotency_keys;
begin
  insert into private.idempotency_keys as k (merchant_id, environment, function_name, idempotency_key, request_hash,
    state, created_at, lease_expires_at, expires_at)
  values ((p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'function_name', p ->> 'key', p ->> 'request_hash',
    'in_flight', v_now, v_now + make_interval(secs => (p ->> 'lease_seconds')::int),
    v_now + make_interval(secs => (p ->> 'retention_seconds')::int))
  on conflict (merchant_id, environment, function_name, idempotency_key) do update
    set request_hash = excluded.request_hash, state = 'in_flight', response_status = null, response_body = null,
        created_at = excluded.created_at, lease_expires_at = excluded.lease_expires_at, expires_at = excluded.expires_at
    where k.expires_at <= v_now
       or (k.state = 'in_flight' and k.lease_expires_at <= v_now and k.request_hash = excluded.request_hash)
  returning * into v_row;
  if found then
    return jsonb_build_object('outcome', 'started');
  end if;

  select * into v_row from private.idempotency_keys
  where merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
    and function_name = p ->> 'function_name' and idempotency_key = p ->> 'key';
  if v_row.request_hash <> p ->> 'request_hash' then
    return jsonb_build_object('outcome', 'mismatch');
  end if;
  if v_row.state = 'in_flight' then
    return jsonb_build_object('outcome', 'in_flight');
  end if;
  return jsonb_build_object('outcome', 'replay', 'status', v_row.response_status, 'body', v_row.response_body);
end $$;
comment on function public.idempotency_begin(jsonb) is 'Starts a request under an Idempotency-Key, or reports replay / in flight / body mismatch.';

-- idempotency_finish({merchant_id, environment, function_name, key, status, body}) -> {stored}
-- A 5xx response is never stored: the record is dropped so a retry executes again.
create or replace function public.idempotency_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
begin
  if (p ->> 'status')::int >= 500 then
    delete from private.idempotency_keys
    where merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
      and function_name = p ->> 'function_name' and idempotency_key = p ->> 'key' and state = 'in_flight';
    return jsonb_build_object('stored', false);
  end if;
  update private.idempotency_keys
  set state = 'done', response_status = (p ->> 'status')::int, response_body = p -> 'body'
  where merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
    and function_name = p ->> 'function_name' and idempotency_key = p ->> 'key' and state = 'in_flight';
  return jsonb_build_object('stored', found);
end $$;
comment on function public.idempotency_finish(jsonb) is 'Stores the response of a finished request (non-5xx) for replay.';
