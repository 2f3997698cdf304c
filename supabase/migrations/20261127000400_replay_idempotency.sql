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
