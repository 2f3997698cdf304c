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
-- With a credential, the key must be live (HA401); with a tenant (a caller already authenticated at
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
      and k.revoked_at is null;
    if not found then
      raise exception 'the API key is unknown or revoked' using errcode = 'HA401';
    end if;
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

-- request_authenticate(p) -> {key_id, merchant_id, environment}: the above as the edge's own call.
create or replace function public.request_authenticate(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  select private.request_authenticate(p)
$$;
comment on function public.request_authenticate(jsonb) is
  'Key authentication and the replay guard''s nonce claim in one round trip.';

-- ----------------------------------------------------------------------------
-- Idempotency store: one row per (merchant, environment, function, key).
-- A request under a key takes its row in flight (idempotency_begin); the RPC that performs the
-- request's act completes it with the response in the act's own transaction
-- (private.idempotency_store, from capture_record and mandate_transaction), so an act that
-- committed always has its answer stored; any other answer is stored afterwards
-- (idempotency_finish).
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
  mandate_id uuid,
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
comment on column private.idempotency_keys.mandate_id is 'The mandate that stood in for the stored act (private.mandates; null for any other response): a replay says its status now.';
comment on column private.idempotency_keys.created_at is 'Server time of the first request.';
comment on column private.idempotency_keys.lease_expires_at is 'An in-flight record whose lease passed belongs to a request that died; a retry may take it over.';
comment on column private.idempotency_keys.expires_at is 'Retention end (24 hours); afterwards the key is forgotten and the request executes again.';
create index idempotency_keys_expiry_idx on private.idempotency_keys (expires_at);

-- idempotency_begin({merchant_id, environment, function_name, key, request_hash, now, lease_seconds, retention_seconds,
--   nonce?, window_seconds?}) -> {outcome: 'started' | 'replay' | 'in_flight' | 'mismatch', status?, body?,
--   running_seconds?, lease_left_seconds?}
-- The record is looked at before the replay nonce: a finished request with the same body is replayed and a
-- different body is a mismatch, whatever the nonce (spec 4.4 rule 7: an exact retry is answered, not refused
-- for its nonce); only a request that starts claims the nonce (HA402 rolls the start back). A request still
-- running answers in_flight with how long it has run and how long its lease has left. A replayed act that a mandate stood in for
-- says so and says the mandate's status now (mandate.idempotent_replay, mandate.mandate_status), so that a
-- replay after revocation never reads as permission to act again. (private.mandates and
-- private.mandate_effective_status come from the mandates migration; PL/pgSQL resolves them when called.)
create or replace function public.idempotency_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.idempotency_keys;
  v_body jsonb;
begin
  insert into private.idempotency_keys as k (merchant_id, environment, function_name, idempotency_key, request_hash,
    state, created_at, lease_expires_at, expires_at)
  values ((p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'function_name', p ->> 'key', p ->> 'request_hash',
    'in_flight', v_now, v_now + make_interval(secs => (p ->> 'lease_seconds')::int),
    v_now + make_interval(secs => (p ->> 'retention_seconds')::int))
  on conflict (merchant_id, environment, function_name, idempotency_key) do update
    set request_hash = excluded.request_hash, state = 'in_flight', response_status = null, response_body = null,
        mandate_id = null, created_at = excluded.created_at, lease_expires_at = excluded.lease_expires_at,
        expires_at = excluded.expires_at
    where k.expires_at <= v_now
       or (k.state = 'in_flight' and k.lease_expires_at <= v_now and k.request_hash = excluded.request_hash)
  returning * into v_row;
  if found then
    if p ? 'nonce' then
      perform private.request_nonce_claim((p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'nonce', v_now,
        (p ->> 'window_seconds')::int);
    end if;
    return jsonb_build_object('outcome', 'started');
  end if;

  select * into v_row from private.idempotency_keys
  where merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
    and function_name = p ->> 'function_name' and idempotency_key = p ->> 'key';
  if v_row.request_hash <> p ->> 'request_hash' then
    return jsonb_build_object('outcome', 'mismatch');
  end if;
  if v_row.state = 'in_flight' then
    return jsonb_build_object('outcome', 'in_flight',
      'running_seconds', extract(epoch from v_now - v_row.created_at),
      'lease_left_seconds', extract(epoch from v_row.lease_expires_at - v_now));
  end if;
  v_body := v_row.response_body;
  if v_row.mandate_id is not null then
    v_body := v_body || jsonb_build_object('mandate', (v_body -> 'mandate') || jsonb_build_object(
      'idempotent_replay', true,
      'mandate_status', (select private.mandate_effective_status(m, v_now) from private.mandates m where m.id = v_row.mandate_id)));
  end if;
  return jsonb_build_object('outcome', 'replay', 'status', v_row.response_status, 'body', v_body);
end $$;
comment on function public.idempotency_begin(jsonb) is
  'Starts a request under an Idempotency-Key and only then claims its replay nonce, or reports replay (a stand-in''s with the mandate''s status now) / in flight (how long it ran, how long its lease has left) / body mismatch.';

-- private.idempotency_store({merchant_id, environment, function_name, key}, status, body, mandate_id) -> stored
-- Completes the in-flight record of a key with the response to replay; false when the key has no record in
-- flight (another request finished or took it over after this one's lease ran out).
create or replace function private.idempotency_store(p_record jsonb, p_status int, p_body jsonb, p_mandate_id uuid)
returns boolean
language plpgsql security definer set search_path = '' as $$
begin
  update private.idempotency_keys
  set state = 'done', response_status = p_status, response_body = p_body, mandate_id = p_mandate_id
  where merchant_id = (p_record ->> 'merchant_id')::uuid and environment = p_record ->> 'environment'
    and function_name = p_record ->> 'function_name' and idempotency_key = p_record ->> 'key' and state = 'in_flight';
  return found;
end $$;
comment on function private.idempotency_store(jsonb, int, jsonb, uuid) is
  'Stores the response of an in-flight Idempotency-Key record; the act''s RPCs call it in the act''s own transaction.';

-- private.idempotency_store_act(stored_response {record}, status, body, mandate_id): the same from the RPC that
-- performs an act, which must hold the key's record: otherwise HA412 (IDEMPOTENCY_IN_FLIGHT) rolls the act back, so
-- at most one act commits per key.
create or replace function private.idempotency_store_act(p_stored_response jsonb, p_status int, p_body jsonb, p_mandate_id uuid)
returns void
language plpgsql security definer set search_path = '' as $$
begin
  if jsonb_typeof(p_stored_response) = 'object'
     and not private.idempotency_store(p_stored_response -> 'record', p_status, p_body, p_mandate_id) then
    raise exception 'another request holds or finished this Idempotency-Key' using errcode = 'HA412',
      detail = jsonb_build_object('retry_after_seconds', 1)::text;
  end if;
end $$;
comment on function private.idempotency_store_act(jsonb, int, jsonb, uuid) is
  'Stores an act''s response under its Idempotency-Key in the act''s transaction (no-op without a key), or raises HA412.';

-- idempotency_finish({merchant_id, environment, function_name, key, status, body}) -> {stored}
-- For answers no act stored (refused before anything was written, invalid input …). A 5xx response is never
-- stored: the record is dropped so a retry executes again.
create or replace function public.idempotency_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
begin
  if (p ->> 'status')::int >= 500 then
    delete from private.idempotency_keys
    where merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
      and function_name = p ->> 'function_name' and idempotency_key = p ->> 'key' and state = 'in_flight';
    return jsonb_build_object('stored', false);
  end if;
  return jsonb_build_object('stored', private.idempotency_store(p, (p ->> 'status')::int, p -> 'body', null));
end $$;
comment on function public.idempotency_finish(jsonb) is 'Stores the response of a finished request (non-5xx) for replay.';
