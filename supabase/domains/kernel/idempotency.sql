-- ============================================================================
-- Idempotency-Key records: begin, finish, and storing an act's response in the act's own transaction.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- idempotency_begin({merchant_id, environment, function_name, key, request_hash, now, lease_seconds, retention_seconds,
--   nonce?, window_seconds?}) -> {outcome: 'started' | 'replay' | 'ledger' | 'in_flight' | 'mismatch', status?, body?,
--   running_seconds?, lease_left_seconds?}
-- The record is looked at before the replay nonce: a finished request with the same body is replayed and a
-- different body is a mismatch, whatever the nonce (spec 4.4 rule 7: an exact retry is answered, not refused
-- for its nonce); only a request that starts claims the nonce (HA402 rolls the start back). A request still
-- running answers in_flight with how long it has run and how long its lease has left. A finished request that
-- consumed a mandate (its record names the mandate: the sink's stand-in, a /v1 check that was allowed) is not
-- replayed from here: 'ledger' sends it to the mandate's ledger, which holds its consumption under the same key
-- for good and is the one place a replay of a consumption is answered (mandate_consume: the consumption with
-- idempotent_replay and the mandate's status now; after revocation, the refusal mandate_revoked). Like a replay,
-- it claims no nonce and leaves the record as it is.
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
  if v_row.mandate_id is not null then
    return jsonb_build_object('outcome', 'ledger');
  end if;
  return jsonb_build_object('outcome', 'replay', 'status', v_row.response_status, 'body', v_row.response_body);
end $$;
comment on function public.idempotency_begin(jsonb) is
  'Starts a request under an Idempotency-Key and only then claims its replay nonce, or reports replay / ledger (a consumption: the mandate''s ledger answers its replay) / in flight (how long it ran, how long its lease has left) / body mismatch.';

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

-- idempotency_finish({merchant_id, environment, function_name, key, status, body, mandate_id?}) -> {stored}
-- For answers no act stored (refused before anything was written, invalid input …), and for a consumption whose
-- RPC stores no answer itself (a /v1 check: mandate_id names the mandate it consumed, so that its replays go to the
-- ledger). A 5xx response is never stored: the record is dropped so a retry executes again.
create or replace function public.idempotency_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
begin
  if (p ->> 'status')::int >= 500 then
    delete from private.idempotency_keys
    where merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
      and function_name = p ->> 'function_name' and idempotency_key = p ->> 'key' and state = 'in_flight';
    return jsonb_build_object('stored', false);
  end if;
  return jsonb_build_object('stored', private.idempotency_store(p, (p ->> 'status')::int, p -> 'body', (p ->> 'mandate_id')::uuid));
end $$;
comment on function public.idempotency_finish(jsonb) is 'Stores the response of a finished request (non-5xx) for replay.';
