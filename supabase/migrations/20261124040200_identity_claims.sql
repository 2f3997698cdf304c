-- ============================================================================
-- Claims and attributes on the resource API (POST /v1/identity/claims and
-- /v1/identity/attributes; docs/resource-api.md). A claim is an enrolment of
-- a person with the merchant, recorded as a capture with its receipt and
-- billed (private.billing_charge_claim), in one transaction. An attribute
-- answer uses its capture as an act. Recognitions write nothing.
-- ============================================================================

comment on table private.captures is
  'What an act recorded at its instant: process-biovital-transaction''s acts, and the claims of POST /v1/identity/claims (ACTION_SIGNUP). The proof mandate-issue accepts for five minutes.';

-- identity_claim({...identity_enroll's parameters, capture: {...}, receipt: {id, code, jws, seal},
--   stored_response?: {record, status, body}}) -> {identity_id, billed}
-- Under the enrolment lock of the environment: a person who holds an active consent with this merchant is
-- already claimed (HA441; the edge answers the facetoken it holds). Otherwise the enrolment (identity_enroll:
-- the capture's act, identity, template, consent, subject_ref, session), the capture with its receipt, the
-- bill (HA440 rolls everything back when the month's allowance is used up) and, under an Idempotency-Key, the
-- answer, all in this one transaction: a claim that does not complete writes nothing and bills nothing.
create or replace function public.identity_claim(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  c jsonb := p -> 'capture';
  v_env text := p ->> 'environment';
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_identity uuid := (p ->> 'identity_id')::uuid;
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_billed boolean;
begin
  -- identity_enroll takes the same lock (re-entrant): a racing claim of this person committed before this check.
  perform pg_advisory_xact_lock(hashtext('enroll:' || v_env));
  if (p ->> 'existing')::boolean and exists (
    select 1 from private.consents k join private.identities i on i.id = k.identity_id
    where k.identity_id = v_identity and k.merchant_id = v_merchant and k.revoked_at is null and i.erased_at is null
  ) then
    raise exception 'this person is already claimed by this merchant' using errcode = 'HA441';
  end if;

  perform public.identity_enroll(p);

  insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, capture_nonce,
    liveness_passed, coercion_signal, assurance_level, engine_version, created_at)
  values ((c ->> 'id')::uuid, v_merchant, v_env, v_identity, 'ACTION_SIGNUP', c ->> 'service_hash', p ->> 'capture_nonce',
    true, (c ->> 'coercion_signal')::boolean, c ->> 'assurance_level', c ->> 'engine_version', v_now);
  insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
  values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, v_merchant, v_env,
    p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', v_now);

  v_billed := private.billing_charge_claim(v_merchant, v_env, v_identity, 'api', c ->> 'id', v_now);

  perform private.idempotency_store_act(p -> 'stored_response', (p -> 'stored_response' ->> 'status')::int,
    p -> 'stored_response' -> 'body', null);
  return jsonb_build_object('identity_id', v_identity, 'billed', v_billed);
end $$;
comment on function public.identity_claim(jsonb) is
  'Claims a person for a merchant: enrolment, capture and receipt, the bill and the stored answer in one transaction; HA441 when already claimed, HA440 when the allowance is used up.';

-- identity_attribute_record({environment, merchant_id, now, capture_nonce, stored_response?}) -> {}
-- The attribute answer's act: its capture is used (one act per capture, private.capture_nonces; HA411 when
-- used before) and, under an Idempotency-Key, the answer is stored in the same transaction.
create or replace function public.identity_attribute_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
begin
  perform private.capture_nonce_claim(p ->> 'environment', p ->> 'capture_nonce', (p ->> 'merchant_id')::uuid, 'act',
    (p ->> 'now')::timestamptz);
  perform private.idempotency_store_act(p -> 'stored_response', (p -> 'stored_response' ->> 'status')::int,
    p -> 'stored_response' -> 'body', null);
  return '{}'::jsonb;
end $$;
comment on function public.identity_attribute_record(jsonb) is
  'Uses an attribute answer''s capture as its act (HA411 when used before) and stores the answer under its Idempotency-Key.';
