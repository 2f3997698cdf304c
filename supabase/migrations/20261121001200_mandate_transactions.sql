-- ============================================================================
-- process-biovital-transaction with mandate_id: the mandate stands in for the
-- live capture. One RPC consumes the mandate (through mandate_consume, so the
-- same row lock and arithmetic) and records the act with its receipt.
-- ============================================================================

alter table private.captures add column mandate_id uuid references private.mandates (id);
alter table private.captures add column consumption_id uuid references private.mandate_consumptions (id);
comment on column private.captures.mandate_id is 'Set when a mandate stood in for the live capture; such a row records no liveness and is never proof for mandate-issue.';
comment on column private.captures.consumption_id is 'The mandate consumption this act used.';
create unique index captures_consumption_idx on private.captures (consumption_id) where consumption_id is not null;

-- mandate_transaction({consume: {...mandate_consume params}, identity_id, capture: {...}, receipt: {...}})
--   -> {decision, transaction: {transaction_id, receipt_id, receipt_code, seal} | null}
-- A replayed consumption answers the act recorded the first time.
create or replace function public.mandate_transaction(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_mandate_id uuid := (p -> 'consume' ->> 'mandate_id')::uuid;
  v_decision jsonb;
  v_consumption uuid;
  c jsonb := p -> 'capture';
  v_recorded jsonb;
begin
  if not exists (select 1 from private.mandates where id = v_mandate_id and granted_by = (p ->> 'identity_id')::uuid) then
    return jsonb_build_object('decision', jsonb_build_object('allowed', false, 'reason', 'mandate_not_found'), 'transaction', null);
  end if;
  v_decision := public.mandate_consume(p -> 'consume');
  if not (v_decision ->> 'allowed')::boolean then
    return jsonb_build_object('decision', v_decision, 'transaction', null);
  end if;
  v_consumption := substr(v_decision ->> 'consumption_id', 5)::uuid;

  if (v_decision ->> 'idempotent_replay')::boolean then
    select jsonb_build_object('transaction_id', cap.id, 'receipt_id', r.id, 'receipt_code', r.code, 'seal', r.seal,
                              'service_hash', cap.service_hash)
    into v_recorded
    from private.captures cap join private.receipts r on r.capture_id = cap.id
    where cap.consumption_id = v_consumption;
    return jsonb_build_object('decision', v_decision, 'transaction', v_recorded);
  end if;

  insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, amount_minor, currency,
    capture_nonce, liveness_passed, liveness_reason, coercion_signal, assurance_level, face_similarity, engine_version,
    scenario, created_at, mandate_id, consumption_id)
  values ((c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid, c ->> 'environment', (p ->> 'identity_id')::uuid, c ->> 'action',
    c ->> 'service_hash', (c ->> 'amount_minor')::bigint, c ->> 'currency', c ->> 'capture_nonce', false, 'mandate_stand_in',
    false, c ->> 'assurance_level', null, c ->> 'engine_version', null, (c ->> 'created_at')::timestamptz, v_mandate_id,
    v_consumption);
  insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
  values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid,
    c ->> 'environment', p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', (c ->> 'created_at')::timestamptz);
  return jsonb_build_object('decision', v_decision, 'transaction', jsonb_build_object(
    'transaction_id', c ->> 'id', 'receipt_id', p -> 'receipt' ->> 'id', 'receipt_code', p -> 'receipt' ->> 'code',
    'seal', p -> 'receipt' ->> 'seal', 'service_hash', c ->> 'service_hash'));
end $$;
comment on function public.mandate_transaction(jsonb) is 'The transaction sink''s mandate path: consume (row-locked, idempotent) and record the act with its receipt, atomically.';
