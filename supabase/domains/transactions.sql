-- ============================================================================
-- Transactions: recording a capture with its receipt, and a mandate standing in for one.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- mandate_transaction({consume: {...mandate_consume params}, identity_id, capture: {...}, receipt: {...},
--   stored_response?: {record: {merchant_id, environment, function_name, key}}})
--   -> {decision, approval: the sink's answer | null when refused}
-- The approval is built here, from the rows, so that under an Idempotency-Key the same transaction stores it
-- as the answer a retry replays (private.idempotency_store_act): the act and its stored answer commit
-- together. A replayed consumption answers the act recorded the first time, with idempotent_replay and the
-- mandate's status now (mandate_status).
create or replace function public.mandate_transaction(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_mandate_id uuid := (p -> 'consume' ->> 'mandate_id')::uuid;
  m private.mandates;
  v_decision jsonb;
  v_consumption uuid;
  c jsonb := p -> 'capture';
  v_act jsonb;
  v_approval jsonb;
begin
  if not exists (select 1 from private.mandates where id = v_mandate_id and granted_by = (p ->> 'identity_id')::uuid) then
    return jsonb_build_object('decision', jsonb_build_object('allowed', false, 'reason', 'mandate_not_found'), 'approval', null);
  end if;
  v_decision := public.mandate_consume(p -> 'consume');
  if not (v_decision ->> 'allowed')::boolean then
    return jsonb_build_object('decision', v_decision, 'approval', null);
  end if;
  v_consumption := substr(v_decision ->> 'consumption_id', 5)::uuid;

  if (v_decision ->> 'idempotent_replay')::boolean then
    select jsonb_build_object('transaction_id', cap.id, 'service_hash', cap.service_hash, 'immutability_seal', r.seal,
                              'receipt_id', r.id, 'receipt_code', r.code)
    into v_act
    from private.captures cap join private.receipts r on r.capture_id = cap.id
    where cap.consumption_id = v_consumption;
  else
    insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, amount_minor, currency,
      capture_nonce, liveness_passed, liveness_reason, coercion_signal, assurance_level, face_similarity, engine_version,
      scenario, created_at, mandate_id, consumption_id, device_binding)
    values ((c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid, c ->> 'environment', (p ->> 'identity_id')::uuid, c ->> 'action',
      c ->> 'service_hash', (c ->> 'amount_minor')::bigint, c ->> 'currency', c ->> 'capture_nonce', false, 'mandate_stand_in',
      false, c ->> 'assurance_level', null, c ->> 'engine_version', null, (c ->> 'created_at')::timestamptz, v_mandate_id,
      v_consumption, 'none');
    insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
    values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid,
      c ->> 'environment', p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', (c ->> 'created_at')::timestamptz);
    v_act := jsonb_build_object('transaction_id', c ->> 'id', 'service_hash', c ->> 'service_hash',
      'immutability_seal', p -> 'receipt' ->> 'seal', 'receipt_id', p -> 'receipt' ->> 'id', 'receipt_code', p -> 'receipt' ->> 'code');
  end if;

  -- Spec 4.4: the approval of an act nobody was present for (assurance mandate) and its mandate block. No device
  -- signed the act (device_binding none); the mandate block says what signed the grant's capture (D-486).
  select * into m from private.mandates where id = v_mandate_id;
  v_approval := jsonb_build_object('success', true, 'status', 'approved', 'assurance_level', 'mandate', 'device_binding', 'none')
    || v_act
    || jsonb_build_object('mandate', jsonb_build_object(
         'mandate_id', private.public_id('mdt_', m.id),
         'consumption_id', v_decision -> 'consumption_id',
         'scope_used', v_decision -> 'scope_used',
         'granted_to', m.granted_to,
         'assurance_level', m.assurance_level,
         'device_binding', coalesce(
           (select g.device_binding from private.captures g where g.granted_mandate_id = m.id), 'none'),
         'idempotent_replay', v_decision -> 'idempotent_replay',
         'remaining', v_decision -> 'remaining',
         'at_limit', v_decision -> 'at_limit')
       || jsonb_strip_nulls(jsonb_build_object(
         'agent_display_name', m.agent_display_name,
         'agent_descriptor', m.agent_descriptor,
         'mandate_status', v_decision -> 'mandate_status')));
  perform private.idempotency_store_act(p -> 'stored_response', 200, v_approval, m.id);
  return jsonb_build_object('decision', v_decision, 'approval', v_approval);
end $$;
comment on function public.mandate_transaction(jsonb) is 'The transaction sink''s mandate path: consume (row-locked, idempotent), record the act with its receipt and store its answer under the Idempotency-Key, atomically.';

-- stand_in_transaction({resolve: {...identity_resolve params}, document_required, consume: {...mandate_consume params},
--   capture: {... without assurance_level}, receipts: {face | face_voice | face_voice_doc: {...}},
--   stored_response?: {record: {...}}})
--   -> {identity: {identity_id, erased, consent_revoked, session_active, has_document} | null,
--       decision: {...} | null, approval: the sink's answer | null}
-- The sink's whole stand-in in one round trip (issue 28, D-690): the person as identity_resolve finds them, the
-- mandate of this merchant, then mandate_transaction. Nothing is written, and decision is null, when the person is
-- unknown, their session revoked, erased, their consent withdrawn, or the act needs a document they lack: the Worker
-- answers those from identity as it always has. The receipt is signed in the Worker, which cannot know the level the
-- mandate was granted at before this call: it sends one per level (the same id and code), and the mandate's is kept.
create or replace function public.stand_in_transaction(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_resolved jsonb := public.identity_resolve(p -> 'resolve');
  v_identity jsonb;
  v_level text;
begin
  if v_resolved is null then
    return jsonb_build_object('identity', null, 'decision', null, 'approval', null);
  end if;
  v_identity := jsonb_build_object('identity_id', v_resolved -> 'identity_id', 'erased', v_resolved -> 'erased',
    'consent_revoked', v_resolved -> 'consent_revoked', 'session_active', v_resolved -> 'session_active',
    'has_document', jsonb_typeof(v_resolved -> 'document') = 'object');
  if (v_resolved ->> 'erased')::boolean or (v_resolved ->> 'consent_revoked')::boolean
     or (v_resolved ->> 'session_active')::boolean is false
     or ((p ->> 'document_required')::boolean and not (v_identity ->> 'has_document')::boolean) then
    return jsonb_build_object('identity', v_identity, 'decision', null, 'approval', null);
  end if;
  select m.assurance_level into v_level from private.mandates m
  where m.id = (p -> 'consume' ->> 'mandate_id')::uuid and m.merchant_id = (p -> 'consume' ->> 'merchant_id')::uuid
    and m.environment = p -> 'consume' ->> 'environment';
  if v_level is null then
    return jsonb_build_object('identity', v_identity,
      'decision', jsonb_build_object('allowed', false, 'reason', 'mandate_not_found'), 'approval', null);
  end if;
  return jsonb_build_object('identity', v_identity) || public.mandate_transaction(jsonb_build_object(
    'identity_id', v_resolved -> 'identity_id',
    'consume', p -> 'consume',
    'capture', (p -> 'capture') || jsonb_build_object('assurance_level', v_level),
    'receipt', p -> 'receipts' -> v_level)
    || case when p ? 'stored_response' then jsonb_build_object('stored_response', p -> 'stored_response') else '{}' end);
end $$;
comment on function public.stand_in_transaction(jsonb) is 'The transaction sink''s mandate path in one round trip: resolve the person, find the mandate, keep the receipt signed for its level, and act as mandate_transaction.';

-- stand_in_request({credential: {...} | tenant: {...}, now, nonce?, window_seconds?, breaker: {deployment, function_name},
--   idempotency?: {function_name, key, request_hash, lease_seconds, retention_seconds, nonce?, window_seconds?},
--   act: {...stand_in_transaction params without stored_response}})
--   -> {caller: {key_id, merchant_id, environment}, breaker: {open, retry_after_seconds},
--       begun?: idempotency_begin's answer, act?: stand_in_transaction's answer}
-- The sink's whole stand-in as one round trip (D-740), in the order the edge's middleware checks a request: the key
-- and, without an Idempotency-Key, the nonce (private.request_authenticate: HA401, HA402); the circuit breaker (an
-- open one answers with nothing acted, the nonce spent as before); under an Idempotency-Key the response store
-- (idempotency_begin: a replay, a mismatch or a request in flight answers with nothing acted; only a request that
-- starts claims the nonce); then stand_in_transaction, storing its approval under the key. The Worker signed the act's
-- receipts for the merchant it learnt the key belongs to (a key never changes merchant); a key of another tenant
-- raises, so nothing is ever recorded under a merchant the caller is not.
create or replace function public.stand_in_request(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_caller jsonb := private.request_authenticate(p);
  v_breaker jsonb;
  v_begun jsonb;
  v_act jsonb := p -> 'act';
begin
  if (v_act -> 'consume' ->> 'merchant_id') is distinct from (v_caller ->> 'merchant_id')
     or (v_act -> 'consume' ->> 'environment') is distinct from (v_caller ->> 'environment') then
    raise exception 'the act was prepared for another tenant than the key''s';
  end if;
  v_breaker := public.circuit_breaker_state(jsonb_build_object(
    'deployment', p -> 'breaker' ->> 'deployment', 'function_name', p -> 'breaker' ->> 'function_name',
    'merchant_id', v_caller ->> 'merchant_id', 'environment', v_caller ->> 'environment', 'now', p ->> 'now'));
  if (v_breaker ->> 'open')::boolean then
    return jsonb_build_object('caller', v_caller, 'breaker', v_breaker);
  end if;
  if p ? 'idempotency' then
    v_begun := public.idempotency_begin(p -> 'idempotency' || jsonb_build_object(
      'merchant_id', v_caller ->> 'merchant_id', 'environment', v_caller ->> 'environment', 'now', p ->> 'now'));
    if v_begun ->> 'outcome' not in ('started', 'ledger') then
      return jsonb_build_object('caller', v_caller, 'breaker', v_breaker, 'begun', v_begun);
    end if;
    if v_begun ->> 'outcome' = 'started' then
      v_act := v_act || jsonb_build_object('stored_response', jsonb_build_object('record', jsonb_build_object(
        'merchant_id', v_caller ->> 'merchant_id', 'environment', v_caller ->> 'environment',
        'function_name', p -> 'idempotency' ->> 'function_name', 'key', p -> 'idempotency' ->> 'key')));
    end if;
  end if;
  return jsonb_build_object('caller', v_caller, 'breaker', v_breaker, 'act', public.stand_in_transaction(v_act))
    || case when v_begun is null then '{}'::jsonb else jsonb_build_object('begun', v_begun) end;
end $$;
comment on function public.stand_in_request(jsonb) is 'The transaction sink''s mandate path in one round trip: authenticate the key and claim the nonce, read the circuit breaker, begin the Idempotency-Key, and act as stand_in_transaction.';

-- capture_record({capture: {..., purpose, grant_terms_digest?, refusal_code?, device_id?, device_binding?}, receipt: {...} | null, document: {...} | null,
--   baseline: {...} | null, stored_response?: {record: {merchant_id, environment, function_name, key}, status, body}}) -> {capture_id}
-- A refused act (the face is another person's or below the gate, liveness failed, coercion, no document) is recorded
-- too, with its refusal_code: its capture is used up like an approved one's.
-- As before, except that a document is one the server verified (passive authentication), in either environment,
-- recorded with the capture that carried it. A document (its signed LDSSecurityObject, which a copy of the chip shares) belongs to one
-- identity: another identity presenting it raises HA438 (detail: reason document_already_bound), and nothing is written.
create or replace function public.capture_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  c jsonb := p -> 'capture';
  d jsonb := p -> 'document';
begin
  -- The capture's act (see private.capture_nonces): after at most an identification by the same merchant.
  perform private.capture_nonce_claim(c ->> 'environment', c ->> 'capture_nonce', (c ->> 'merchant_id')::uuid, 'act',
    (c ->> 'created_at')::timestamptz);
  begin
    insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, amount_minor, currency,
      capture_nonce, liveness_passed, liveness_reason, coercion_signal, assurance_level, face_similarity, engine_version,
      scenario, created_at, purpose, grant_terms_digest, refusal_code, device_id, device_binding)
    values ((c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid, c ->> 'environment', (c ->> 'identity_id')::uuid, c ->> 'action',
      c ->> 'service_hash', (c ->> 'amount_minor')::bigint, c ->> 'currency', c ->> 'capture_nonce',
      (c ->> 'liveness_passed')::boolean, c ->> 'liveness_reason', (c ->> 'coercion_signal')::boolean, c ->> 'assurance_level',
      (c ->> 'face_similarity')::real, c ->> 'engine_version', c ->> 'scenario', (c ->> 'created_at')::timestamptz,
      c ->> 'purpose', c ->> 'grant_terms_digest', c ->> 'refusal_code', (c ->> 'device_id')::uuid, c ->> 'device_binding');
  exception when unique_violation then
    raise exception 'capture nonce already used' using errcode = 'HA411';
  end;

  if jsonb_typeof(d) = 'object' then
    perform private.identity_document_record((c ->> 'identity_id')::uuid, (c ->> 'id')::uuid, d, (c ->> 'created_at')::timestamptz);
  end if;

  if jsonb_typeof(p -> 'baseline') = 'object' then
    update private.identities set baseline = p -> 'baseline' where id = (c ->> 'identity_id')::uuid;
  end if;

  if jsonb_typeof(p -> 'receipt') = 'object' then
    insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
    values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid,
      c ->> 'environment', p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', (c ->> 'created_at')::timestamptz);
  end if;

  perform private.idempotency_store_act(p -> 'stored_response', (p -> 'stored_response' ->> 'status')::int,
    p -> 'stored_response' -> 'body', null);
  return jsonb_build_object('capture_id', c ->> 'id');
end $$;
comment on function public.capture_record(jsonb) is 'Claims the capture''s act and writes the capture with its receipt (and any document it carried that passed passive authentication) and the answer stored under its Idempotency-Key atomically; a reused capture raises HA411, a document on record for another identity HA438.';
